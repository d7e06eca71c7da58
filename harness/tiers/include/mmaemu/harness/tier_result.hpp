// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What one tier run found: per-case outcomes, totals, the inputs it read, its verdict.

#include <array>
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
  std::array<std::size_t, 5> totals{}; // indexed by Outcome
  std::vector<InputFile> inputs;
  nlohmann::json seeds = nlohmann::json::object();
  nlohmann::json details; // kind-specific (coverage, truth snapshot, package paths, ...)
  nlohmann::json benchmarks = nlohmann::json::array();
  double seconds = 0;
  std::string started_utc, finished_utc;

  std::size_t total(Outcome o) const { return totals[static_cast<std::size_t>(o)]; }
  std::size_t case_count() const;
  // Adds a case to `cases` and to the totals.
  void add(TierCase c);
  // Counts an outcome that is not listed in `cases` (a passing replay case).
  void count(Outcome o, std::size_t n = 1) { totals[static_cast<std::size_t>(o)] += n; }
  // Records a bookkeeping check in `checks` and details["checks"] (not in the totals).
  void check(TierCheck c);
};

// Sets the verdict from the totals and checks unless it is already UNSUPPORTED or ERROR with a
// reason (a missing prerequisite, a run that could not start): ERROR if any case errored,
// else FAIL if any case failed or any check does not hold, else UNSUPPORTED if no case ran
// (PASS, FAIL, ERROR or XFAIL; checks are not cases: never PASS for nothing), else PASS.
void settle_verdict(TierResult& r, const std::string& nothing_ran_reason);

// The exit status of `mmaemu tier run`: 0 PASS, 1 FAIL or ERROR, 4 UNSUPPORTED.
int tier_exit_status(Outcome verdict);

// {"PASS": n, ..., "cases": n}.
nlohmann::json totals_json(const TierResult& r);

// One case as it goes into a log.
nlohmann::json case_json(const TierCase& c);

// JUnit XML: one testsuite named after the tier; one testcase per listed case, plus one per
// replay set; a tier that did not run is one skipped testcase with the reason.
std::string junit_xml(const TierResult& r);

} // namespace mmaemu::harness
