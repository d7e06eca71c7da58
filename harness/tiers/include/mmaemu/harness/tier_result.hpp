// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What one tier run found: per-case outcomes, totals, the inputs it read, its verdict.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmaemu/harness/replay.hpp"

namespace mmaemu::harness {

struct TierCase {
  std::string id; // stable: a ctest name, "<recording>/<set>/<line>", "package/cpack", ...
  Outcome outcome = Outcome::pass;
  double seconds = 0;
  std::string message;
  bool in_set = false; // a replay case, also counted in its set's line of `sets`
};

// A bookkeeping check of a run (T1's data budget): not a case. It never counts in the totals
// and never makes a tier PASS; a check that does not hold makes the tier FAIL.
struct TierCheck {
  std::string id; // "T1/data_budget"
  bool ok = true;
  std::string message;
};

struct InputFile {
  std::string path; // as the tier names it (relative to its data folder where there is one)
  std::string sha256;
  std::uintmax_t bytes = 0;
};

struct TierResult {
  std::string tier;
  Outcome verdict = Outcome::unsupported;
  std::string reason; // one line: why UNSUPPORTED, ERROR or FAIL; empty for PASS
  // Every case, except that replay tiers list only the cases that did not pass (all their
  // cases are in `sets`, one letter each).
  std::vector<TierCase> cases;
  std::vector<TierCheck> checks; // also in details["checks"], so that the log records them
  nlohmann::json sets = nlohmann::json::array();
  outcome::Tally totals;
  std::vector<InputFile> inputs;
  nlohmann::json seeds = nlohmann::json::object();
  nlohmann::json details; // kind-specific (coverage, truth snapshot, package paths, ...)
  nlohmann::json benchmarks = nlohmann::json::array();
  double seconds = 0;
  std::string started_utc, finished_utc;
  // The source revision when the run started (reports::git_state), which the log records: a
  // run of minutes (T4 copies the tree at its start) is of the tree it started from, whatever
  // is edited while it runs. Null: read when the log is written.
  nlohmann::json git;

  std::size_t total(Outcome o) const { return totals[o]; }
  std::size_t case_count() const { return totals.total(); }
  // Adds a case to `cases` and to the totals.
  void add(TierCase c);
  // Counts an outcome that is not listed in `cases` (a passing replay case).
  void count(Outcome o, std::size_t n = 1) { totals.add(o, n); }
  // Records a bookkeeping check in `checks` and details["checks"] (not in the totals).
  void check(TierCheck c);
};

// What the one verdict rule (outcome::judge) needs to know of a run besides its totals: the
// first case of each bad kind, the checks that did not hold, and `nothing_ran_reason`.
outcome::VerdictNotes verdict_notes(const TierResult& r, const std::string& nothing_ran_reason);

// r.verdict and r.reason by outcome::judge over r.totals and verdict_notes, unless the run
// already stopped with a reason (UNSUPPORTED or ERROR: a missing prerequisite, a run that
// could not start). Checks are not cases: they can fail a run, never make it PASS.
void judge_tier(TierResult& r, const std::string& nothing_ran_reason);

// {"PASS": n, ..., "cases": n}.
nlohmann::json totals_json(const TierResult& r);

// One case as it goes into a log.
nlohmann::json case_json(const TierCase& c);

// JUnit XML: one testsuite named after the tier; one testcase per listed case, plus one per
// replay set; a tier that did not run is one skipped testcase with the reason.
std::string junit_xml(const TierResult& r);

} // namespace mmaemu::harness
