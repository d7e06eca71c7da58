// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The run kinds of the tier runner (private to the harness library). Each fills `r` with its
// cases; run_tier settles the verdict afterwards.

#include <string>

#include "mmaemu/harness/tier_result.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::harness::detail {

void run_ctest_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);
void run_replay_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);
void run_truth_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);
void run_command_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);
void run_package_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);
void run_device_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);
void run_mutants_kind(const TierSpec& t, const RunOptions& opt, TierResult& r);

// The replay engine's filter for a --shard.
CaseFilter filter_of(const Shard& shard);

// Books one replayed set (replay.hpp): its line in r.sets (the engine's counts and one outcome
// letter per selected unit: a case, a gemm_call call), its results in r.totals, and the ones
// that did not pass in r.cases (ids "<recording>:<case id>").
void book_set(const SetResult& s, const std::string& recording, const std::string& sha256,
              TierResult& r);

// A folder under $TMPDIR that is removed with its contents when this object goes, unless
// keep() was called.
class WorkDir {
public:
  explicit WorkDir(const std::string& hint);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// The last `lines` lines of `text`, joined by " | " (for one-line reasons).
std::string tail_lines(const std::string& text, std::size_t lines);

} // namespace mmaemu::harness::detail
