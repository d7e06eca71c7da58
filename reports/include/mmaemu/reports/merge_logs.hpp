// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Merging the logs of one tier run spread over shards (--shard k/N on CI matrix jobs or Slurm
// array tasks) into the log of the whole run.

#include <cstddef>
#include <map>
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

struct MergeOptions {
  // 0: the logs are shards 1/N..N/N with N the number of logs, each exactly once (anything
  // else is a MergeError). N > 0: the logs are what the shards of an N-shard run left, as a
  // job engine leaves them: a shard may have no log (it never ran, was cancelled or timed
  // out) and a shard may have several (a re-queued task writes its log again under a new
  // name). Of several logs of one shard the one that finished last is taken and the others are
  // listed under "superseded"; each missing shard is named under "missing_shards", becomes one
  // UNSUPPORTED case "<tier>/shard<k>of<N>" (counted in the totals when the tier has no sets)
  // and the letter U for each of its cases of every set (counted as UNSUPPORTED cases), and
  // makes the verdict at least UNSUPPORTED: never PASS.
  std::size_t count = 0;
  // The engine's word on a missing shard (index -> text: "cancelled", "timed out", ...).
  std::map<std::size_t, std::string> why_missing;
};

// Requires shards of the same tier, tier file, mmaemu version, git commit and inputs. The
// result has "shard": null and "merged_from" (one entry per shard); "cases" are concatenated
// and sorted by id, "sets" re-interleave their per-case outcome letters and sum their counts,
// "totals" are summed, "inputs" united, durations summed (and the longest shard as "wall_s"),
// and the verdict is the worst of the shards' (ERROR, FAIL, UNSUPPORTED, PASS; a shard that
// selected no case does not count). The result is unsigned; publish_log signs it. Throws
// MergeError naming the shard.
nlohmann::json merge_shard_logs(const std::vector<ShardLog>& shards, const MergeOptions& opt = {});

// The shard a log file's name says it holds: "<stem>-shard<k>of<N>.json", or with the suffix
// "-<m>" that a second log of the same name gets ("T1-shard3of4-2.json"). False for any other
// name; `stem`, `index` and `count` are set when true.
bool parse_shard_log_name(const std::string& file_name, std::string& stem, std::size_t& index,
                          std::size_t& count);

} // namespace mmaemu::reports
