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

// Mismatch counts of one replayed set, by the comparator's class.
struct SetCounts {
  std::size_t value = 0, zero_sign = 0, nan_payload = 0;
};

// Replays the cases of `batch` that `shard` selects, adds its line to r.sets (one outcome
// letter per selected case: P, F, E, U, X) and its non-passing cases to r.cases (ids
// "<recording>:<case id>"), and counts every case in r.totals. A batch with the attribute
// expect_error = <class> passes where the emulator refuses it with exactly that class; one
// with scope = out is not run (U, listed). Returns the mismatch classes.
SetCounts replay_set(const recordings::MmaBatch& batch, const std::string& recording,
                     const std::string& sha256, const Shard& shard, TierResult& r);

// Every set of a recording (mma, gemm, gemm_call) through replay_set and the GEMM replays of
// replay.hpp; gemm_call sets have one letter per call (its worst output). Returns the sum.
SetCounts replay_recording(const recordings::Recording& rec, const std::string& recording,
                           const std::string& sha256, const Shard& shard, TierResult& r);

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
