// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The path fields of a tier file (run.result, run.catalogue, run.consumer, needs.files): a
// tier file names files inside its own tree (the source tree or install prefix it came with)
// or inside the run's output folder, never elsewhere. A tier folder is trusted code (kind
// "command" runs programs), but its path fields still must not make a run read /etc/passwd
// into a log by a typo or a crafted file (docs/testing.md, "Tier files").

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::harness {

// Where a path field may point.
enum class TierPathRoot {
  tree,       // relative to the tier's tree (the source tree or install prefix)
  out_or_tree // run.result: "{out}/<relative>" (the run's output folder) or <relative>
};

inline constexpr std::size_t kMaxTierPathBytes = 4096;

// Why `value` is not an acceptable path field, or nothing: it must be non-empty, at most
// kMaxTierPathBytes, free of control bytes, relative (no leading '/'), without a ".."
// component, and, for out_or_tree, "{out}" only as its whole first component.
std::optional<std::string> tier_path_problem(std::string_view value, TierPathRoot root);

// The file a checked field names: `tree`/value, or `out`/rest for "{out}/rest". Throws
// std::invalid_argument if the field is not acceptable, or if the file (following symlinks
// that exist) lies outside its root.
std::filesystem::path resolve_tier_path(std::string_view value, const std::filesystem::path& tree,
                                        const std::filesystem::path& out);

// Whether `p` (made absolute and normal, symlinks followed where they exist) is `root` or lies
// under it.
bool path_within(const std::filesystem::path& p, const std::filesystem::path& root);

} // namespace mmaemu::harness
