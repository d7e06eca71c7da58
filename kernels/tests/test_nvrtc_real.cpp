// SPDX-License-Identifier: BSD-2-Clause
// Every kernel of kernel_specs() through the real NVRTC (the CUDA toolkit's libnvrtc, found by
// the library ladder) for sm_75, 80, 86, 89, 90, 100 and 120 (those at or above the kernel's
// min_cc), and one kernel through the whole ladder on the fake driver with the real NVRTC.
// Skipped, naming the reason, when no libnvrtc can be opened.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/host/host_kernels.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/module_loader.hpp"
#include "mmaemu/kernels/nvrtc_api.hpp"

namespace {

namespace nvrtc = mmaemu::kernels::nvrtc;
using mmaemu::kernels::KernelSpec;
using mmaemu::testing::EnvGuard;
using mmaemu::testing::TempDir;

constexpr int kArchs[] = {75, 80, 86, 89, 90, 100, 120};
constexpr std::uint16_t kEmCuda = 190; // ELF e_machine of a cubin

class RealNvrtc : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    // main() points MMAEMU_NVRTC_PATH at the fake; these tests want the ladder's own choice.
    env_.unset("MMAEMU_NVRTC_PATH");
    if (!nvrtc::nvrtc_available(&why_))
      GTEST_SKIP() << "libnvrtc cannot be opened: " << why_;
    if (nvrtc::nvrtc_library().find("fake") != std::string::npos)
      GTEST_SKIP() << "the fake NVRTC was loaded first in this process";
  }
  EnvGuard env_;
  std::string why_;
};

std::vector<mmaemu::kernels::nvrtc::Header> headers() {
  std::vector<nvrtc::Header> h;
  for (const auto& f : mmaemu::kernels::kernel_headers())
    h.push_back({std::string(f.name), std::string(f.content)});
  return h;
}

TEST_P(RealNvrtc, CompilesTheKernelForEveryReleaseArchitecture) {
  const KernelSpec* spec = mmaemu::kernels::find_kernel_spec(GetParam());
  ASSERT_NE(spec, nullptr);
  const auto [major, minor] = nvrtc::nvrtc_version();
  int compiled = 0;
  for (const int arch : kArchs) {
    if (arch < spec->min_cc || !mmaemu::kernels::spec_runs_on(*spec, arch))
      continue; // tc3: SASS for 8.0, 8.6, 8.9 only
    SCOPED_TRACE("sm_" + std::to_string(arch) + " NVRTC " + std::to_string(major) + "." +
                 std::to_string(minor));
    nvrtc::CompileResult r;
    try {
      r = nvrtc::compile(std::string(spec->source),
                         std::string(mmaemu::kernels::kernel_source(spec->source)), headers(),
                         arch);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ASSERT_GE(r.cubin.size(), 64u);
    EXPECT_EQ(r.cubin.compare(0, 4,
                              "\x7f"
                              "ELF"),
              0);
    std::uint16_t machine = 0;
    std::memcpy(&machine, r.cubin.data() + 0x12, 2);
    EXPECT_EQ(machine, kEmCuda);
    // The entry point has the ABI's unmangled name.
    EXPECT_NE(r.cubin.find(std::string(spec->symbol)), std::string::npos);
    ++compiled;
  }
  EXPECT_GT(compiled, 0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, RealNvrtc, ::testing::Values("v1", "v4", "v9", "tc3", "h1", "h4"),
                         [](const auto& info) { return info.param; });

class RealNvrtcOnFakeDriver : public RealNvrtc {};

TEST_P(RealNvrtcOnFakeDriver, LadderCompilesLoadsAndRunsTheKernel) {
  TempDir fatbins("no-fatbins");
  TempDir cache("real-nvrtc-cache");
  env_.set("MMAEMU_FATBIN_DIR", fatbins.path().string());
  env_.set("MMAEMU_CACHE_DIR", cache.path().string());
  const KernelSpec* spec = mmaemu::kernels::find_kernel_spec(GetParam());
  ASSERT_NE(spec, nullptr);
  const auto& device = mmaemu::kernels::driver::device(0);
  const auto& loaded = mmaemu::kernels::load_module(*spec, device);
  EXPECT_EQ(loaded.source, "nvrtc");
  EXPECT_EQ(loaded.nvrtc_cache, "stored");
  EXPECT_EQ(loaded.image_bytes,
            static_cast<std::size_t>(mmaemu::testing::fake_symbol<unsigned long long (*)()>(
                MMAEMU_FAKE_CUDA_PATH, "mmaemu_fake_cuda_last_image_size")()));
  const int M = 40, N = 72, K = 80;
  std::mt19937 rng(11);
  std::vector<std::uint8_t> a(M * K), b(N * K);
  for (auto& c : a)
    c = static_cast<std::uint8_t>(rng() % 0x7E);
  for (auto& c : b)
    c = static_cast<std::uint8_t>(0x80 | (rng() % 0x7E));
  std::vector<float> got(M * N), want(M * N);
  mmaemu::kernels::run_kernel(*spec, loaded, device, a.data(), K, b.data(), K, M, N, K, got.data());
  namespace host = mmaemu::kernels::host;
  host::run_host_kernel(
      host::host_kernel(spec->name),
      {spec->tile_m, spec->tile_n, spec->threads, static_cast<std::size_t>(spec->dynamic_smem)},
      a.data(), b.data(), want.data(), M, N, K);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, RealNvrtcOnFakeDriver, ::testing::Values("v1", "h4"),
                         [](const auto& info) { return info.param; });

// The mma.sync wrappers the tensor-core kernels use (mmaemu_mma.cuh): a kernel calling each
// of them compiles through NVRTC, with the fixed options, for every architecture from sm_80.
class RealNvrtcMma : public ::testing::Test {
protected:
  void SetUp() override {
    env_.unset("MMAEMU_NVRTC_PATH");
    if (!nvrtc::nvrtc_available(&why_))
      GTEST_SKIP() << "libnvrtc cannot be opened: " << why_;
    if (nvrtc::nvrtc_library().find("fake") != std::string::npos)
      GTEST_SKIP() << "the fake NVRTC was loaded first in this process";
  }
  EnvGuard env_;
  std::string why_;
};

TEST_F(RealNvrtcMma, EveryWrapperCompilesForSm80AndLater) {
  const std::string src = R"(#include "mmaemu_mma.cuh"
extern "C" __global__ void mma_check(const unsigned int* in, float* out, unsigned int* outh) {
  const int l = threadIdx.x;
  unsigned int a[4] = {in[l], in[l + 32], in[l + 64], in[l + 96]};
  unsigned int b[2] = {in[l + 128], in[l + 160]};
  unsigned int ch[2] = {in[l + 192], in[l + 224]}, dh[2];
  float c[4] = {0.f, 1.f, 2.f, 3.f}, d[4];
  mmaemu_mma_m16n8k16_f32_f16(d, a, b, c);
  mmaemu_mma_m16n8k16_f32_bf16(c, a, b, d);
  mmaemu_mma_m16n8k16_f16_f16(dh, a, b, ch);
  mmaemu_mma_m16n8k8_f32_f16(d, a, b, c);
  mmaemu_mma_m16n8k8_f32_bf16(c, a, b, d);
  mmaemu_mma_m16n8k8_f16_f16(ch, a, b, dh);
  for (int i = 0; i < 4; ++i) out[l * 4 + i] = c[i];
  outh[2 * l] = ch[0];
  outh[2 * l + 1] = ch[1];
}
)";
  for (const int arch : {80, 86, 89, 90, 100, 120}) {
    SCOPED_TRACE("sm_" + std::to_string(arch));
    try {
      const nvrtc::CompileResult r = nvrtc::compile("mma_check.cu", src, headers(), arch);
      ASSERT_GE(r.cubin.size(), 64u);
      EXPECT_EQ(r.cubin.compare(0, 4,
                                "\x7f"
                                "ELF"),
                0);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

} // namespace
