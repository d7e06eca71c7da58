// SPDX-License-Identifier: BSD-2-Clause
// The test plan: ctest's JSON listing read into commands, and the run that stops at the first
// test that fails, crashes or runs out of time.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "mmaemu/mutants/campaign.hpp"
#include "mmaemu/mutants/test_plan.hpp"
#include "temp_dir.hpp" // tests/support

using namespace mmaemu::mutants;
using ::testing::HasSubstr;

namespace {

PlannedTest sh(const std::string& name, const std::string& script) {
  PlannedTest t;
  t.name = name;
  t.command = {"/bin/sh", "-c", script};
  return t;
}

PlanRunOptions opts() {
  PlanRunOptions o;
  o.build_dir = "/";
  o.test_timeout_s = 30;
  return o;
}

} // namespace

TEST(TestPlan, CtestJsonGivesCommandsFoldersEnvironmentAndRules) {
  const std::string text = R"({"kind": "ctestInfo", "version": {"major": 1, "minor": 0},
    "tests": [
      {"name": "A.b", "command": ["/bin/x", "--gtest_filter=A.b"],
       "properties": [{"name": "LABELS", "value": ["unit"]},
                      {"name": "WORKING_DIRECTORY", "value": "/w"},
                      {"name": "ENVIRONMENT", "value": ["K=V", "E=a=b"]},
                      {"name": "TIMEOUT", "value": 12.5},
                      {"name": "SKIP_RETURN_CODE", "value": 77}]},
      {"name": "neg", "command": ["/bin/false"], "properties": [{"name": "WILL_FAIL", "value": true}]},
      {"name": "off", "command": ["/bin/true"], "properties": [{"name": "DISABLED", "value": true}]}
    ]})";
  const auto tests = parse_ctest_json(text);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].name, "A.b");
  EXPECT_EQ(tests[0].command, (std::vector<std::string>{"/bin/x", "--gtest_filter=A.b"}));
  EXPECT_EQ(tests[0].cwd, "/w");
  EXPECT_EQ(tests[0].env.at("K"), "V");
  EXPECT_EQ(tests[0].env.at("E"), "a=b");
  EXPECT_NEAR(tests[0].timeout_s, 12.5, 1e-9);
  EXPECT_EQ(tests[0].skip_return_code, 77);
  EXPECT_TRUE(tests[1].will_fail);
  EXPECT_THROW(parse_ctest_json("{\"tests\": [{\"name\": \"x\"}]}"), std::runtime_error);
  EXPECT_THROW(parse_ctest_json("[]"), std::runtime_error);
}

TEST(TestPlan, StopsAtTheFirstFailureAndNamesIt) {
  const auto r = run_plan(
      {sh("ok", "exit 0"), sh("bad", "echo broken; exit 1"), sh("never", "exit 0")}, opts());
  EXPECT_EQ(r.status, RunStatus::failed);
  EXPECT_EQ(r.first_failure, "bad");
  EXPECT_EQ(r.tests_run, 2u);
  EXPECT_THAT(r.detail, HasSubstr("broken"));
}

TEST(TestPlan, EveryTestPassingIsPassedAndSkipsAndWillFailAreHonoured) {
  PlannedTest skip = sh("skip", "exit 77");
  skip.skip_return_code = 77;
  PlannedTest neg = sh("neg", "exit 3");
  neg.will_fail = true;
  PlannedTest env = sh("env", "test \"$MUT\" = 5 && test \"$OWN\" = x");
  env.env["OWN"] = "x";
  PlanRunOptions o = opts();
  o.env["MUT"] = "5";
  const auto r = run_plan({skip, neg, env}, o);
  EXPECT_EQ(r.status, RunStatus::passed) << r.first_failure << ": " << r.detail;
  EXPECT_EQ(r.tests_run, 3u);
}

TEST(TestPlan, ACrashIsReportedAsSuch) {
  const auto r = run_plan({sh("boom", "kill -SEGV $$")}, opts());
  EXPECT_EQ(r.status, RunStatus::crashed);
  EXPECT_EQ(r.first_failure, "boom");
  EXPECT_THAT(r.detail, HasSubstr("signal 11"));
}

TEST(TestPlan, ATimeoutIsReportedAsSuch) {
  PlannedTest slow = sh("slow", "sleep 30");
  slow.timeout_s = 0.5;
  const auto r = run_plan({slow, sh("never", "exit 0")}, opts());
  EXPECT_EQ(r.status, RunStatus::timed_out);
  EXPECT_EQ(r.first_failure, "slow");
  EXPECT_EQ(r.tests_run, 1u);
}

TEST(TestPlan, TheMutantsTimeLimitStopsTheRun) {
  PlanRunOptions o = opts();
  o.total_timeout_s = 0.5;
  const auto r = run_plan({sh("a", "sleep 0.3"), sh("b", "sleep 5"), sh("c", "exit 0")}, o);
  EXPECT_EQ(r.status, RunStatus::timed_out);
  EXPECT_EQ(r.first_failure, "b");
  EXPECT_THAT(r.detail, HasSubstr("time limit"));
}

TEST(TestPlan, ACommandThatCannotStartIsAnError) {
  PlannedTest t;
  t.name = "ghost";
  t.command = {"/nonexistent/program"};
  const auto r = run_plan({t}, opts());
  EXPECT_EQ(r.status, RunStatus::error);
  EXPECT_EQ(r.first_failure, "ghost");
}

TEST(TestPlan, GtestCasesOfOneExecutableRunAsOneProcessAndTheFailingCaseIsNamed) {
  mmaemu::testing::TempDir t("plan");
  const auto exe = t.path() / "fake_gtest";
  const auto calls = t.path() / "calls";
  {
    std::ofstream s(exe);
    s << "#!/bin/sh\n"
         "echo \"$1\" >> "
      << calls.string()
      << "\n"
         "f=${1#--gtest_filter=}\n"
         "IFS=:\n"
         "for c in $f; do\n"
         "  echo \"[ RUN      ] $c\"\n"
         "  if [ \"$c\" = S.bad ]; then echo \"[  FAILED  ] S.bad (0 ms)\"; exit 1; fi\n"
         "  if [ \"$c\" = S.dies ]; then kill -SEGV $$; fi\n"
         "  echo \"[       OK ] $c (0 ms)\"\n"
         "done\n";
  }
  std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
  auto cases = [&](std::vector<std::string> names) {
    std::vector<PlannedTest> v;
    for (const auto& n : names) {
      PlannedTest p;
      p.name = n;
      p.command = {exe.string(), "--gtest_filter=" + n, "--gtest_also_run_disabled_tests"};
      v.push_back(p);
    }
    return v;
  };
  const auto r = run_plan(cases({"S.a", "S.b", "S.bad", "S.c"}), opts());
  EXPECT_EQ(r.status, RunStatus::failed);
  EXPECT_EQ(r.first_failure, "S.bad");
  std::ifstream in(calls);
  std::string line, all;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    all += line;
  }
  EXPECT_EQ(n, 1u) << all;
  EXPECT_EQ(all, "--gtest_filter=S.a:S.b:S.bad:S.c");

  const auto crash = run_plan(cases({"S.a", "S.dies", "S.c"}), opts());
  EXPECT_EQ(crash.status, RunStatus::crashed);
  EXPECT_EQ(crash.first_failure, "S.dies");

  const auto pass = run_plan(cases({"S.a", "S.b"}), opts());
  EXPECT_EQ(pass.status, RunStatus::passed);
  EXPECT_EQ(pass.tests_run, 2u);
}

TEST(TestPlan, AGroupsFirstTestsRunFirstAndEveryTestStillRuns) {
  const std::vector<PlannedTest> tests = {sh("T1", "true"), sh("A.x", "true"), sh("B.y", "true"),
                                          sh("A.z", "true")};
  TierPlan plan;
  plan.first_tests["replay"] = "^A\\.";
  auto names = [](const std::vector<PlannedTest>& ts) {
    std::vector<std::string> out;
    for (const auto& t : ts)
      out.push_back(t.name);
    return out;
  };
  EXPECT_EQ(names(tests_for_group(tests, plan, "replay")),
            (std::vector<std::string>{"A.x", "A.z", "T1", "B.y"}));
  // Another group keeps the usual order.
  EXPECT_EQ(names(tests_for_group(tests, plan, "plan")),
            (std::vector<std::string>{"T1", "A.x", "B.y", "A.z"}));
  plan.first_tests["replay"] = "(";
  EXPECT_THROW(tests_for_group(tests, plan, "replay"), std::invalid_argument);
}
