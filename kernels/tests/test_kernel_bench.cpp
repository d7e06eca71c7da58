// SPDX-License-Identifier: BSD-2-Clause
// run_kernel_bench on the fake driver (two sm_90 devices, 132 SMs; the real kernels run through
// the host shim, events on the host clock): option checks, UNSUPPORTED without a driver, an
// end-to-end run from fatbins, NVRTC kernels gated but timed only with allow_nvrtc, the
// exactness gate stopping the run before any timing, clock samples from a stand-in nvidia-smi,
// the JSON report and the table.

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loader_test_env.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/kernel_bench.hpp"
#include "mmaemu/kernels/module_loader.hpp"

namespace {

using mmaemu::kernels::BenchOptions;
using mmaemu::kernels::BenchReport;
using mmaemu::kernels::run_kernel_bench;
using mmaemu::outcome::Outcome;
using mmaemu::testing::EnvGuard;
using mmaemu::testing::TempDir;

class KernelBench : public ::testing::Test {
protected:
  void SetUp() override {
    env_.set("MMAEMU_FATBIN_DIR", fatbins_.path().string());
    env_.set("MMAEMU_CACHE_DIR", (cache_.path() / "cache").string());
    env_.unset("MMAEMU_TEST_FORCE_FAIL");
    env_.unset("MMAEMU_FAKE_CUDA_WRONG");
    env_.unset("MMAEMU_DISABLE_CUDA");
    mmaemu::kernels::detail::reset_module_cache_for_testing();
  }
  void TearDown() override { mmaemu::kernels::detail::reset_module_cache_for_testing(); }

  // A tiny, fast run: no warm-up beyond one launch, two 10 ms windows, no clock sampling.
  static BenchOptions tiny() {
    BenchOptions o;
    o.M = 64;
    o.N = 64;
    o.K = 64;
    o.warmup_s = 0;
    o.window_s = 0.01;
    o.windows = 2;
    o.nvidia_smi = "none";
    return o;
  }

  EnvGuard env_;
  TempDir fatbins_{"bench-fatbins"};
  TempDir cache_{"bench-cache"};
};

TEST(KernelBenchParse, SmiSamples) {
  auto s = mmaemu::kernels::parse_smi_sample("1980, 351.20, 0x0000000000000004");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->sm_mhz);
  EXPECT_NEAR(*s->sm_mhz, 1980.0, 1e-9);
  ASSERT_TRUE(s->power_w);
  EXPECT_NEAR(*s->power_w, 351.2, 1e-9);
  EXPECT_EQ(s->throttle, "0x0000000000000004");
  s = mmaemu::kernels::parse_smi_sample("2505, [N/A], 0x0000000000000000\r");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->sm_mhz);
  EXPECT_NEAR(*s->sm_mhz, 2505.0, 1e-9);
  EXPECT_FALSE(s->power_w);
  EXPECT_FALSE(mmaemu::kernels::parse_smi_sample("1980, 351.2"));
  EXPECT_FALSE(mmaemu::kernels::parse_smi_sample("No devices were found"));
  EXPECT_FALSE(mmaemu::kernels::parse_smi_sample("[N/A], [N/A], [N/A]"));
}

TEST_F(KernelBench, BadOptionsAreValueErrors) {
  auto expect_bad = [](BenchOptions o) { EXPECT_THROW(run_kernel_bench(o), mmaemu::ValueError); };
  BenchOptions o = tiny();
  o.kernels = {"v2"};
  expect_bad(o);
  o.kernels = {"v1", "v1"};
  expect_bad(o);
  o = tiny();
  o.M = 0;
  expect_bad(o);
  o = tiny();
  o.N = std::int64_t{1} << 31;
  expect_bad(o);
  o = tiny();
  o.kernels = {"v4"};
  o.K = std::int64_t{1} << 24; // v4's k_max
  expect_bad(o);
  o = tiny();
  o.windows = 0;
  expect_bad(o);
  o = tiny();
  o.window_s = -1;
  expect_bad(o);
  o = tiny();
  o.warmup_s = NAN;
  expect_bad(o);
  o = tiny();
  o.data = "gauss";
  expect_bad(o);
  o = tiny();
  o.device = 2; // the fake has two devices
  expect_bad(o);
}

TEST_F(KernelBench, DisabledCudaIsUnsupported) {
  env_.set("MMAEMU_DISABLE_CUDA", "1");
  const BenchReport r = run_kernel_bench(tiny());
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.reason.find("MMAEMU_DISABLE_CUDA"), std::string::npos) << r.reason;
  const auto j = nlohmann::json::parse(mmaemu::kernels::bench_report_json(r));
  EXPECT_EQ(j["schema"], "mmaemu-bench-kernels/1");
  EXPECT_EQ(j["verdict"], "UNSUPPORTED");
  EXPECT_TRUE(j["device"].is_null());
  EXPECT_EQ(j["options"]["kernels"], nlohmann::json({"v1", "v4", "v9", "tc3", "h1", "h4"}));
}

TEST_F(KernelBench, FatbinRunGatesTimesAndReports) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  BenchOptions o = tiny();
  o.kernels = {"v1", "v4", "h1", "h4"};
  const BenchReport r = run_kernel_bench(o);
  ASSERT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.sm_count, 132);
  EXPECT_EQ(r.cc, 90);
  ASSERT_EQ(r.kernels.size(), 4u);
  const std::vector<std::string> names{"v1", "v4", "h1", "h4"};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& k = r.kernels[i];
    EXPECT_EQ(k.kernel, names[i]);
    EXPECT_EQ(k.source, "fatbin");
    EXPECT_EQ(k.image_sha256.size(), 64u);
    EXPECT_EQ(k.exactness, Outcome::pass) << k.exactness_detail;
    EXPECT_TRUE(k.timed);
    ASSERT_EQ(k.window_tmacs.size(), 2u);
    for (std::size_t w = 0; w < 2; ++w) {
      EXPECT_GE(k.window_launches[w], 1);
      EXPECT_GE(k.window_seconds[w], 0.01);
      EXPECT_GT(k.window_tmacs[w], 0);
    }
    EXPECT_LE(k.min_tmacs, k.median_tmacs);
    EXPECT_LE(k.median_tmacs, k.max_tmacs);
    EXPECT_FALSE(k.mac_per_clk_sm); // no clock
    EXPECT_FALSE(k.target_met);     // not the Evo 2 shape
  }
  EXPECT_NE(r.kernels[0].exactness_detail.find("64x64 block vs the CPU reference (ada)"),
            std::string::npos)
      << r.kernels[0].exactness_detail;
  EXPECT_NE(r.kernels[1].exactness_detail.find("full 64x64 output vs cuda:v1"), std::string::npos)
      << r.kernels[1].exactness_detail;
  EXPECT_NE(r.kernels[3].exactness_detail.find("vs cuda:h1"), std::string::npos);
  EXPECT_EQ(r.kernels[1].target_mac_per_clk_sm, 22.5);
  EXPECT_EQ(r.kernels[3].target_mac_per_clk_sm, 25.0);
  EXPECT_FALSE(r.kernels[0].target_mac_per_clk_sm);
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_live_allocations"), 0);

  const auto j = nlohmann::json::parse(mmaemu::kernels::bench_report_json(r));
  EXPECT_EQ(j["schema"], "mmaemu-bench-kernels/1");
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["device"]["sm_count"], 132);
  EXPECT_EQ(j["device"]["name"], "mmaemu fake GPU sm_90");
  ASSERT_EQ(j["kernels"].size(), 4u);
  EXPECT_EQ(j["kernels"][1]["exactness"]["result"], "PASS");
  EXPECT_EQ(j["kernels"][1]["windows"].size(), 2u);
  EXPECT_TRUE(j["kernels"][1]["tmacs"]["median"].is_number());
  EXPECT_TRUE(j["kernels"][1]["target"]["met"].is_null());
  EXPECT_FALSE(j["kernels"][1]["target"]["counts_for_acceptance"].get<bool>());
  EXPECT_TRUE(j["kernels"][0]["target"].is_null());
  EXPECT_EQ(j["targets"].size(), 2u);

  const std::string table = mmaemu::kernels::bench_report_table(r);
  EXPECT_NE(table.find("TMAC/s median"), std::string::npos) << table;
  EXPECT_NE(table.find("verdict: PASS\n"), std::string::npos) << table;
}

TEST_F(KernelBench, NvrtcKernelsAreGatedButTimedOnlyWhenAllowed) {
  BenchOptions o = tiny();
  o.kernels = {"h1"};
  BenchReport r = run_kernel_bench(o);
  // The gate ran and passed; nothing was timed, and the reason says so.
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_NE(r.reason.find("1 of 1 kernels not timed"), std::string::npos) << r.reason;
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].source, "nvrtc");
  EXPECT_EQ(r.kernels[0].exactness, Outcome::pass);
  EXPECT_FALSE(r.kernels[0].timed);
  EXPECT_NE(r.kernels[0].not_timed_reason.find("--allow-nvrtc"), std::string::npos);

  o.allow_nvrtc = true;
  r = run_kernel_bench(o);
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_TRUE(r.kernels[0].timed);
  EXPECT_EQ(r.kernels[0].source, "nvrtc");
}

TEST_F(KernelBench, PresetKernelAloneIsComparedWithTheReference) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  BenchOptions o = tiny();
  o.kernels = {"h4"};
  o.M = 70; // a partial tile and a gate block of the first 64 rows
  o.N = 300;
  o.K = 48;
  const BenchReport r = run_kernel_bench(o);
  ASSERT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_NE(r.kernels[0].exactness_detail.find("first 64x256 block vs the CPU reference (hopper)"),
            std::string::npos)
      << r.kernels[0].exactness_detail;
}

TEST_F(KernelBench, MismatchStopsTheRunBeforeTiming) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  env_.set("MMAEMU_FAKE_CUDA_WRONG", "1"); // flips one bit of C[0] after every launch
  const int before = mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_launches");
  const BenchReport r = run_kernel_bench(tiny());
  EXPECT_EQ(r.verdict, Outcome::fail);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.reason.find("cuda:v1"), std::string::npos) << r.reason;
  ASSERT_EQ(r.kernels.size(), 6u);
  EXPECT_EQ(r.kernels[0].exactness, Outcome::fail);
  EXPECT_NE(r.kernels[0].exactness_detail.find("1 of 4096 outputs differ; first (0, 0)"),
            std::string::npos)
      << r.kernels[0].exactness_detail;
  for (const auto& k : r.kernels)
    EXPECT_FALSE(k.timed);
  // One launch: v1's gate. Nothing else ran.
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_launches") - before, 1);
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_live_allocations"), 0);
  const auto j = nlohmann::json::parse(mmaemu::kernels::bench_report_json(r));
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["kernels"][0]["exactness"]["result"], "FAIL");
  EXPECT_EQ(j["kernels"][1]["exactness"]["result"], "UNSUPPORTED");
}

TEST_F(KernelBench, UnloadableKernelsAreReported) {
  env_.set("MMAEMU_TEST_FORCE_FAIL", "fatbin,nvrtc");
  BenchOptions o = tiny();
  o.kernels = {"v1"};
  const BenchReport r = run_kernel_bench(o);
  EXPECT_EQ(r.verdict, Outcome::unsupported);
  EXPECT_EQ(r.exit_code, 4);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_FALSE(r.kernels[0].load_error.empty());
  EXPECT_EQ(r.kernels[0].exactness, Outcome::unsupported);
}

TEST_F(KernelBench, ClockSamplesGiveMacPerClockPerSm) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  TempDir bin("bench-smi");
  const auto smi = bin / "nvidia-smi";
  mmaemu::testing::spit(smi, "#!/bin/sh\necho '1500, 300.5, 0x0000000000000004'\n");
  ASSERT_EQ(::chmod(smi.c_str(), 0755), 0);
  BenchOptions o = tiny();
  o.kernels = {"v1"};
  o.window_s = 0.3;
  o.windows = 1;
  o.sample_interval_s = 0.05;
  o.nvidia_smi = smi.string();
  const BenchReport r = run_kernel_bench(o);
  ASSERT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_EQ(r.nvidia_smi, smi.string());
  const auto& k = r.kernels[0];
  ASSERT_FALSE(k.samples.empty());
  ASSERT_TRUE(k.mean_sm_mhz);
  EXPECT_NEAR(*k.mean_sm_mhz, 1500.0, 1e-9);
  ASSERT_TRUE(k.mac_per_clk_sm);
  // A derived figure (floating point), not a bit claim: equal within rounding.
  const double expected = k.median_tmacs * 1e12 / (1500e6 * 132);
  EXPECT_NEAR(*k.mac_per_clk_sm, expected, 1e-9 * expected);
  EXPECT_EQ(k.throttle_reasons, std::vector<std::string>{"0x0000000000000004"});
  ASSERT_TRUE(k.samples[0].power_w);
  EXPECT_NEAR(*k.samples[0].power_w, 300.5, 1e-9);
}

TEST_F(KernelBench, BrokenNvidiaSmiLeavesTheClockUnknown) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  TempDir bin("bench-smi");
  const auto smi = bin / "nvidia-smi";
  mmaemu::testing::spit(smi, "#!/bin/sh\necho 'No devices were found'\nexit 6\n");
  ASSERT_EQ(::chmod(smi.c_str(), 0755), 0);
  BenchOptions o = tiny();
  o.kernels = {"v1"};
  o.nvidia_smi = smi.string();
  const BenchReport r = run_kernel_bench(o);
  ASSERT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_EQ(r.nvidia_smi, "");
  EXPECT_NE(r.clock_note.find("no usable sample"), std::string::npos) << r.clock_note;
  EXPECT_FALSE(r.kernels[0].mac_per_clk_sm);
}

} // namespace

namespace {

// The gated kernels are benchmarked like v4: exactness against cuda:v1 on the full output first,
// then timed. The fake device of this process is sm_90 (read once per process), where the shim
// emulates Hopper's bf16 mma.sync, under which v9's design holds.
TEST_F(KernelBench, GatedKernelIsGatedAgainstV1AndTimed) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  BenchOptions o = tiny();
  o.kernels = {"v1", "v9"};
  const BenchReport r = run_kernel_bench(o);
  ASSERT_EQ(r.verdict, Outcome::pass) << r.reason;
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[1].exactness, Outcome::pass)
      << r.kernels[1].exactness_detail << r.kernels[1].load_error;
  EXPECT_NE(r.kernels[1].exactness_detail.find("full 64x64 output vs cuda:v1"), std::string::npos)
      << r.kernels[1].exactness_detail;
  EXPECT_TRUE(r.kernels[1].timed);
}

// tc3 has SASS for cc 8.0, 8.6 and 8.9 only: on sm_90 it is listed, not loaded and not timed.
TEST_F(KernelBench, Tc3IsNotTimedOutsideItsArchitectures) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  BenchOptions o = tiny();
  o.kernels = {"v1", "tc3"};
  const BenchReport r = run_kernel_bench(o);
  ASSERT_EQ(r.verdict, Outcome::pass) << r.reason;
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_FALSE(r.kernels[1].timed);
  EXPECT_EQ(r.kernels[1].exactness, Outcome::unsupported);
  EXPECT_NE(r.kernels[1].load_error.find("sm_90"), std::string::npos) << r.kernels[1].load_error;
  EXPECT_NE(r.reason.find("1 of 2 kernels not timed"), std::string::npos) << r.reason;
}

} // namespace
