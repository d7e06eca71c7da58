// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The arguments of one tier run, shared by `mmaemu tier run` and `mmaemu mutants run` (which
// runs T4 or T4g with its own options and log name).

#include <CLI/CLI.hpp>
#include <string>

#include "mmaemu/harness/tier_runner.hpp"
#include "output.hpp"

namespace mmaemu::cli {

struct TierArgs {
  std::string name, out, junit, shard, log_dir, build_dir, tiers, recordings, coverage, compare;
  bool no_log = false, verbose = false;
  bool trust_tiers = false; // --trust-tiers: a --tiers folder outside the source tree or prefix
  // The log goes into the committed docs/validation_logs/ of the source tree, signed with
  // MMAEMU_SIGNING_KEY, whose public key must be trusted there (docs/testing.md, "Publishing").
  bool publish = false;
  unsigned jobs = 0;
  std::string log_stem; // empty: the tier's ("T4", "T4-shard1of2")
  JsonOption json;      // the summary, details and cases
  harness::RunOptions::Mutants mutants;
};

// The --log-dir, --no-log and --publish options of `tier run` and `mutants run`.
void add_log_options(CLI::App& cmd, TierArgs& a);

// --tiers DIR and --trust-tiers (harness/tier_trust.hpp: a tier folder is code; one outside
// the source tree or install prefix is read only with --trust-tiers).
void add_tiers_options(CLI::App& cmd, std::string& tiers, bool& trust, const std::string& what);

// check_tiers_trusted for a --tiers folder that was given (none given: the tiers found beside
// mmaemu). Throws harness::TierFileError.
void check_tiers_option(const std::string& tiers, const harness::Layout& layout, bool trust);

// The paths of a run's command line, checked before anything is loaded or run: an input that is
// not a regular file, an output (--junit, --json, --out, --coverage) that is a special file, a
// symlink to one, or one of the files the run reads (tier files, recordings, keys, the signing
// key, the catalogue, --compare). Prints the one error line and returns kUsage, else kOk.
int check_run_paths(const TierArgs& a);

// Runs the tier a.name: its prerequisites, the run, the closing lines, the validation log
// (signed when MMAEMU_SIGNING_KEY names a key; <build>/validation_logs/ unless --log-dir,
// $MMAEMU_LOG_DIR or --publish says otherwise), JUnit and JSON outputs. Returns the exit status.
int run_tier_args(const TierArgs& a);

} // namespace mmaemu::cli
