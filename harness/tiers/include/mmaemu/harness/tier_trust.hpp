// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A tier folder is trusted code: a tier of kind "command" runs the programs it names, a ctest
// or package tier runs the build it points at. The tiers found beside mmaemu (the source tree
// of a build, the install prefix) are trusted; a `--tiers DIR` elsewhere needs `--trust-tiers`
// (docs/testing.md, "Tier files").

#include "mmaemu/harness/tier_layout.hpp"

namespace mmaemu::harness {

// Whether `layout.tiers_dir` lies inside its source tree or install prefix (symlinks
// followed).
bool tiers_dir_is_home(const Layout& layout);

// Throws TierFileError naming the folder when it is not home (tiers_dir_is_home) and
// `trusted` is false.
void check_tiers_trusted(const Layout& layout, bool trusted);

} // namespace mmaemu::harness
