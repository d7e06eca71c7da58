// SPDX-License-Identifier: BSD-2-Clause
// T3 (tier kind "device") as `mmaemu tier run T3` in a separate process: UNSUPPORTED without a
// device; on the fake libcuda of kernels/tests (the kernels run on the CPU through the host
// shim) every kernel is gated, replays the recordings it can express, the adversarial sets
// and a (small) projection bit for bit, and the tier still cannot PASS: a simulated device is
// not a GPU.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::testing::CliEnv;
using mmaemu::testing::run_command;
using mmaemu::testing::TempDir;
using testing::HasSubstr;

class TierDevice : public ::testing::Test {
protected:
  // The committed T3 with a small projection and adversarial size, in a folder of its own.
  fs::path small_tiers() {
    const fs::path dir = dir_ / "tiers";
    fs::create_directories(dir);
    auto t = nlohmann::json::parse(
        mmaemu::testing::slurp(fs::path(MMAEMU_SOURCE_DIR) / "tiers" / "T3.json"));
    t["run"]["projection_m"] = 70;
    t["run"]["projection_n"] = 66;
    t["run"]["projection_k"] = 100;
    t["run"]["adversarial_size"] = 32;
    std::ofstream(dir / "T3.json") << t.dump(2);
    return dir;
  }
  CliEnv env(bool fake) const {
    CliEnv e{{"MMAEMU_CACHE_DIR", (dir_ / "cache").string()}};
    e["MMAEMU_LIBCUDA_PATH"] = fake ? MMAEMU_FAKE_CUDA_PATH : "/nonexistent/libcuda.so.1";
    return e;
  }
  TempDir dir_{"tier_device"};
};

TEST_F(TierDevice, WithoutADeviceT3IsUnsupported) {
  const auto r = run_command(MMAEMU_BIN, env(false), {"tier", "run", "T3", "--no-log"});
  EXPECT_EQ(r.status, 4) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("T3: UNSUPPORTED: needs a CUDA device"));
  EXPECT_THAT(r.all(), HasSubstr("no CUDA driver"));
}

TEST_F(TierDevice, OnTheSimulatedDeviceEveryKernelMatchesButT3CannotPass) {
  const auto r = run_command(MMAEMU_BIN, env(true),
                             {"tier", "run", "T3", "--no-log", "--json", "-", "--tiers",
                              small_tiers().string(), "--trust-tiers"});
  EXPECT_EQ(r.status, 1) << r.all();
  for (const char* k : {"cuda:v1", "cuda:v4", "cuda:h1", "cuda:h4"}) {
    EXPECT_THAT(r.err + r.out, HasSubstr(std::string("PASS         ") + k + "/gates")) << k;
    EXPECT_THAT(r.err + r.out, HasSubstr(std::string(k) + "/projection/70x66x100: sha256"));
  }
  // The hopper kernels replay the public H100 E4M3 set (c zeroed by the hardware): 5,000 cases.
  // H100_E5M2 is not run on them (the kernels serve only E4M3 x E4M3), nor the Ada sets (c).
  EXPECT_THAT(r.all(), HasSubstr("cuda:h4: recordings: 5000 passed, 0 failed"));
  EXPECT_THAT(r.all(), HasSubstr("T3/real_device"));
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["totals"]["FAIL"], 0) << "no case failed: only the real-device check";
  EXPECT_EQ(j["totals"]["ERROR"], 0);
  EXPECT_GT(j["totals"]["PASS"], 10000);
}

TEST_F(TierDevice, AWrongKernelFailsItsGateAndTheTier) {
  CliEnv e = env(true);
  e["MMAEMU_FAKE_CUDA_WRONG"] = "1";
  const auto r = run_command(
      MMAEMU_BIN, e,
      {"tier", "run", "T3", "--no-log", "--tiers", small_tiers().string(), "--trust-tiers"});
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("FAIL         cuda:v4/gates"));
}

// One GPU of a fleet per shard: shard k of N takes kernels k-1, k-1+N, ... with all their
// cases, so that the shards together hold every kernel's cases once.
TEST_F(TierDevice, ShardsSplitTheKernelsBetweenThem) {
  const std::string tiers = small_tiers().string();
  std::map<std::string, int> seen;
  for (const char* s : {"1/3", "2/3", "3/3"}) {
    const auto r = run_command(
        MMAEMU_BIN, env(true),
        {"tier", "run", "T3", "--no-log", "--shard", s, "--tiers", tiers, "--trust-tiers"});
    for (const char* k : {"cuda:v1", "cuda:v4", "cuda:h1", "cuda:h4"}) {
      if (r.all().find(std::string(k) + "/gates") != std::string::npos)
        ++seen[k];
    }
  }
  for (const char* k : {"cuda:v1", "cuda:v4", "cuda:h1", "cuda:h4"})
    EXPECT_EQ(seen[k], 1) << k << " in " << seen[k] << " shards";
}

} // namespace
