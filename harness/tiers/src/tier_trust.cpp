// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_trust.hpp"

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::harness {

bool tiers_dir_is_home(const Layout& layout) {
  if (layout.source_dir && path_within(layout.tiers_dir, *layout.source_dir))
    return true;
  return layout.prefix && path_within(layout.tiers_dir, *layout.prefix);
}

void check_tiers_trusted(const Layout& layout, bool trusted) {
  if (trusted || tiers_dir_is_home(layout))
    return;
  throw TierFileError("--tiers: " + support::printable(layout.tiers_dir.string(), 256) +
                      " is outside the source tree and the install prefix; a tier folder is "
                      "code (kind command runs programs): give --trust-tiers to run it");
}

} // namespace mmaemu::harness
