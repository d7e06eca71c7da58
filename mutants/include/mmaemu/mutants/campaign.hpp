// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A mutation campaign: each selected mutant applied to a copy of the repository, built, and its
// tier's tests run until the first failure. The outcome of each mutant is compared with what
// the catalogue expects of it.

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/mutants/catalogue.hpp"
#include "mmaemu/mutants/test_plan.hpp"

namespace mmaemu::mutants {

enum class MutantOutcome {
  killed,      // a test failed
  survived,    // every test passed
  timeout,     // a test or the mutant's time limit ran out (the tests did not pass)
  crash,       // a test was killed by a signal (the tests did not pass)
  build_error, // the mutated tree does not build: a catalogue defect
  error,       // could not run (rewrite failed, a test could not start, no workspace)
};

const char* outcome_name(MutantOutcome o);

struct MutantResult {
  const Mutant* mutant = nullptr;
  MutantOutcome outcome = MutantOutcome::error;
  std::string killed_by; // the first failing test ("T1" or a ctest name)
  std::string detail;    // its last output lines, or why it could not run
  std::size_t tests_run = 0;
  double seconds = 0; // build (rewrite mode) and tests
  bool as_expected = false;
  std::string verdict; // one line: why it matched or did not
};

// Whether `o` is what `e` asks for; `why` says it in one line.
bool matches_expectation(Expect e, MutantOutcome o, const std::string& killed_by, std::string& why);

struct TierPlan {
  std::string label_regex = "unit"; // ctest -L: T0
  // ctest -LE: tests of the source text itself (formatting, the catalogue against the tree),
  // which any edit of the copy would fail whatever it means.
  std::string exclude_label_regex = "source";
  // ctest -E: tests the tier file leaves out of a mutant's run (run.exclude_tests, with its
  // reason in run.exclude_why): empty, none.
  std::string exclude_name_regex;
  bool with_t1 = true;  // `mmaemu tier run T1 --no-log` of the copy, first
  bool with_t3 = false; // `mmaemu tier run T3 --no-log` of the copy (GPU tier)
  // Per group: a regex on ctest names (run.first_tests, with its reason in
  // run.first_tests_why) whose tests a mutant of that group runs first, before T1 and the rest,
  // which follow in their usual order. The same tests run either way: only the time to the
  // first failure (and which failing test is named) changes.
  std::map<std::string, std::string> first_tests;
};

// The tests of `tests` in the order a mutant of `group` runs them: those whose name matches
// plan.first_tests[group] first, in their order, then the others, in theirs.
// std::invalid_argument for a bad regex.
std::vector<PlannedTest> tests_for_group(const std::vector<PlannedTest>& tests,
                                         const TierPlan& plan, const std::string& group);

struct CampaignOptions {
  std::string tier = "cpu";    // cpu or gpu: the mutants whose tier it is
  std::string mode = "schema"; // schema: one build, mutants chosen at run time; rewrite
  unsigned jobs = 1;
  std::string only; // ECMAScript regex on the id; empty: all
  std::size_t shard_index = 1, shard_count = 1;
  std::filesystem::path source_dir, shared_dir;
  std::vector<std::string> cmake_args;
  TierPlan plan;
  double mutant_timeout_s = 600;
  double test_timeout_s = 300;
  bool keep_workspace = false;
  // The schema build's folder, kept between campaigns so that the next build is incremental;
  // empty: a temporary folder.
  std::filesystem::path schema_dir;
  // done of total, the id just finished with its outcome ("" at the start of a phase).
  std::function<void(std::size_t done, std::size_t total, const std::string& label)> progress;
  std::function<void(const std::string&)> note; // phase lines: copying, building, ...
};

struct CampaignResult {
  std::string mode;
  std::vector<MutantResult> results; // in catalogue order
  std::size_t catalogue_size = 0;
  double setup_seconds = 0; // copy, configure and first build
  double seconds = 0;
  std::string error; // the campaign could not run at all (workspace, build)
};

// The mutants of `tier` (for gpu also every kernel mutant) matching `only` and in shard k of N
// (round robin in catalogue order). ValueError-like std::invalid_argument for a bad regex.
std::vector<const Mutant*> select_mutants(const Catalogue& c, const std::string& tier,
                                          const std::string& only, std::size_t shard_index,
                                          std::size_t shard_count);

CampaignResult run_campaign(const Catalogue& c, const CampaignOptions& opt);

// Per group with a selected mutant, in catalogue_groups() order: group, layer, mutants,
// as_expected, killed, survived, equivalent, identity, errors, and its mutation score
// (score_json).
nlohmann::json group_table(const CampaignResult& r);

// The mutation score of a set of results: {"killed": k, "non_equivalent": n, "percent": 100 k / n
// (null when n is 0)} and, with a target t, "target_percent": t and "meets_target": k * 100 >=
// t * n. The non-equivalent mutants are those the catalogue expects killed (not identity_*, not
// equivalent); killed counts those among them whose tests did not pass (killed, timeout, crash).
nlohmann::json score_json(const std::vector<const MutantResult*>& results,
                          std::optional<unsigned> target_percent);

// The score of the whole selection and of each layer with a selected mutant (the targets are
// the groups'; the layers carry theirs, the whole selection none): {"overall": score,
// "layers": [{"layer", ...score}]}.
nlohmann::json score_summary(const CampaignResult& r);

// The group table and the summary as text: a header, one line per group, one per layer and the
// overall line ("signing  harness  9/9 killed  100.0%  (target 95%)"), a group under its target
// marked UNDER TARGET.
std::vector<std::string> score_lines(const nlohmann::json& groups, const nlohmann::json& summary);

// One mutant as it goes into the log.
nlohmann::json result_json(const MutantResult& r);

} // namespace mmaemu::mutants
