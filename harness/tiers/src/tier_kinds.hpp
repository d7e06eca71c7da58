// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The run kinds of the tier runner (private to the harness library). Each fills `r` with its
// cases; run_tier settles the verdict afterwards. What the kinds share for the work they start
// is in tier_work.hpp.

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

} // namespace mmaemu::harness::detail
