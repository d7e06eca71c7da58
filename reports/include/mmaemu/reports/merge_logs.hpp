// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Merging the logs of one tier run spread over shards (--shard k/N on CI matrix jobs or Slurm
// array tasks) into the log of the whole run.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace mmaemu::reports {

class MergeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct ShardLog {
  std::string name;   // file name, for messages and "merged_from"
  std::string sha256; // of the file's bytes
  nlohmann::json log;
};

// Requires shards 1/N..N/N of the same tier, tier file, mmaemu version, git commit and inputs,
// each exactly once. The result has "shard": null and "merged_from" (one entry per shard);
// "cases" are concatenated and sorted by id, "sets" re-interleave their per-case outcome
// letters, "totals" are summed, "inputs" united, durations summed (and the longest shard as
// "wall_s"), and the verdict is the worst of the shards' (ERROR, FAIL, UNSUPPORTED, PASS).
// The result is unsigned; publish_log signs it. Throws MergeError naming the shard.
nlohmann::json merge_shard_logs(const std::vector<ShardLog>& shards);

} // namespace mmaemu::reports
