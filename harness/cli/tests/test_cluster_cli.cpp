// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu cluster slurm`: the job array and merge scripts it writes (what the tier file and the
// options put in them), what it refuses, and the scripts run by hand with nothing but
// SLURM_ARRAY_TASK_ID set (another engine): the merged log equals one machine's run, and a
// shard that never ran makes the merge fail, named and UNSUPPORTED. The real Slurm run is
// scripts/slurm/test-cluster (make test-cluster).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mmaemu/support/process.hpp"
#include "tier_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tiertest::run_mmaemu;

struct Ran {
  int status = -1;
  std::string output;
};

// A batch script run as one array task (or the merge job) outside Slurm.
Ran run_script(const fs::path& script, const std::map<std::string, std::string>& env) {
  mmaemu::support::ProcessOptions po;
  po.set_env = env;
  po.unset_env = {"MMAEMU_SIGNING_KEY", "MMAEMU_LOG_DIR", "SLURM_CPUS_PER_TASK",
                  "SLURM_ARRAY_TASK_ID"};
  for (const auto& [k, v] : env)
    std::erase(po.unset_env, k);
  po.timeout_s = 600;
  const auto r = mmaemu::support::run_process({"bash", script.string()}, po);
  return {r.exit_code, r.output};
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

class ClusterCli : public ::testing::Test {
protected:
  tiertest::TempDir tmp;
};

TEST_F(ClusterCli, T1ArrayHasOneTaskPerShardItsBudgetAndNoGpu) {
  const fs::path run = tmp / "run";
  const auto r = run_mmaemu({"cluster", "slurm", "T1", "--shards", "3", "--run-dir", run.string(),
                             "--partition", "cpu", "--account", "lab"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string s = tiertest::slurp(run / "shard.sbatch");
  EXPECT_TRUE(has_line(s, "#SBATCH --array=0-2")) << s;
  // tiers/T1.json: budget 300 s; twice that, in minutes.
  EXPECT_TRUE(has_line(s, "#SBATCH --time=10")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --partition=cpu")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --account=lab")) << s;
  EXPECT_EQ(s.find("--gres"), std::string::npos) << s;
  EXPECT_NE(s.find("k=$((SLURM_ARRAY_TASK_ID + 1))"), std::string::npos) << s;
  EXPECT_NE(s.find(" tier run T1 --shard \"$k/$n\""), std::string::npos) << s;
  EXPECT_NE(s.find("--log-dir " + (run / "logs").string()), std::string::npos) << s;
  const std::string m = tiertest::slurp(run / "merge.sbatch");
  EXPECT_NE(m.find("report merge --shards \"$n\" --name \"$name\""), std::string::npos) << m;
  EXPECT_TRUE(has_line(m, "#SBATCH --partition=cpu")) << m;
  const std::string sub = tiertest::slurp(run / "submit.sh");
  EXPECT_NE(sub.find("--dependency=afterany:\"$array\""), std::string::npos) << sub;
  const json plan = json::parse(tiertest::slurp(run / "run.json"));
  EXPECT_EQ(plan["shards"], 3);
  EXPECT_EQ(plan["log_name"], "T1");
  // One folder per run: the same one again is refused.
  EXPECT_EQ(
      run_mmaemu({"cluster", "slurm", "T1", "--shards", "3", "--run-dir", run.string()}).status, 2);
}

TEST_F(ClusterCli, TiersThatNeedADeviceAskForGpusThroughGres) {
  for (const char* tier : {"T3", "T4g", "T6g"}) {
    const fs::path run = tmp / tier;
    const auto r = run_mmaemu({"cluster", "slurm", tier, "--shards", "2", "--run-dir", run.string(),
                               "--partition", "cpu", "--gpu-partition", "a100"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const std::string s = tiertest::slurp(run / "shard.sbatch");
    EXPECT_TRUE(has_line(s, "#SBATCH --gres=gpu:1")) << tier << "\n" << s;
    EXPECT_TRUE(has_line(s, "#SBATCH --partition=a100")) << tier << "\n" << s;
    // The merge needs no GPU: the CPU partition.
    EXPECT_TRUE(has_line(tiertest::slurp(run / "merge.sbatch"), "#SBATCH --partition=cpu"));
  }
  const fs::path run = tmp / "two";
  ASSERT_EQ(run_mmaemu({"cluster", "slurm", "T3", "--shards", "4", "--run-dir", run.string(),
                        "--gpus", "2", "--gres-type", "h100", "--time-limit", "42"})
                .status,
            0);
  const std::string s = tiertest::slurp(run / "shard.sbatch");
  EXPECT_TRUE(has_line(s, "#SBATCH --gres=h100:2")) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --time=42")) << s;
  EXPECT_EQ(run_mmaemu({"cluster", "slurm", "T3", "--shards", "2", "--run-dir",
                        (tmp / "none").string(), "--gpus", "0"})
                .status,
            2);
}

TEST_F(ClusterCli, MutantShardsRunTheCampaignWithItsOptions) {
  const fs::path run = tmp / "mut";
  const auto r =
      run_mmaemu({"cluster", "slurm", "T4", "--shards", "4", "--run-dir", run.string(), "--only",
                  "^plan\\.", "--mutant-timeout", "300", "--cpus-per-task", "2"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string s = tiertest::slurp(run / "shard.sbatch");
  EXPECT_NE(s.find(" mutants run --tier cpu --shard \"$k/$n\" --jobs \"$jobs\""), std::string::npos)
      << s;
  EXPECT_NE(s.find("--only '^plan\\.'"), std::string::npos) << s;
  EXPECT_NE(s.find("--timeout 300"), std::string::npos) << s;
  EXPECT_TRUE(has_line(s, "#SBATCH --cpus-per-task=2")) << s;
  // T4's budget: 1200 s, twice that.
  EXPECT_TRUE(has_line(s, "#SBATCH --time=40")) << s;
  EXPECT_NE(tiertest::slurp(run / "merge.sbatch").find("name=mutants"), std::string::npos);
}

TEST_F(ClusterCli, WhatCannotRunAsAnArrayIsRefusedBeforeAnythingIsWritten) {
  const fs::path run = tmp / "r";
  // T7 builds one package; --only belongs to the mutation tiers; a name sbatch would misread.
  EXPECT_EQ(
      run_mmaemu({"cluster", "slurm", "T7", "--shards", "2", "--run-dir", run.string()}).status, 2);
  EXPECT_EQ(run_mmaemu({"cluster", "slurm", "T1", "--shards", "2", "--run-dir", run.string(),
                        "--only", "x"})
                .status,
            2);
  EXPECT_EQ(run_mmaemu({"cluster", "slurm", "T1", "--shards", "2", "--run-dir", run.string(),
                        "--partition", "a b"})
                .status,
            2);
  EXPECT_EQ(
      run_mmaemu({"cluster", "slurm", "T1", "--shards", "0", "--run-dir", run.string()}).status, 2);
  EXPECT_EQ(
      run_mmaemu({"cluster", "slurm", "T9", "--shards", "2", "--run-dir", run.string()}).status, 2);
  EXPECT_FALSE(fs::exists(run));
}

// The scripts without Slurm: the array task id is the only thing an engine supplies.
TEST_F(ClusterCli, ScriptsRunByHandMergeToTheSingleMachineResult) {
  const fs::path keys = tmp / "keys";
  fs::create_directories(keys);
  ASSERT_EQ(run_mmaemu({"report", "keygen", "--out", (tmp / "k.pem").string()}).status, 0);
  fs::rename(tmp / "k.pub", keys / "k.pub");
  const fs::path run = tmp / "run";
  ASSERT_EQ(run_mmaemu({"cluster", "slurm", "T1", "--shards", "2", "--run-dir", run.string(),
                        "--signing-key", (tmp / "k.pem").string(), "--keys", keys.string()})
                .status,
            0);
  for (const char* t : {"0", "1"}) {
    const Ran task = run_script(run / "shard.sbatch", {{"SLURM_ARRAY_TASK_ID", t}});
    ASSERT_EQ(task.status, 0) << task.output;
  }
  // A task id outside the array is refused.
  EXPECT_EQ(run_script(run / "shard.sbatch", {{"SLURM_ARRAY_TASK_ID", "2"}}).status, 2);
  const Ran merge = run_script(run / "merge.sbatch", {});
  ASSERT_EQ(merge.status, 0) << merge.output;
  const fs::path merged = run / "merged" / "T1.json";
  const json m = json::parse(tiertest::slurp(merged));
  EXPECT_EQ(m["verdict"], "PASS");
  EXPECT_EQ(m["signed"], true);
  const auto single = run_mmaemu({"tier", "run", "T1", "--log-dir", (tmp / "single").string()});
  ASSERT_EQ(single.status, 0) << single.err;
  fs::path single_log;
  for (const auto& e : fs::recursive_directory_iterator(tmp / "single"))
    if (e.path().filename() == "T1.json")
      single_log = e.path();
  const auto same = run_mmaemu({"report", "compare", merged.string(), single_log.string()});
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  // One letter changed: compare says so.
  json changed = m;
  std::string& letters = changed["sets"][0]["outcomes"].get_ref<std::string&>();
  letters[0] = letters[0] == 'P' ? 'F' : 'P';
  tiertest::spit(tmp / "changed.json", changed.dump());
  const auto differ =
      run_mmaemu({"report", "compare", (tmp / "changed.json").string(), single_log.string()});
  EXPECT_EQ(differ.status, 1) << differ.out;
  EXPECT_NE(differ.out.find("outcomes"), std::string::npos) << differ.out;
}

TEST_F(ClusterCli, AShardThatNeverRanFailsTheMergeAndIsNamed) {
  const fs::path run = tmp / "run";
  ASSERT_EQ(
      run_mmaemu({"cluster", "slurm", "T1", "--shards", "2", "--run-dir", run.string()}).status, 0);
  ASSERT_EQ(run_script(run / "shard.sbatch", {{"SLURM_ARRAY_TASK_ID", "0"}}).status, 0);
  // Task 1 started and was stopped before it ended: a start line, no end line, no log.
  tiertest::spit(run / "tasks" / "shard2.txt", "start shard 2/2: job 7 (array task 6_1)\n");
  const Ran merge = run_script(run / "merge.sbatch", {});
  EXPECT_EQ(merge.status, 1) << merge.output;
  EXPECT_NE(merge.output.find("shard 2/2 has no log: its task was stopped midway"),
            std::string::npos)
      << merge.output;
  const json m = json::parse(tiertest::slurp(run / "merged" / "T1.json"));
  EXPECT_EQ(m["verdict"], "UNSUPPORTED");
  ASSERT_EQ(m["missing_shards"].size(), 1u);
  EXPECT_EQ(m["missing_shards"][0]["shard"], "2/2");
  for (const auto& s : m["sets"]) {
    const std::string o = s["outcomes"];
    for (std::size_t i = 1; i < o.size(); i += 2)
      EXPECT_EQ(o[i], 'U') << s["set"] << " " << o;
  }
  // No shard at all: nothing to merge, and said so.
  const fs::path empty = tmp / "empty";
  ASSERT_EQ(
      run_mmaemu({"cluster", "slurm", "T1", "--shards", "2", "--run-dir", empty.string()}).status,
      0);
  const Ran none = run_script(empty / "merge.sbatch", {});
  EXPECT_EQ(none.status, 1) << none.output;
  EXPECT_NE(none.output.find("all 2 shards are missing"), std::string::npos) << none.output;
}

} // namespace
