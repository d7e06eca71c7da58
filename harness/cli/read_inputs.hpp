// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What a command reads, so that none of its outputs may replace it (docs/api.md,
// "Conventions": one rule for every output path). check_output_option adds standard_inputs()
// to the inputs each subcommand names; a subcommand whose folders are overridden on its command
// line (--tiers, --recordings, --keys, --catalogue, --log-dir) adds their files itself.

#include <filesystem>
#include <vector>

namespace mmaemu::cli {

// The files under `dir` (recursively, symlinks to files included, at most 100000; none if it
// is not a folder).
std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir);

// What any subcommand may read besides its arguments: $MMAEMU_SIGNING_KEY, the tier files, the
// trusted keys, the committed recordings and logs and the mutant catalogue found beside
// mmaemu. Computed once per process.
const std::vector<std::filesystem::path>& standard_inputs();

// `a` followed by `b`.
std::vector<std::filesystem::path> joined(std::vector<std::filesystem::path> a,
                                          const std::vector<std::filesystem::path>& b);

} // namespace mmaemu::cli
