// SPDX-License-Identifier: BSD-2-Clause
// The tier runner: missing prerequisites give UNSUPPORTED naming what is missing; ctest tiers
// read per-test outcomes; the replay tier replays the committed recordings, shards them, and
// reports corrupt or tampered recordings.

#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <map>

#include "mmaemu/harness/tier_log.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/merge_logs.hpp"
#include "mmaemu/support/process.hpp"
#include "temp_dir.hpp"
#include "tier_test_support.hpp"

namespace mmaemu::harness {
namespace {

namespace fs = std::filesystem;

RunOptions options_for(const fs::path& recordings = tiertest::committed_recordings()) {
  RunOptions o;
  o.layout.exe = MMAEMU_BIN;
  o.layout.origin = "build tree";
  o.layout.source_dir = tiertest::source_dir();
  o.layout.tiers_dir = tiertest::committed_tiers();
  o.layout.recordings_dir = recordings;
  o.text = stderr;
  return o;
}

class ScopedUnset {
public:
  explicit ScopedUnset(const char* name) : name_(name) {
    if (const char* v = std::getenv(name))
      old_ = v;
    ::unsetenv(name);
  }
  ~ScopedUnset() {
    if (!old_.empty())
      ::setenv(name_, old_.c_str(), 1);
  }

private:
  const char* name_;
  std::string old_;
};

TEST(TierRunner, T2WithoutTruthIsUnsupportedNamingTheVariable) {
  ScopedUnset u("MMAEMU_TRUTH_DIR");
  const TierResult r = run_tier(tiertest::committed_tier("T2"), options_for());
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_NE(r.reason.find("MMAEMU_TRUTH_DIR"), std::string::npos) << r.reason;
  EXPECT_EQ(r.case_count(), 0u);
  EXPECT_EQ(outcome::exit_status_of(r.verdict), 4);
}

TEST(TierRunner, GpuTiersWithoutADeviceAreUnsupportedNamingTheCudaDevice) {
  if (probe_cuda().available)
    GTEST_SKIP() << "this machine has a CUDA device";
  for (const char* name : {"T3", "T3p"}) {
    const TierResult r = run_tier(tiertest::committed_tier(name), options_for());
    EXPECT_EQ(r.verdict, Outcome::unsupported) << name;
    EXPECT_NE(r.reason.find("needs a CUDA device"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("libcuda"), std::string::npos) << r.reason;
  }
}

TEST(TierRunner, DeviceNamesAreMatchedAgainstTheProbe) {
  RunOptions o = options_for();
  o.cuda_probed = true;
  o.cuda.available = true;
  o.cuda.devices = {{0, "NVIDIA H100 PCIe", 9, 0}};
  o.layout.build_dir = tiertest::source_dir(); // no CTestTestfile.cmake there
  const auto why = missing_prerequisite(tiertest::committed_tier("T3p"), o);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("named 'RTX 4060'"), std::string::npos) << *why;
  EXPECT_NE(why->find("H100"), std::string::npos) << *why;
  // T3 accepts any device and needs no build tree (it runs from the GPU bundle too).
  const auto why3 = missing_prerequisite(tiertest::committed_tier("T3"), o);
  EXPECT_FALSE(why3.has_value()) << *why3;
}

TEST(TierRunner, TheMutationTiersSayWhatIsMissing) {
  RunOptions o = options_for();
  o.layout.source_dir.reset();
  const TierResult t4 = run_tier(tiertest::committed_tier("T4"), o);
  EXPECT_EQ(t4.verdict, Outcome::unsupported);
  EXPECT_NE(t4.reason.find("source tree"), std::string::npos) << t4.reason;

  RunOptions g = options_for();
  g.cuda.available = false;
  g.cuda.reason = "no CUDA driver (test)";
  g.cuda_probed = true;
  const TierResult t4g = run_tier(tiertest::committed_tier("T4g"), g);
  EXPECT_EQ(t4g.verdict, Outcome::unsupported);
  EXPECT_NE(t4g.reason.find("CUDA device"), std::string::npos) << t4g.reason;
  EXPECT_NE(t4g.reason.find("no CUDA driver (test)"), std::string::npos) << t4g.reason;
}

TEST(TierRunner, AMutantCatalogueThatDoesNotFitTheTreeIsAnErrorBeforeAnyBuild) {
  mmaemu::testing::TempDir tmp("t4cat");
  const fs::path cat = tmp.path() / "catalogue.json";
  std::ofstream(cat) << R"({"schema": "mmaemu-mutants/1", "mutants": [
    {"id": "control_sign_flip", "group": "control", "description": "d", "source": "s",
     "tier": "cpu", "expect": "killed",
     "edits": [{"file": "emulator/src/block_fma.cpp", "original": "no such text anywhere",
                "replacement": "x"}]}]})";
  RunOptions o = options_for();
  o.mutants.catalogue = cat;
  const auto t0 = std::chrono::steady_clock::now();
  const TierResult r = run_tier(tiertest::committed_tier("T4"), o);
  EXPECT_EQ(r.verdict, Outcome::error);
  EXPECT_NE(r.reason.find("control_sign_flip: emulator/src/block_fma.cpp: original 'no such text "
                          "anywhere' not found"),
            std::string::npos)
      << r.reason;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

TEST(TierRunner, AMissingSubcommandIsNamed) {
  TierSpec t = tiertest::committed_tier("T6");
  t.commands = {"frobnicate"};
  const TierResult r = run_tier(t, options_for());
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_NE(r.reason.find("`mmaemu frobnicate`"), std::string::npos) << r.reason;
}

// A log records the tree a run started from: a run of minutes (T4 copies the tree when it
// starts) is not made "dirty" by an edit while it runs. Here the tier's own command edits a
// tracked file of a committed scratch repository.
TEST(TierRunner, TheLogRecordsTheRevisionTheRunStartedFrom) {
  if (!mmaemu::support::find_program("git"))
    GTEST_SKIP() << "needs git in PATH";
  mmaemu::testing::TempDir tmp("git_at_start");
  const fs::path repo = tmp.path() / "repo";
  fs::create_directories(repo);
  mmaemu::testing::spit(repo / "f.txt", "committed\n");
  const std::vector<std::string> git = {
      "git", "-C", repo.string(), "-c", "user.name=t", "-c", "user.email=t@test.invalid"};
  for (std::vector<std::string> args :
       {std::vector<std::string>{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}}) {
    std::vector<std::string> argv = git;
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(mmaemu::support::run_process(argv).exit_code, 0);
  }
  TierSpec t = tiertest::committed_tier("T6");
  t.run = {{"kind", "command"},
           {"argv", {"/bin/sh", "-c", "echo edited >> '" + (repo / "f.txt").string() + "'"}}};
  t.commands.clear();
  RunOptions o = options_for();
  o.layout.source_dir = repo;
  const TierResult r = run_tier(t, o);
  EXPECT_EQ(mmaemu::testing::slurp(repo / "f.txt"), "committed\nedited\n"); // it ran
  ASSERT_TRUE(r.git.is_object());
  EXPECT_EQ(r.git["dirty"], false) << r.git.dump();
  EXPECT_EQ(build_tier_log(t, r, o, {"test"}, "0")["git"], r.git);
  EXPECT_EQ(reports::git_state(repo)["dirty"], true); // as it is now, after the edit
}

// The command kind on a tiny GEMM; the figure judged is the shape's M (not a time), so the
// outcome does not depend on the machine.
TEST(TierRunner, CommandFiguresAreJudgedAgainstTheirTargets) {
  TierSpec t = tiertest::committed_tier("T6");
  t.run["argv"] = {
      "{mmaemu}", "bench",           "gemm", "--M", "8", "--N", "8", "--K", "32", "--threads", "1",
      "--json",   "{out}/bench.json"};
  t.run["figures"] = {{"M", {{"unit", "rows"}, {"target", 8}, {"better", "higher"}}},
                      {"ratio", {{"unit", "x"}}}};
  t.run.erase("targets"); // the committed sweep's targets
  const TierResult ok = run_tier(t, options_for());
  EXPECT_EQ(ok.verdict, Outcome::pass) << ok.reason;
  ASSERT_EQ(ok.benchmarks.size(), 2u);
  EXPECT_EQ(ok.benchmarks[0]["name"], "M");
  EXPECT_EQ(ok.benchmarks[0]["met"], true);
  t.run["figures"]["M"]["target"] = 9;
  const TierResult bad = run_tier(t, options_for());
  EXPECT_EQ(bad.verdict, Outcome::fail);
  EXPECT_NE(bad.reason.find("bench/M"), std::string::npos) << bad.reason;
  t.run["figures"] = {{"no_such_figure", {{"unit", "x"}}}};
  EXPECT_EQ(run_tier(t, options_for()).verdict, Outcome::error);
}

// The committed T6 command (the sweep) on a small N and K: its benchmarks array is judged by
// run.targets and the whole result, rows included, goes into the log's details.
TEST(TierRunner, TheSweepIsRecordedInTheLog) {
  TierSpec t = tiertest::committed_tier("T6");
  ASSERT_EQ(t.run["argv"][3], "--sweep");
  t.run["argv"] = {"{mmaemu}", "bench",           "gemm", "--sweep",   "--N", "32",        "--K",
                   "32",       "--split-M",       "8",    "--split-K", "64",  "--threads", "1",
                   "--json",   "{out}/bench.json"};
  t.run["targets"] = {{"ratio_hopper_fast_M16", {{"target", 1e9}, {"better", "lower"}}}};
  const TierResult r = run_tier(t, options_for());
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  ASSERT_TRUE(r.details.contains("result"));
  EXPECT_EQ(r.details["result"]["rows"].size(), 39u);
  EXPECT_GE(r.benchmarks.size(), 39u * 2);
}

// T6's shards ({shard} in run.argv: bench gemm --sweep --shard k/N) split the table by (M,
// profile): together they measure each figure once, and a target measured by another shard is
// not reported unmeasured by this one. The committed T6 on a small N and K.
TEST(TierRunner, SweepShardsMeasureEachFigureOnce) {
  TierSpec t = tiertest::committed_tier("T6");
  nlohmann::json argv = nlohmann::json::array();
  for (const auto& a : t.run["argv"]) {
    if (a == "3")
      argv.push_back("1"); // --repeat
    else
      argv.push_back(a);
  }
  for (const char* extra : {"--N", "32", "--K", "32", "--threads", "1"})
    argv.push_back(extra);
  t.run["argv"] = argv;
  for (auto& [name, target] : t.run["targets"].items())
    target["target"] = target.value("better", "") == "lower" ? 1e9 : 0.0;
  std::map<std::string, int> figures;
  std::size_t rows = 0;
  for (std::size_t k = 1; k <= 3; ++k) {
    RunOptions o = options_for();
    o.shard = parse_shard(std::to_string(k) + "/3");
    const TierResult r = run_tier(t, o);
    EXPECT_EQ(r.verdict, Outcome::pass) << k << ": " << r.reason;
    for (const auto& b : r.benchmarks)
      ++figures[b["name"].get<std::string>()];
    rows += r.details["result"]["rows"].size();
    EXPECT_EQ(r.total(Outcome::unsupported), 0u) << k;
  }
  // 7 M x 2 profiles x fast and slow, and the split calls: hopper's unsplit call with S = 2, 4,
  // 8 contiguous, ada's unsplit call with S = 2, 4, 8 serial and pairwise; each in one shard.
  EXPECT_EQ(rows, 7u * 2 * 2 + (1 + 3) + (1 + 3 * 2));
  for (const auto& [name, target] : t.run["targets"].items())
    EXPECT_EQ(figures[name], 1) << name;
  for (const auto& [name, n] : figures)
    EXPECT_EQ(n, 1) << name;
}

TEST(TierRunner, CtestTiersNeedABuildTree) {
  RunOptions o = options_for();
  o.layout.origin = "installed";
  const TierResult r = run_tier(tiertest::committed_tier("T0"), o);
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_NE(r.reason.find("--build-dir"), std::string::npos) << r.reason;
}

// A build tree of hand-written ctest declarations: no CMake run needed.
class FakeCtest : public ::testing::Test {
protected:
  void write(const std::string& tests) {
    tiertest::spit(dir / "CTestTestfile.cmake", tests);
    opt.layout.build_dir = dir.path();
  }
  TierSpec spec(const std::vector<std::string>& labels) {
    TierSpec t;
    t.name = "Tx";
    t.kind = "ctest";
    t.needs_build_tree = true;
    t.budget_seconds = 60;
    t.run = {{"kind", "ctest"}, {"labels", labels}};
    return t;
  }
  tiertest::TempDir dir;
  RunOptions opt = options_for();
};

const char* kFourTests = R"(add_test(a "/bin/true")
set_tests_properties(a PROPERTIES LABELS "unit")
add_test(b "/bin/true")
set_tests_properties(b PROPERTIES LABELS "unit")
add_test(c "/bin/sh" "-c" "echo '[  SKIPPED ] no data'")
set_tests_properties(c PROPERTIES LABELS "unit" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
add_test(d "/bin/true")
set_tests_properties(d PROPERTIES LABELS "slow")
)";

TEST_F(FakeCtest, PassingTestsPassAndSkippedOnesAreUnsupportedNotPass) {
  write(kFourTests);
  const TierResult r = run_tier(spec({"unit"}), opt);
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_EQ(r.total(Outcome::pass), 2u);
  EXPECT_EQ(r.total(Outcome::unsupported), 1u);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[2].id, "c");
  EXPECT_EQ(r.cases[2].outcome, Outcome::unsupported);
}

TEST_F(FakeCtest, AFailingTestFailsTheTierNamingIt) {
  write(std::string(kFourTests) + "add_test(e \"/bin/sh\" \"-c\" \"echo boom; exit 3\")\n"
                                  "set_tests_properties(e PROPERTIES LABELS \"unit\")\n");
  const TierResult r = run_tier(spec({"unit"}), opt);
  EXPECT_EQ(r.verdict, Outcome::fail);
  EXPECT_NE(r.reason.find("first: e"), std::string::npos) << r.reason;
  EXPECT_EQ(outcome::exit_status_of(r.verdict), 1);
}

TEST_F(FakeCtest, AMissingTestProgramIsAnError) {
  write("add_test(gone \"/nonexistent/mmaemu_tests\")\nset_tests_properties(gone PROPERTIES LABELS "
        "\"unit\")\n");
  const TierResult r = run_tier(spec({"unit"}), opt);
  EXPECT_EQ(r.verdict, Outcome::error);
}

TEST_F(FakeCtest, ALabelNoTestCarriesIsUnsupportedNotPass) {
  write(kFourTests);
  const TierResult r = run_tier(spec({"gpu"}), opt);
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_NE(r.reason.find("no test labelled gpu"), std::string::npos) << r.reason;
}

TEST_F(FakeCtest, ShardsPartitionTheTests) {
  write(kFourTests);
  std::vector<std::string> ids;
  for (std::size_t k = 1; k <= 2; ++k) {
    opt.shard = parse_shard(std::to_string(k) + "/2");
    for (const auto& c : run_tier(spec({"unit", "slow"}), opt).cases)
      ids.push_back(c.id);
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ReplayTier, TheCommittedRecordingsPassCaseByCase) {
  const TierResult r = run_tier(tiertest::committed_tier("T1"), options_for());
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  std::size_t cases = 0;
  for (const auto& s : r.sets) {
    const std::string letters = s["outcomes"];
    EXPECT_EQ(letters.size(), s["cases_total"].get<std::size_t>());
    EXPECT_EQ(letters.find_first_not_of('P'), std::string::npos);
    cases += letters.size();
  }
  EXPECT_GE(cases, 90000u); // the fourteen public sets (70,000 of them 16-bit and tf32 cases)
  EXPECT_EQ(r.total(Outcome::pass), cases); // the data budget is a check, not a case
  EXPECT_EQ(r.case_count(), cases);
  EXPECT_FALSE(r.inputs.empty());
  for (const auto& in : r.inputs)
    EXPECT_EQ(in.sha256.size(), 64u);
}

TEST(ReplayTier, ShardLogsMergeIntoTheWholeRun) {
  const TierSpec t1 = tiertest::committed_tier("T1");
  RunOptions whole_opt = options_for();
  const TierResult whole = run_tier(t1, whole_opt);
  std::vector<reports::ShardLog> logs;
  for (std::size_t k = 1; k <= 3; ++k) {
    RunOptions o = options_for();
    o.shard = parse_shard(std::to_string(k) + "/3");
    const TierResult part = run_tier(t1, o);
    EXPECT_LT(part.case_count(), whole.case_count());
    logs.push_back(
        {"T1-shard" + std::to_string(k), "", build_tier_log(t1, part, o, {"test"}, "0")});
  }
  const auto merged = reports::merge_shard_logs(logs);
  const auto full = build_tier_log(t1, whole, whole_opt, {"test"}, "0");
  ASSERT_EQ(merged["sets"].size(), full["sets"].size());
  for (std::size_t i = 0; i < full["sets"].size(); ++i) {
    EXPECT_EQ(merged["sets"][i]["outcomes"], full["sets"][i]["outcomes"]);
  }
  EXPECT_EQ(merged["verdict"], "PASS");
  // Every shard checks the data budget, which counts as no case.
  EXPECT_EQ(merged["totals"]["PASS"].get<std::size_t>(), whole.total(Outcome::pass));
}

TEST(ReplayTier, ACorruptRecordingIsAnErrorNamingTheFile) {
  tiertest::TempDir dir;
  fs::copy(tiertest::committed_recordings() / "public" / "H100_E4M3.h5", dir / "good.h5");
  tiertest::spit(dir / "broken.h5", "this is not HDF5");
  const TierResult r = run_tier(tiertest::committed_tier("T1"), options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::error);
  EXPECT_NE(r.reason.find("broken.h5"), std::string::npos) << r.reason;
  EXPECT_GE(r.total(Outcome::pass), 5000u); // the good file still replayed
}

TEST(ReplayTier, ATamperedExpectationFailsWithItsCaseId) {
  tiertest::TempDir dir;
  auto rec =
      recordings::read_recording(tiertest::committed_recordings() / "public" / "Ada_E4M3.h5");
  ASSERT_FALSE(rec.mma.empty());
  rec.mma[0].expect[7] ^= 1u; // one bit of one case
  recordings::write_recording(dir / "tampered.h5", rec);
  const TierResult r = run_tier(tiertest::committed_tier("T1"), options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::fail);
  ASSERT_EQ(r.total(Outcome::fail), 1u);
  const auto bad = std::find_if(r.cases.begin(), r.cases.end(),
                                [](const TierCase& c) { return c.outcome == Outcome::fail; });
  ASSERT_NE(bad, r.cases.end());
  EXPECT_EQ(bad->id, "tampered.h5:" + rec.mma[0].ids[7]);
  EXPECT_NE(bad->message.find("[value]"), std::string::npos) << bad->message;
  EXPECT_EQ(r.sets[0]["outcomes"].get<std::string>()[7], 'F');
}

TEST(ReplayTier, DataOverBudgetFails) {
  TierSpec t = tiertest::committed_tier("T1");
  t.budget_data_mib = 0.1;
  const TierResult r = run_tier(t, options_for());
  EXPECT_EQ(r.verdict, Outcome::fail);
  EXPECT_NE(r.reason.find("T1/data_budget"), std::string::npos) << r.reason;
  EXPECT_EQ(r.total(Outcome::fail), 0u); // the overrun fails the tier, but is no case
}

TEST(ReplayTier, TheDataBudgetIsACheckInTheDetailsNotACase) {
  const TierResult r = run_tier(tiertest::committed_tier("T1"), options_for());
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].id, "T1/data_budget");
  EXPECT_TRUE(r.checks[0].ok) << r.checks[0].message;
  ASSERT_TRUE(r.details.contains("checks")) << r.details.dump();
  EXPECT_EQ(r.details["checks"][0]["id"], "T1/data_budget");
  EXPECT_EQ(r.details["checks"][0]["ok"], true);
  for (const auto& c : r.cases)
    EXPECT_NE(c.id, "T1/data_budget");
}

// A recording whose only set is out of scope, every expected bit flipped: nothing is tested,
// so the tier is UNSUPPORTED: the data budget that holds adds no PASS.
TEST(ReplayTier, ATierWhoseCasesAreAllOutOfScopeIsUnsupportedNotPass) {
  tiertest::TempDir dir;
  auto rec =
      recordings::read_recording(tiertest::committed_recordings() / "public" / "H100_E4M3.h5");
  ASSERT_EQ(rec.mma.size(), 1u);
  for (auto& e : rec.mma[0].expect)
    e = ~e;
  rec.mma[0].attrs["scope"] = "out";
  rec.mma[0].attrs["scope_reason"] = "synthetic";
  recordings::write_recording(dir / "scoped.h5", rec);
  const TierResult r = run_tier(tiertest::committed_tier("T1"), options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::unsupported) << r.reason;
  EXPECT_EQ(outcome::exit_status_of(r.verdict), 4);
  EXPECT_EQ(r.total(Outcome::pass), 0u);
  EXPECT_EQ(r.total(Outcome::fail), 0u);
  EXPECT_EQ(r.total(Outcome::unsupported), 5000u);
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0]["outcomes"].get<std::string>(), std::string(5000, 'U'));
  EXPECT_EQ(r.sets[0]["not_applicable"], 5000);
  EXPECT_EQ(r.sets[0]["passed"], 0);
  EXPECT_EQ(r.sets[0]["scope"], "out");
  ASSERT_FALSE(r.cases.empty());
  EXPECT_NE(r.cases[0].message.find("out of scope (n/a): synthetic"), std::string::npos)
      << r.cases[0].message;
  // JUnit: the set is skipped, not passed.
  const std::string x = junit_xml(r);
  EXPECT_NE(x.find("skipped=\"1\""), std::string::npos) << x;
  EXPECT_EQ(x.find("failures=\"1\""), std::string::npos) << x;
}

// The same attributes mean the same in `mmaemu replay` and in the tier: one code path. The set
// is one call, so its refusal is one event: one PASS (or FAIL), never 5000.
TEST(ReplayTier, AnExpectedErrorSetPassesOnlyWithThatExactClass) {
  tiertest::TempDir dir;
  auto rec =
      recordings::read_recording(tiertest::committed_recordings() / "public" / "Ada_E4M3.h5");
  rec.mma[0].preset = "sm_120"; // refused with ValueError
  rec.mma[0].attrs["expect_error"] = "ValueError";
  recordings::write_recording(dir / "refused.h5", rec);
  const TierResult ok = run_tier(tiertest::committed_tier("T1"), options_for(dir.path()));
  EXPECT_EQ(ok.verdict, Outcome::pass) << ok.reason;
  EXPECT_EQ(ok.total(Outcome::pass), 1u);
  EXPECT_EQ(ok.total(Outcome::unsupported), 4999u);
  EXPECT_EQ(ok.sets[0]["expect_error"], "ValueError");
  EXPECT_EQ(ok.sets[0]["passed"], 1);
  EXPECT_EQ(ok.sets[0]["outcomes"], "P" + std::string(4999, 'U'));
  const SetResult lib = replay_batch(rec.mma[0], "refused.h5");
  EXPECT_EQ(lib.passed, 1u);
  EXPECT_EQ(lib.unsupported, 4999u);
  EXPECT_NE(lib.results[1].message.find("the same call as " + rec.mma[0].ids[0]), std::string::npos)
      << lib.results[1].message;

  rec.mma[0].attrs["expect_error"] = "ReferenceRejectsError";
  recordings::write_recording(dir / "refused.h5", rec);
  const TierResult bad = run_tier(tiertest::committed_tier("T1"), options_for(dir.path()));
  EXPECT_EQ(bad.verdict, Outcome::fail);
  EXPECT_NE(bad.reason.find("expected ReferenceRejectsError, got ValueError"), std::string::npos)
      << bad.reason;
  EXPECT_EQ(bad.total(Outcome::fail), 1u);
  EXPECT_EQ(replay_batch(rec.mma[0], "refused.h5").failed, 1u);
}

TEST(ReplayTier, AnUnknownPresetWithoutExpectedErrorIsAnErrorNotACrash) {
  auto rec =
      recordings::read_recording(tiertest::committed_recordings() / "public" / "Ada_E4M3.h5");
  rec.mma[0].preset = "no_such_preset";
  const SetResult s = replay_batch(rec.mma[0], "x.h5");
  EXPECT_EQ(s.errors, 5000u);
  EXPECT_EQ(s.passed, 0u);
  EXPECT_NE(s.results[0].message.find("ValueError"), std::string::npos) << s.results[0].message;
}

TEST(ReplayTier, NoRecordingsIsUnsupported) {
  tiertest::TempDir dir;
  const TierResult r = run_tier(tiertest::committed_tier("T1"), options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_NE(r.reason.find("no recording"), std::string::npos);
}

TEST(TierResult, ACheckNeverCountsAsACaseAndAFailedCheckFails) {
  TierResult held;
  held.tier = "T1";
  held.check({"T1/data_budget", true, "1 MiB of 20"});
  judge_tier(held, "no case ran");
  EXPECT_EQ(held.verdict, Outcome::unsupported) << "a check that holds is no PASS";
  EXPECT_EQ(held.case_count(), 0u);

  TierResult over;
  over.tier = "T1";
  over.count(Outcome::pass, 3);
  over.check({"T1/data_budget", false, "30 MiB of 20"});
  judge_tier(over, "no case ran");
  EXPECT_EQ(over.verdict, Outcome::fail);
  EXPECT_NE(over.reason.find("T1/data_budget: 30 MiB of 20"), std::string::npos) << over.reason;
  EXPECT_EQ(over.total(Outcome::fail), 0u);
  EXPECT_NE(junit_xml(over).find("<failure message=\"30 MiB of 20\""), std::string::npos);
}

// JUnit is what CI shows: each outcome maps to the element a CI reader counts the way the
// verdict rule does. A case that could not run is an <error>, an XPASS (an expected failure
// that passed, which fails the run) a <failure>, an XFAIL or UNSUPPORTED a <skipped>; a set's
// testcase takes the verdict of all its cases, so one case that could not run among 4999
// passes makes the set an <error>.
TEST(TierResult, JunitMarksEachOutcomeWithTheElementCiCounts) {
  TierResult r;
  r.tier = "T1";
  r.add({"free/pass", Outcome::pass, 0, ""});
  r.add({"free/xpass", Outcome::xpass, 0, "fixed upstream"});
  r.add({"free/xfail", Outcome::xfail, 0, "known"});
  r.add({"free/error", Outcome::error, 0, "no driver"});
  r.sets.push_back({{"recording", "a.h5"},
                    {"set", "errs"},
                    {"cases", 5000},
                    {"passed", 4999},
                    {"errors", 1},
                    {"seconds", 0.0}});
  r.sets.push_back({{"recording", "a.h5"},
                    {"set", "xp"},
                    {"cases", 10},
                    {"passed", 9},
                    {"xpassed", 1},
                    {"seconds", 0.0}});
  const std::string x = junit_xml(r);
  EXPECT_NE(x.find("name=\"free/xpass\" time=\"0.000\"><failure message=\"XPASS: fixed upstream\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"free/xfail\" time=\"0.000\"><skipped message=\"XFAIL: known\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"free/error\" time=\"0.000\"><error message=\"no driver\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"errs\" time=\"0.000\"><error message=\"0 of 5000 cases differ, 1 "
                   "could not run, 0 not applicable\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"xp\" time=\"0.000\"><failure message=\"0 of 10 cases differ, "
                   "0 could not run, 0 not applicable, 1 XPASS (expected to fail)\""),
            std::string::npos)
      << x;
  // 6 testcases: 2 failures (the XPASS case and the set holding one), 2 errors, 1 skipped.
  EXPECT_NE(x.find("tests=\"6\" failures=\"2\" errors=\"2\" skipped=\"1\""), std::string::npos)
      << x;
}

TEST(TierResult, JunitHasOneSkippedCaseForATierThatDidNotRun) {
  TierResult r;
  r.tier = "T3";
  judge_tier(r, "no case ran");
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  const std::string x = junit_xml(r);
  EXPECT_NE(x.find("<skipped message=\"UNSUPPORTED: no case ran\""), std::string::npos) << x;
  EXPECT_NE(x.find("tests=\"1\""), std::string::npos);
}

} // namespace
} // namespace mmaemu::harness
