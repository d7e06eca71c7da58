// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// T2: the replay of the full hardware ground truth ($MMAEMU_TRUTH_DIR: mmaemu-recording/1
// files and a manifest.json), read-only. See docs/testing.md, "T2".

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "mmaemu/harness/tier_result.hpp"
#include "mmaemu/harness/tier_runner.hpp"

namespace mmaemu::harness {

// Size and modification time of every file under a folder (".git" excluded), by relative path.
struct TreeEntry {
  std::uintmax_t bytes = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const TreeEntry&) const = default;
};
using TreeSnapshot = std::map<std::string, TreeEntry>;

TreeSnapshot snapshot_tree(const std::filesystem::path& dir);

// The differences, one line each ("changed: x.h5 (size 10 -> 12)", "added: y", "removed: z").
std::vector<std::string> diff_snapshots(const TreeSnapshot& before, const TreeSnapshot& after);

// Replays the truth at `truth_dir` into `result`; writes replay.json and delta.txt (and
// delta.md) into `out_dir`, which must not be inside the truth. Verdict PASS only if every
// in-scope case matches, zero_sign = nan_payload = 0, every expected error is reproduced by
// its exact class, no recording is unreadable, and the truth is unchanged (listing, sizes,
// mtimes, manifest sha256).
void run_truth_replay(const std::filesystem::path& truth_dir, const std::filesystem::path& out_dir,
                      const RunOptions& opt, TierResult& result);

} // namespace mmaemu::harness
