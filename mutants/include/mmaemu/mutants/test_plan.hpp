// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A mutant's tier as a list of test commands, run in order until the first failure. The
// commands come from ctest (--show-only=json-v1: each test's command, folder, environment,
// timeout and skip rules), so a mutant runs exactly the tests that `ctest -L` would; running
// them here gives the first failing test, a stop at the first failure and a time limit per
// mutant without a ctest process per mutant.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mmaemu::mutants {

struct PlannedTest {
  std::string name;
  std::vector<std::string> command;
  std::filesystem::path cwd; // empty: the build folder
  std::map<std::string, std::string> env;
  double timeout_s = 0; // 0: the plan's default
  bool will_fail = false;
  std::optional<int> skip_return_code;
};

// The tests of the build folder whose labels match `label_regex` (ctest -L), without those
// whose labels match `exclude_labels` (ctest -LE) or whose names match `exclude_names`
// (ctest -E; empty: none), in ctest's declaration order. Throws std::runtime_error when ctest
// cannot list them.
std::vector<PlannedTest> list_ctest_tests(const std::filesystem::path& build_dir,
                                          const std::string& label_regex,
                                          const std::string& exclude_labels = "",
                                          const std::string& exclude_names = "");

// Parses ctest --show-only=json-v1 output (exposed for tests). Throws std::runtime_error.
std::vector<PlannedTest> parse_ctest_json(const std::string& text);

enum class RunStatus {
  passed,    // every test passed (or skipped)
  failed,    // a test failed (exit status, or WILL_FAIL inverted)
  crashed,   // a test was killed by a signal
  timed_out, // a test or the whole run exceeded its time limit
  error,     // a test could not start
};

const char* run_status_name(RunStatus s);

struct PlanRun {
  RunStatus status = RunStatus::passed;
  std::string first_failure; // the test that ended the run
  std::string detail;        // the last lines of its output
  std::size_t tests_run = 0;
  double seconds = 0;
};

struct PlanRunOptions {
  std::filesystem::path build_dir;
  std::map<std::string, std::string> env; // added to every test's environment
  double test_timeout_s = 300;            // a test without its own TIMEOUT
  double total_timeout_s = 0;             // 0: none
};

// Runs the tests in order through the project's process runner and stops at the first one that
// does not pass. Consecutive gtest cases of one executable (gtest_discover_tests' commands: the
// executable and --gtest_filter=<one name>, with the same folder, environment and skip rule)
// run as one process with their names joined in the filter; the first failing case is then
// read from gtest's output ("[  FAILED  ] <name> (... ms)", or the case that was running when
// the process died).
PlanRun run_plan(const std::vector<PlannedTest>& tests, const PlanRunOptions& opt);

} // namespace mmaemu::mutants
