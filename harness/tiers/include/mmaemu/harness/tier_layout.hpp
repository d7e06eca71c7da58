// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Where the tier runner finds its tier files, recordings, trusted keys and build tree, and
// where logs go. An installed `mmaemu` (<prefix>/bin/mmaemu beside <prefix>/share/mmaemu/)
// uses only its prefix; a build-tree binary (<build>/harness/mmaemu) uses the source tree
// that <build>/CMakeCache.txt names.

#include <filesystem>
#include <optional>
#include <string>

namespace mmaemu::harness {

struct Layout {
  std::filesystem::path exe;                   // this program
  std::string origin;                          // "installed", "build tree", "working directory"
  std::optional<std::filesystem::path> prefix; // installed: the install prefix
  std::optional<std::filesystem::path> build_dir;
  std::optional<std::filesystem::path> source_dir;
  std::filesystem::path tiers_dir;      // tiers/*.json
  std::filesystem::path recordings_dir; // committed recordings (T1)
  std::filesystem::path keys_dir;       // trusted *.pub keys
  std::filesystem::path log_root;       // <log_root>/<date>/<tier>.json: where a run writes
  // The committed logs, <source>/docs/validation_logs (empty without a source tree): only
  // `tier run --publish` and `report publish` write there, signed, on purpose.
  std::filesystem::path publish_root;
};

// Command-line choices that replace what discovery finds; empty = not given.
struct LayoutOverrides {
  std::filesystem::path tiers_dir, build_dir, recordings_dir, keys_dir, log_root;
};

// The running program's path (/proc/self/exe).
std::filesystem::path self_exe();

// The source tree a CMake build folder was configured from (CMAKE_HOME_DIRECTORY in its
// CMakeCache.txt), if it is one.
std::optional<std::filesystem::path> source_dir_of_build(const std::filesystem::path& build_dir);

// Discovers the layout from `exe` (default: self_exe()). The log root is, in order:
// overrides.log_root, $MMAEMU_LOG_DIR, <build>/validation_logs (a build tree, or --build-dir),
// ./validation_logs (installed or unknown). It is never the committed docs/validation_logs/ by
// default: a run a user makes to look must not leave an unsigned log where `make test` checks
// that every log verifies (publish_root is for that).
Layout discover_layout(const LayoutOverrides& overrides = {},
                       const std::filesystem::path& exe = {});

} // namespace mmaemu::harness
