// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu bench kernels` as a separate process, without a CUDA driver and on the fake libcuda
// and NVRTC of kernels/tests (the kernels run through the host shim): exit codes (0 the run
// finished, 1 exactness mismatch before timing, 2 usage, 4 no device), the table and the JSON
// report.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "fake_cuda_env.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::testing::TempDir;
using testing::HasSubstr;

using RunResult = mmaemu::testing::CliResult;
using Env = mmaemu::testing::CliEnv;

// Runs the built mmaemu with `args` in an environment without any of mmaemu's variables except
// those of `env` (tests/support/cli_run.hpp).
RunResult run_cli(const Env& env, const std::vector<std::string>& args) {
  return mmaemu::testing::run_command(MMAEMU_BIN, env, args);
}

class BenchKernelsCli : public ::testing::Test {
protected:
  // fake_cuda_env.hpp: no driver, or the fake driver and NVRTC with no fatbins.
  Env no_driver() const { return mmaemu::testing::no_driver_env(dir_.path()); }
  Env fake() const { return mmaemu::testing::fake_cuda_env(dir_.path()); }
  static Env with(Env env, const std::string& k, const std::string& v) {
    return mmaemu::testing::with_var(std::move(env), k, v);
  }
  // A tiny run: --shape 64,64,64, one warm-up launch, two 10 ms windows, no clock sampling.
  std::vector<std::string> tiny(std::vector<std::string> more = {}) const {
    std::vector<std::string> a{"bench",      "kernels", "--shape",      "64,64,64",
                               "--warmup-s", "0",       "--window-s",   "0.01",
                               "--windows",  "2",       "--nvidia-smi", "none"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
  nlohmann::json read_json(const fs::path& p) const {
    nlohmann::json j;
    EXPECT_NO_THROW(j = nlohmann::json::parse(mmaemu::testing::slurp(p))) << p;
    return j;
  }
  TempDir dir_{"bench_kernels_cli"};
};

TEST_F(BenchKernelsCli, WithoutADriverItIsUnsupportedExitFour) {
  const fs::path json = dir_ / "r.json";
  const auto r = run_cli(no_driver(), {"bench", "kernels", "--json", json.string()});
  EXPECT_EQ(r.status, 4) << r.all();
  EXPECT_THAT(r.out, HasSubstr("UNSUPPORTED: no CUDA driver"));
  const auto j = read_json(json);
  EXPECT_EQ(j["schema"], "mmaemu-bench-kernels/1");
  EXPECT_EQ(j["verdict"], "UNSUPPORTED");
  EXPECT_EQ(j["exit_code"], 4);
  EXPECT_THAT(j["reason"].get<std::string>(), HasSubstr("no CUDA driver"));
  EXPECT_EQ(j["options"]["shape"]["N"], 5760); // the Evo 2 1B projection by default

  const auto disabled = run_cli(with(fake(), "MMAEMU_DISABLE_CUDA", "1"), {"bench", "kernels"});
  EXPECT_EQ(disabled.status, 4) << disabled.all();
  EXPECT_THAT(disabled.out, HasSubstr("MMAEMU_DISABLE_CUDA=1"));
}

TEST_F(BenchKernelsCli, FakeDriverRunsEndToEndWithAllowNvrtc) {
  const fs::path json = dir_ / "r.json";
  const auto r = run_cli(fake(), tiny({"--allow-nvrtc", "--json", json.string()}));
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("TMAC/s median"));
  // Every kernel of the build; tc3 has no code for the fake sm_90 and is listed, not timed.
  EXPECT_THAT(r.out, HasSubstr("verdict: PASS: 1 of 6 kernels not timed; tc3: has no SASS"));
  EXPECT_THAT(r.err, HasSubstr("exactness PASS"));
  const auto j = read_json(json);
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["device"]["cc"], 90);
  ASSERT_EQ(j["kernels"].size(), 6u);
  for (const auto& k : j["kernels"]) {
    if (k["kernel"] == "tc3") {
      EXPECT_EQ(k["exactness"]["result"], "UNSUPPORTED") << k.dump();
      EXPECT_FALSE(k["timed"].get<bool>()) << k.dump();
      continue;
    }
    EXPECT_EQ(k["source"], "nvrtc") << k.dump();
    EXPECT_EQ(k["exactness"]["result"], "PASS") << k.dump();
    EXPECT_TRUE(k["timed"].get<bool>()) << k.dump();
    EXPECT_EQ(k["windows"].size(), 2u);
    EXPECT_GT(k["tmacs"]["median"].get<double>(), 0);
    EXPECT_EQ(k["image_sha256"].get<std::string>().size(), 64u);
  }
}

TEST_F(BenchKernelsCli, NvrtcKernelsAreNotTimedWithoutAllowNvrtc) {
  const auto r = run_cli(fake(), tiny({"--kernels", "v1,h4"}));
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("not timed"));
  EXPECT_THAT(r.out, HasSubstr("verdict: PASS: 2 of 2 kernels not timed"));
}

TEST_F(BenchKernelsCli, MismatchExitsOneBeforeTiming) {
  const fs::path json = dir_ / "r.json";
  const auto r = run_cli(with(fake(), "MMAEMU_FAKE_CUDA_WRONG", "1"),
                         tiny({"--allow-nvrtc", "--json", json.string()}));
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("verdict: FAIL: cuda:v1 is not bit-exact"));
  EXPECT_THAT(r.err, testing::Not(HasSubstr("window 1")));
  const auto j = read_json(json);
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["exit_code"], 1);
  for (const auto& k : j["kernels"])
    EXPECT_FALSE(k["timed"].get<bool>());
}

TEST_F(BenchKernelsCli, BadOptionsExitTwo) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"bench", "kernels", "--shape", "64,64"},
           {"bench", "kernels", "--kernels", "zz"},
           {"bench", "kernels", "--windows", "0"},
           {"bench", "kernels", "--window-s", "-1"},
           {"bench", "kernels", "--data", "normal"},
           {"bench", "kernels", "--json", dir_.path().string()}}) {
    const auto r = run_cli(fake(), args);
    EXPECT_EQ(r.status, 2) << args[2] << ": " << r.all();
  }
  // A kernel without code for the device (tc3 on the fake sm_90) is unavailable (4).
  const auto tc3 = run_cli(fake(), {"bench", "kernels", "--kernels", "tc3"});
  EXPECT_EQ(tc3.status, 4) << tc3.all();
  EXPECT_THAT(tc3.all(), HasSubstr("no SASS or PTX for sm_90"));
}

} // namespace
