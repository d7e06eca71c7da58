// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The arguments of one tier run, shared by `mmaemu tier run` and `mmaemu mutants run` (which
// runs T4 or T4g with its own options and log name).

#include <string>

#include "mmaemu/harness/tier_runner.hpp"

namespace mmaemu::cli {

struct TierArgs {
  std::string name, out, junit, shard, log_dir, build_dir, tiers, recordings, coverage, compare;
  bool json = false, no_log = false, verbose = false;
  unsigned jobs = 0;
  std::string log_stem;  // empty: the tier's ("T4", "T4-shard1of2")
  std::string json_file; // also write the summary, details and cases as JSON here
  harness::RunOptions::Mutants mutants;
};

// Runs the tier a.name: its prerequisites, the run, the closing lines, the validation log
// (signed when MMAEMU_SIGNING_KEY names a key), JUnit and JSON outputs. Returns the exit status.
int run_tier_args(const TierArgs& a);

} // namespace mmaemu::cli
