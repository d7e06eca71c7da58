// SPDX-License-Identifier: BSD-2-Clause
// The loader ladder and run_kernel on the fake driver and the fake NVRTC: which rung is used
// and why, the NVRTC cubin cache, the per-(device, context) module cache, row chunking, the
// shared-memory opt-in, the K limit, zero sizes, and device memory freed on every path.

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/cache_dir.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/host/host_kernels.hpp"
#include "mmaemu/kernels/module_loader.hpp"
#include "mmaemu/kernels/nvrtc_api.hpp"
#include "mmaemu/support/digest.hpp"

namespace {

namespace fs = std::filesystem;
namespace driver = mmaemu::kernels::driver;
using mmaemu::kernels::KernelSpec;
using mmaemu::kernels::LoadedModule;
using mmaemu::testing::EnvGuard;
using mmaemu::testing::TempDir;

const KernelSpec& spec(const char* name) {
  const KernelSpec* s = mmaemu::kernels::find_kernel_spec(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

class Loader : public ::testing::Test {
protected:
  void SetUp() override {
    env_.set("MMAEMU_FATBIN_DIR", fatbins_.path().string());
    env_.set("MMAEMU_CACHE_DIR", (cache_.path() / "cache").string());
    env_.unset("MMAEMU_TEST_FORCE_FAIL");
    mmaemu::kernels::detail::reset_module_cache_for_testing();
    mmaemu::kernels::detail::set_grid_y_limit_for_testing(0);
    ASSERT_EQ(driver::visible_device_count(), 2);
  }
  void TearDown() override {
    mmaemu::kernels::detail::set_grid_y_limit_for_testing(0);
    mmaemu::kernels::detail::reset_module_cache_for_testing();
  }
  const driver::Device& device0() { return driver::device(0); }
  fs::path nvrtc_dir() const { return cache_.path() / "cache" / "nvrtc"; }

  EnvGuard env_;
  TempDir fatbins_{"fatbins"};
  TempDir cache_{"nvrtc-cache"};
};

std::vector<std::uint8_t> random_codes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& c : v) {
    c = static_cast<std::uint8_t>(rng());
    if ((c & 0x7F) == 0x7F)
      c ^= 1; // finite codes only (NaN codes are sanitised before a kernel sees them)
  }
  return v;
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * 4);
  return b;
}

// The same kernel run directly through the host shim on contiguous operands.
std::vector<std::uint32_t> host_reference(const KernelSpec& s, const std::vector<std::uint8_t>& a,
                                          const std::vector<std::uint8_t>& b, int M, int N, int K) {
  namespace host = mmaemu::kernels::host;
  std::vector<float> c(static_cast<std::size_t>(M) * static_cast<std::size_t>(N));
  host::run_host_kernel(host::host_kernel(s.name),
                        {s.tile_m, s.tile_n, s.threads, static_cast<std::size_t>(s.dynamic_smem)},
                        a.data(), b.data(), c.data(), M, N, K);
  return bits_of(c);
}

TEST_F(Loader, FatbinIsUsedWhenHashesMatchAndTheDeviceRunsIt) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  const int compiles = mmaemu::testing::fake_nvrtc_compiles();
  const LoadedModule& m = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(m.source, "fatbin");
  EXPECT_EQ(m.fatbin_reason, "");
  EXPECT_EQ(m.kernel, "v1");
  EXPECT_EQ(m.device_ordinal, 0);
  const std::string image = mmaemu::testing::fake_fatbin_image("v1");
  EXPECT_EQ(m.image_sha256, mmaemu::support::sha256_hex(image));
  EXPECT_EQ(m.image_bytes, image.size());
  EXPECT_EQ(fs::path(m.image_path), fatbins_.path() / "v1.fatbin");
  EXPECT_NE(m.function, nullptr);
  EXPECT_EQ(mmaemu::testing::fake_nvrtc_compiles(), compiles);
}

TEST_F(Loader, StaleSourceHashFallsBackToNvrtcWithTheReason) {
  auto m = mmaemu::testing::write_fatbins(fatbins_.path());
  m.source_sha256 = std::string(64, '0');
  mmaemu::kernels::write_manifest(fatbins_.path() / "manifest.json", m);
  const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_NE(l.fatbin_reason.find("stale"), std::string::npos) << l.fatbin_reason;
  EXPECT_NE(l.fatbin_reason.find(mmaemu::kernels::sources_sha256()), std::string::npos);
  EXPECT_EQ(l.image_sha256,
            mmaemu::support::sha256_hex(std::string("MMAEMU-FAKE-IMAGE nvrtc v1.cu sm_90\0", 36)));
}

TEST_F(Loader, TamperedFatbinFallsBackToNvrtc) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  mmaemu::testing::spit(fatbins_.path() / "v1.fatbin", "MMAEMU-FAKE-IMAGE tampered");
  const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_NE(l.fatbin_reason.find("the manifest says"), std::string::npos) << l.fatbin_reason;
}

TEST_F(Loader, MissingManifestFallsBackToNvrtc) {
  const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_NE(l.fatbin_reason.find("manifest.json"), std::string::npos) << l.fatbin_reason;
}

TEST_F(Loader, FatbinTheDeviceCannotRunIsSkipped) {
  auto m = mmaemu::testing::write_fatbins(fatbins_.path());
  for (auto& e : m.modules) {
    e.sass = {80, 86};
    e.ptx.reset();
  }
  mmaemu::kernels::write_manifest(fatbins_.path() / "manifest.json", m);
  const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0()); // sm_90
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_NE(l.fatbin_reason.find("cannot run on sm_90"), std::string::npos) << l.fatbin_reason;
  mmaemu::kernels::detail::reset_module_cache_for_testing();
  driver::Device ada = device0();
  ada.cc = 89;
  EXPECT_EQ(mmaemu::kernels::load_module(spec("v1"), ada).source, "fatbin");
}

TEST_F(Loader, PtxIsJitCompiledForLaterDevices) {
  auto m = mmaemu::testing::write_fatbins(fatbins_.path());
  for (auto& e : m.modules)
    e.sass = {80};
  mmaemu::kernels::write_manifest(fatbins_.path() / "manifest.json", m);
  driver::Device blackwell = device0();
  blackwell.cc = 120;
  EXPECT_EQ(mmaemu::kernels::load_module(spec("v4"), blackwell).source, "fatbin");
}

TEST_F(Loader, ForcedFatbinFailureUsesNvrtc) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  env_.set("MMAEMU_TEST_FORCE_FAIL", "gate_x, fatbin");
  const LoadedModule& l = mmaemu::kernels::load_module(spec("h1"), device0());
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_NE(l.fatbin_reason.find("MMAEMU_TEST_FORCE_FAIL"), std::string::npos);
}

TEST_F(Loader, ForcedNvrtcFailureStillUsesAGoodFatbin) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  env_.set("MMAEMU_TEST_FORCE_FAIL", "nvrtc");
  EXPECT_EQ(mmaemu::kernels::load_module(spec("h1"), device0()).source, "fatbin");
}

TEST_F(Loader, BothFailingNamesBothReasons) {
  mmaemu::testing::write_fatbins(fatbins_.path());
  env_.set("MMAEMU_TEST_FORCE_FAIL", "fatbin,nvrtc");
  try {
    mmaemu::kernels::load_module(spec("v4"), device0());
    FAIL() << "loaded";
  } catch (const mmaemu::BackendUnavailableError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuda:v4"), std::string::npos) << what;
    EXPECT_NE(what.find("fatbin: forced"), std::string::npos) << what;
    EXPECT_NE(what.find("nvrtc: forced"), std::string::npos) << what;
  }
  // Real failures of both rungs: no manifest, and a compile error with its log.
  env_.unset("MMAEMU_TEST_FORCE_FAIL");
  fs::remove(fatbins_.path() / "manifest.json");
  env_.set("MMAEMU_FAKE_NVRTC_FAIL", "1");
  try {
    mmaemu::kernels::load_module(spec("v4"), device0());
    FAIL() << "loaded";
  } catch (const mmaemu::BackendUnavailableError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("manifest.json"), std::string::npos) << what;
    EXPECT_NE(what.find("fake compile failure"), std::string::npos) << what;
  }
}

TEST_F(Loader, ModulesAreCachedPerDeviceAndContext) {
  const LoadedModule& a = mmaemu::kernels::load_module(spec("v1"), driver::device(0));
  const LoadedModule& b = mmaemu::kernels::load_module(spec("v1"), driver::device(0));
  EXPECT_EQ(&a, &b);
  const LoadedModule& c = mmaemu::kernels::load_module(spec("v1"), driver::device(1));
  EXPECT_NE(&a, &c);
  EXPECT_NE(a.module, c.module);
  EXPECT_NE(a.context_id, c.context_id);
  EXPECT_EQ(c.device_ordinal, 1);
  // The second device reuses this process's cubin instead of compiling again.
  EXPECT_EQ(c.nvrtc_cache, "memory hit");
}

TEST_F(Loader, NvrtcCubinIsCachedOnDiskUnderItsKey) {
  const int before = mmaemu::testing::fake_nvrtc_compiles();
  const LoadedModule& first = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(first.source, "nvrtc");
  EXPECT_EQ(first.nvrtc_cache, "stored");
  EXPECT_EQ(mmaemu::testing::fake_nvrtc_compiles(), before + 1);
  const auto [major, minor] = mmaemu::kernels::nvrtc::nvrtc_version();
  const fs::path cubin =
      nvrtc_dir() / (mmaemu::kernels::nvrtc_cubin_key(spec("v1"), 90, major, minor) + ".cubin");
  ASSERT_TRUE(fs::is_regular_file(cubin));
  EXPECT_EQ(fs::status(cubin).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::path(first.image_path), cubin);
  const std::string sha = first.image_sha256;

  mmaemu::kernels::detail::reset_module_cache_for_testing();
  const LoadedModule& again = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(again.nvrtc_cache, "disk hit");
  EXPECT_EQ(again.image_sha256, sha);
  EXPECT_EQ(mmaemu::testing::fake_nvrtc_compiles(), before + 1);

  // The key covers the architecture (and the NVRTC version, sources and options).
  EXPECT_NE(mmaemu::kernels::nvrtc_cubin_key(spec("v1"), 89, major, minor),
            mmaemu::kernels::nvrtc_cubin_key(spec("v1"), 90, major, minor));
  EXPECT_NE(mmaemu::kernels::nvrtc_cubin_key(spec("v1"), 90, major, minor + 1),
            mmaemu::kernels::nvrtc_cubin_key(spec("v1"), 90, major, minor));
  EXPECT_NE(mmaemu::kernels::nvrtc_cubin_key(spec("h1"), 90, major, minor),
            mmaemu::kernels::nvrtc_cubin_key(spec("v1"), 90, major, minor));
}

TEST_F(Loader, CorruptCachedCubinIsRecompiled) {
  const LoadedModule& first = mmaemu::kernels::load_module(spec("v1"), device0());
  const fs::path cubin = first.image_path;
  const std::string good = mmaemu::testing::slurp(cubin);
  for (const std::string& bad : {std::string("garbage, not a cubin"), std::string()}) {
    mmaemu::testing::spit(cubin, bad);
    mmaemu::kernels::detail::reset_module_cache_for_testing();
    const int before = mmaemu::testing::fake_nvrtc_compiles();
    const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0());
    EXPECT_EQ(l.source, "nvrtc");
    EXPECT_EQ(mmaemu::testing::fake_nvrtc_compiles(), before + 1);
    EXPECT_NE(l.nvrtc_cache.find("recompiled"), std::string::npos) << l.nvrtc_cache;
    EXPECT_EQ(mmaemu::testing::slurp(cubin), good); // replaced by the fresh cubin
  }
}

TEST_F(Loader, UnwritableCacheKeepsTheCubinInMemory) {
  // A cache path below a regular file can never be created (even by root).
  mmaemu::testing::spit(cache_.path() / "file", "x");
  env_.set("MMAEMU_CACHE_DIR", (cache_.path() / "file" / "cache").string());
  const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_EQ(l.nvrtc_cache.rfind("in memory only: ", 0), 0u) << l.nvrtc_cache;
  EXPECT_NE(l.nvrtc_cache.find("file/cache"), std::string::npos) << l.nvrtc_cache;
  EXPECT_EQ(l.image_path, "");
  // Another context of this process reuses the in-memory cubin.
  EXPECT_EQ(mmaemu::kernels::load_module(spec("v1"), driver::device(1)).nvrtc_cache, "memory hit");
}

TEST_F(Loader, GroupWritableCacheIsRefusedAndNotUsed) {
  const fs::path dir = cache_.path() / "cache";
  fs::create_directories(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0770), 0);
  const LoadedModule& l = mmaemu::kernels::load_module(spec("v1"), device0());
  EXPECT_EQ(l.source, "nvrtc");
  EXPECT_NE(l.nvrtc_cache.find("refused"), std::string::npos) << l.nvrtc_cache;
  EXPECT_NE(l.nvrtc_cache.find("0770"), std::string::npos) << l.nvrtc_cache;
  EXPECT_FALSE(fs::exists(dir / "nvrtc"));
}

TEST_F(Loader, RunKernelMatchesTheHostKernelWithStridedOperands) {
  for (const char* name : {"v1", "v4", "h1", "h4"}) {
    const KernelSpec& s = spec(name);
    const int M = 70, N = 130, K = 48, lda = 53, ldb = 64;
    const auto a_strided = random_codes(static_cast<std::size_t>(M) * lda, 1);
    const auto b_strided = random_codes(static_cast<std::size_t>(N) * ldb, 2);
    std::vector<std::uint8_t> a(static_cast<std::size_t>(M) * K),
        b(static_cast<std::size_t>(N) * K);
    for (int r = 0; r < M; ++r)
      std::memcpy(&a[static_cast<std::size_t>(r) * K],
                  &a_strided[static_cast<std::size_t>(r) * lda], K);
    for (int r = 0; r < N; ++r)
      std::memcpy(&b[static_cast<std::size_t>(r) * K],
                  &b_strided[static_cast<std::size_t>(r) * ldb], K);
    const LoadedModule& l = mmaemu::kernels::load_module(s, device0());
    std::vector<float> out(static_cast<std::size_t>(M) * N, -1.0f);
    mmaemu::kernels::run_kernel(s, l, device0(), a_strided.data(), lda, b_strided.data(), ldb, M, N,
                                K, out.data());
    EXPECT_EQ(bits_of(out), host_reference(s, a, b, M, N, K)) << name;
  }
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_live_allocations"), 0);
}

TEST_F(Loader, RowsAreLaunchedInChunksBelowTheGridLimit) {
  const KernelSpec& s = spec("v1");
  const int M = 300, N = 20, K = 32; // 5 row tiles of 64
  const auto a = random_codes(static_cast<std::size_t>(M) * K, 3);
  const auto b = random_codes(static_cast<std::size_t>(N) * K, 4);
  const LoadedModule& l = mmaemu::kernels::load_module(s, device0());
  mmaemu::kernels::detail::set_grid_y_limit_for_testing(2);
  auto reset = mmaemu::testing::fake_symbol<void (*)()>(MMAEMU_FAKE_CUDA_PATH,
                                                        "mmaemu_fake_cuda_reset_counters");
  ASSERT_NE(reset, nullptr);
  reset();
  std::vector<float> out(static_cast<std::size_t>(M) * N);
  mmaemu::kernels::run_kernel(s, l, device0(), a.data(), K, b.data(), K, M, N, K, out.data());
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_launches"), 3);
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_max_grid_y_seen"), 2);
  EXPECT_EQ(bits_of(out), host_reference(s, a, b, M, N, K));
}

TEST_F(Loader, LargeSharedMemoryIsOptedInOrRefused) {
  const KernelSpec& s = spec("h4"); // 73,728 B of dynamic shared memory
  ASSERT_GT(s.dynamic_smem, driver::kDefaultDynamicSmemLimit);
  const int M = 8, N = 8, K = 32;
  const auto a = random_codes(M * K, 5);
  const auto b = random_codes(N * K, 6);
  const LoadedModule& l = mmaemu::kernels::load_module(s, device0());
  const int calls = mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_set_attribute_calls");
  std::vector<float> out(M * N);
  mmaemu::kernels::run_kernel(s, l, device0(), a.data(), K, b.data(), K, M, N, K, out.data());
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_set_attribute_calls"), calls + 1);
  driver::Device small = device0();
  small.smem_optin = 65536;
  try {
    mmaemu::kernels::run_kernel(s, l, small, a.data(), K, b.data(), K, M, N, K, out.data());
    FAIL() << "ran";
  } catch (const mmaemu::BackendUnavailableError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("73728"), std::string::npos) << what;
    EXPECT_NE(what.find("65536"), std::string::npos) << what;
  }
}

TEST_F(Loader, KAtTheLimitAndOutOfRangeSizesAreValueErrors) {
  const KernelSpec& s = spec("v4");
  const LoadedModule& l = mmaemu::kernels::load_module(s, device0());
  const std::uint8_t byte = 0;
  float out = 0;
  const auto k_max = static_cast<std::int64_t>(s.k_max);
  try {
    mmaemu::kernels::run_kernel(s, l, device0(), &byte, k_max, &byte, k_max, 1, 1, k_max, &out);
    FAIL() << "accepted K = k_max";
  } catch (const mmaemu::ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(k_max)), std::string::npos) << what;
    EXPECT_NE(what.find("k_max"), std::string::npos) << what;
  }
  EXPECT_THROW(mmaemu::kernels::run_kernel(s, l, device0(), &byte, 1, &byte, 1,
                                           std::int64_t{1} << 31, 1, 1, &out),
               mmaemu::ValueError);
  EXPECT_THROW(mmaemu::kernels::run_kernel(s, l, device0(), &byte, 1, &byte, 1, 1, -1, 1, &out),
               mmaemu::ValueError);
  EXPECT_THROW(mmaemu::kernels::run_kernel(s, l, device0(), &byte, 1, &byte, 1, 1, 1, 2, &out),
               mmaemu::ValueError); // lda < K
}

TEST_F(Loader, ZeroSizesLaunchNothing) {
  const KernelSpec& s = spec("v1");
  const LoadedModule& l = mmaemu::kernels::load_module(s, device0());
  const int launches = mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_launches");
  std::vector<float> out(6, -1.0f);
  mmaemu::kernels::run_kernel(s, l, device0(), nullptr, 0, nullptr, 0, 2, 3, 0, out.data());
  for (float v : out) {
    std::uint32_t bits = 1;
    std::memcpy(&bits, &v, 4);
    EXPECT_EQ(bits, 0u); // +0, not -0
  }
  mmaemu::kernels::run_kernel(s, l, device0(), nullptr, 0, nullptr, 0, 0, 3, 16, nullptr);
  mmaemu::kernels::run_kernel(s, l, device0(), nullptr, 0, nullptr, 0, 3, 0, 16, nullptr);
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_launches"), launches);
}

TEST_F(Loader, DeviceMemoryIsFreedWhenALaunchFails) {
  const KernelSpec& s = spec("v1");
  LoadedModule broken = mmaemu::kernels::load_module(s, device0());
  broken.function = nullptr;
  const auto a = random_codes(64, 7);
  std::vector<float> out(16);
  EXPECT_THROW(mmaemu::kernels::run_kernel(s, broken, device0(), a.data(), 16, a.data(), 16, 4, 4,
                                           16, out.data()),
               driver::DriverError);
  EXPECT_EQ(mmaemu::testing::fake_cuda_counter("mmaemu_fake_cuda_live_allocations"), 0);
}

TEST_F(Loader, WrongFakeFlipsExactlyOneBit) {
  const KernelSpec& s = spec("v1");
  const int M = 4, N = 4, K = 32;
  const auto a = random_codes(M * K, 8);
  const auto b = random_codes(N * K, 9);
  const LoadedModule& l = mmaemu::kernels::load_module(s, device0());
  env_.set("MMAEMU_FAKE_CUDA_WRONG", "1");
  std::vector<float> out(M * N);
  mmaemu::kernels::run_kernel(s, l, device0(), a.data(), K, b.data(), K, M, N, K, out.data());
  auto got = bits_of(out);
  const auto want = host_reference(s, a, b, M, N, K);
  EXPECT_EQ(got[0] ^ want[0], 1u);
  got[0] = want[0];
  EXPECT_EQ(got, want);
}

} // namespace
