// SPDX-License-Identifier: BSD-2-Clause
// Backend selection with the CUDA kernels (seed 000, "Selection", "Gates and the verdict
// cache", "Environment variables") on the fake libcuda: the reference paths that never touch
// the driver, priorities per preset, by-design skips (silent), failures that fall through with
// one BackendFallbackWarning, the verdict cache across processes, and the chosen chain's bits
// against the model. Every check runs in a fresh process (EXPECT_EXIT, threadsafe style) with
// its own environment, since a loaded driver library stays loaded for the process. main() is
// at the end: fake test fatbins for every kernel, written once by the parent process.

#include <dlfcn.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "loader_test_env.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/tensor.hpp"
#include "mmaemu/emulator/warnings.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/registry.hpp"

namespace {

namespace fs = std::filesystem;
namespace driver = mmaemu::kernels::driver;
using mmaemu::BackendUnavailableError;
using mmaemu::ChainBackend;
using mmaemu::Format;
using mmaemu::Preset;
using mmaemu::ValueError;
using mmaemu::kernels::KernelStatus;

constexpr const char* kRootVar = "MMAEMU_REGISTRY_TEST_ROOT";

fs::path test_root() {
  const char* r = std::getenv(kRootVar);
  return r ? fs::path(r) : fs::path();
}

// A cache folder of its own for a test (the same path in every process of that test).
void use_cache(const std::string& name) {
  ::setenv("MMAEMU_CACHE_DIR", (test_root() / ("cache-" + name)).c_str(), 1);
}

// Whether this process maps a file whose path contains `needle`.
bool mapped(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(needle) != std::string::npos)
      return true;
  }
  return false;
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// Runs `body` in a fresh process; the test fails unless it exits 0.
void in_fresh_process(const std::function<void()>& body) {
  EXPECT_EXIT(
      {
        body();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}
#define IN_FRESH_PROCESS(...) in_fresh_process([&] __VA_ARGS__)

// A failed check in the child: the condition, a detail and the line on stderr, exit 3.
#define CHILD_CHECK_MSG(cond, detail)                                                              \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "child check failed: %s (line %d): %s\n", #cond, __LINE__,              \
                   std::string(detail).c_str());                                                   \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)
#define CHILD_CHECK(cond) CHILD_CHECK_MSG(cond, "")

// The message of the exception of type E that `f` throws; nullopt when it throws nothing or
// something else (reported on stderr).
template <class E, class F> std::optional<std::string> thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return std::string(e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    return std::nullopt;
  }
  std::fprintf(stderr, "nothing thrown\n");
  return std::nullopt;
}

const Preset& preset(const char* name) {
  return mmaemu::get_preset_quiet(name);
}

ChainBackend select(const std::string& name, const Preset* p,
                    mmaemu::model::FormatPair fmt = {Format::e4m3, Format::e4m3}) {
  return mmaemu::kernels::select_backend_with_cuda({name, p, fmt});
}

std::string joined(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs)
    s += x + " | ";
  return s;
}

// Every warning emitted in this process (after capture_warnings()).
std::vector<mmaemu::Warning>& warnings() {
  static std::vector<mmaemu::Warning> w;
  return w;
}

void capture_warnings() {
  mmaemu::set_warning_sink([](const mmaemu::Warning& w) { warnings().push_back(w); });
}

std::vector<mmaemu::Warning> fallback_warnings() {
  std::vector<mmaemu::Warning> out;
  for (const auto& w : warnings()) {
    if (w.cls == mmaemu::WarningClass::backend_fallback)
      out.push_back(w);
  }
  return out;
}

std::string warning_text() {
  std::string s;
  for (const auto& w : warnings())
    s += std::string(mmaemu::warning_class_name(w.cls)) + ": " + w.message + "\n";
  return s;
}

const KernelStatus* status_of(const std::vector<KernelStatus>& all, const std::string& kernel) {
  for (const auto& s : all) {
    if (s.kernel == kernel)
      return &s;
  }
  return nullptr;
}

std::string describe(const KernelStatus& s) {
  std::string d = s.backend + " available=" + std::to_string(s.available) + " source=" + s.source +
                  " skip=" + s.skip + " failure=" + s.failure;
  for (const auto& g : s.gates)
    d += " gate " + g.gate + " passed=" + std::to_string(g.passed) +
         " cached=" + std::to_string(g.cached) + " " + g.detail;
  return d;
}

// The statuses of the kernels that have code for the device (on the default fake sm_90 every
// kernel but tc3, whose by-design skip Sm90PicksTheFastKernelOfEachPreset checks).
std::vector<KernelStatus> statuses_here(bool force = false) {
  std::vector<KernelStatus> out;
  for (auto& s : mmaemu::kernels::kernel_statuses(0, {}, force)) {
    if (s.skip.empty())
      out.push_back(s);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The reference without a usable driver

TEST(Registry, NoDriverAutoUsesTheReferenceAndExplicitCudaRaises) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_LIBCUDA_PATH", "/nonexistent/libcuda.so.1", 1);
    use_cache("nodriver");
    const auto why = mmaemu::kernels::cuda_unavailable_reason();
    CHILD_CHECK_MSG(has(why, "no CUDA driver") && has(why, "/nonexistent/libcuda.so.1"), why);
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK(r.name == "reference" && !r.chain);
    CHILD_CHECK_MSG(r.fallbacks.size() == 1 && has(r.fallbacks[0], "no CUDA driver") &&
                        has(r.fallbacks[0], "/nonexistent/libcuda.so.1"),
                    joined(r.fallbacks));
    for (const char* name :
         {"cuda", "cuda:v4", "cuda:v1", "cuda:v9", "cuda:tc3", "cuda:h4", "cuda:h1"}) {
      const auto e = thrown<BackendUnavailableError>([&] { select(name, &preset("ada")); });
      CHILD_CHECK_MSG(e && has(*e, name) && has(*e, "no CUDA driver"), name);
    }
    // Names this build does not know are ValueErrors.
    for (const char* name : {"cuda:zz", "cuda:", "cpu", "CUDA", ""})
      CHILD_CHECK_MSG(thrown<ValueError>([&] { select(name, &preset("ada")); }), name);
    CHILD_CHECK(select("reference", &preset("hopper")).name == "reference");
    CHILD_CHECK(select("reference", &preset("hopper")).fallbacks.empty());
    // Without a device every status says why.
    for (const auto& s : mmaemu::kernels::kernel_statuses(0)) {
      CHILD_CHECK_MSG(!s.available && s.device == -1 && has(s.failure, "no CUDA driver"),
                      describe(s));
    }
    CHILD_CHECK(!driver::driver_loaded());
  });
}

TEST(Registry, BackendVariableOverridesAutoOnly) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_LIBCUDA_PATH", "/nonexistent/libcuda.so.1", 1);
    use_cache("backendvar");
    ::setenv("MMAEMU_BACKEND", "reference", 1);
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "reference" && r.fallbacks.empty(), joined(r.fallbacks));
    // An explicit argument is not overridden.
    CHILD_CHECK(thrown<BackendUnavailableError>([] { select("cuda:v4", &preset("ada")); }));
    ::setenv("MMAEMU_BACKEND", "cuda:v1", 1);
    const auto e = thrown<BackendUnavailableError>([] { select("auto", &preset("ada")); });
    CHILD_CHECK_MSG(e && has(*e, "cuda:v1"), e.value_or(""));
    CHILD_CHECK(select("reference", &preset("ada")).name == "reference");
    ::setenv("MMAEMU_BACKEND", "cuda:zz", 1);
    CHILD_CHECK(thrown<ValueError>([] { select("auto", &preset("ada")); }));
    CHILD_CHECK(select("reference", &preset("ada")).name == "reference");
    // Through the emulator's hook once the selector is installed.
    mmaemu::kernels::install_cuda_backend();
    ::setenv("MMAEMU_BACKEND", "cuda:v1", 1);
    CHILD_CHECK(thrown<BackendUnavailableError>([] {
      mmaemu::choose_backend({"auto", &preset("ada"), {}});
    }));
    ::setenv("MMAEMU_BACKEND", "reference", 1);
    CHILD_CHECK(mmaemu::choose_backend({"auto", &preset("ada"), {}}).name == "reference");
    CHILD_CHECK(!driver::driver_loaded());
  });
}

TEST(Registry, DisabledCudaNeverTouchesTheDriver) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_DISABLE_CUDA", "1", 1);
    use_cache("disabled");
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK(r.name == "reference");
    CHILD_CHECK_MSG(r.fallbacks.size() == 1 && has(r.fallbacks[0], "MMAEMU_DISABLE_CUDA=1"),
                    joined(r.fallbacks));
    const auto e = thrown<BackendUnavailableError>([] { select("cuda:v4", &preset("ada")); });
    CHILD_CHECK_MSG(e && has(*e, "MMAEMU_DISABLE_CUDA=1"), e.value_or(""));
    CHILD_CHECK(thrown<BackendUnavailableError>([] { select("cuda", &preset("hopper")); }));
    for (const auto& s : mmaemu::kernels::kernel_statuses(0))
      CHILD_CHECK_MSG(!s.available && has(s.failure, "MMAEMU_DISABLE_CUDA=1"), describe(s));
    // A whole call through the installed selector.
    mmaemu::kernels::install_cuda_backend();
    const auto a =
        mmaemu::Tensor::from_bits(Format::e4m3, {2, 32}, std::vector<std::uint32_t>(64, 0x38));
    std::string used;
    mmaemu::AccumulateOptions opt;
    opt.profile = "ada";
    opt.splitk = mmaemu::SplitKRequest::explicit_split(1);
    opt.backend_used = &used;
    mmaemu::accumulate(a, a, true, opt);
    CHILD_CHECK(used == "reference");
    CHILD_CHECK(!driver::driver_loaded());
    CHILD_CHECK(!mapped("fake_cuda"));
  });
}

TEST(Registry, ReferenceBackendNeverMapsTheDriver) {
  IN_FRESH_PROCESS({
    use_cache("refonly"); // the fake driver's path is set and CUDA is not disabled
    mmaemu::kernels::install_cuda_backend();
    CHILD_CHECK(select("reference", &preset("ada")).name == "reference");
    const auto a =
        mmaemu::Tensor::from_bits(Format::e4m3, {2, 32}, std::vector<std::uint32_t>(64, 0x38));
    std::string used;
    mmaemu::AccumulateOptions opt;
    opt.profile = "hopper";
    opt.splitk = mmaemu::SplitKRequest::explicit_split(1);
    opt.backend = "reference";
    opt.backend_used = &used;
    mmaemu::accumulate(a, a, true, opt);
    CHILD_CHECK(used == "reference");
    ::setenv("MMAEMU_BACKEND", "reference", 1);
    opt.backend = "auto";
    mmaemu::accumulate(a, a, true, opt);
    CHILD_CHECK(used == "reference");
    CHILD_CHECK(!driver::driver_loaded());
    CHILD_CHECK(!mapped("fake_cuda"));
  });
}

// ---------------------------------------------------------------------------------------------
// Priorities and by-design skips on the fake device

TEST(Registry, Sm90PicksTheFastKernelOfEachPreset) {
  IN_FRESH_PROCESS({
    use_cache("sm90");
    capture_warnings();
    const ChainBackend ada = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(ada.name == "cuda:v4" && ada.chain, ada.name);
    const ChainBackend hopper = select("auto", &preset("hopper"));
    CHILD_CHECK_MSG(hopper.name == "cuda:h4" && hopper.chain, hopper.name);
    CHILD_CHECK(select("cuda", &preset("ada")).name == "cuda:v4");
    CHILD_CHECK(select("cuda:v1", &preset("ada")).name == "cuda:v1");
    CHILD_CHECK(select("cuda:h1", &preset("hopper")).name == "cuda:h1");
    // E5M2 and mixed pairs, the experimental preset and custom presets: the reference.
    for (const mmaemu::model::FormatPair fmt :
         {mmaemu::model::FormatPair{Format::e5m2, Format::e5m2},
          mmaemu::model::FormatPair{Format::e4m3, Format::e5m2},
          mmaemu::model::FormatPair{Format::e5m2, Format::e4m3}}) {
      const ChainBackend r = select("auto", &preset("ada"), fmt);
      CHILD_CHECK_MSG(r.name == "reference" && !r.chain, r.name);
      CHILD_CHECK_MSG(has(joined(r.fallbacks), "E4M3 x E4M3"), joined(r.fallbacks));
      CHILD_CHECK(thrown<BackendUnavailableError>([&] { select("cuda:v4", &preset("ada"), fmt); }));
    }
    CHILD_CHECK(select("auto", &preset("b200_mma_sync")).name == "reference");
    const auto b200 =
        thrown<BackendUnavailableError>([] { select("cuda", &preset("b200_mma_sync")); });
    CHILD_CHECK_MSG(b200 && has(*b200, "b200_mma_sync"), b200.value_or(""));
    // A custom preset never runs on a kernel, not even one with a shipped preset's name.
    const Preset custom =
        mmaemu::make_custom_preset("ada", 16, 13, 13, mmaemu::BlockRounding::toward_zero, -132);
    CHILD_CHECK(select("auto", &custom).name == "reference");
    const auto c = thrown<BackendUnavailableError>([&] { select("cuda:v1", &custom); });
    CHILD_CHECK_MSG(c && has(*c, "shipped preset"), c.value_or(""));
    // A kernel serves only its own preset; the message names both.
    const auto h4 = thrown<BackendUnavailableError>([] { select("cuda:h4", &preset("ada")); });
    CHILD_CHECK_MSG(h4 && has(*h4, "'ada'") && has(*h4, "'hopper'"), h4.value_or(""));
    CHILD_CHECK(thrown<BackendUnavailableError>([] { select("cuda:v1", &preset("hopper")); }));
    // By-design skips and fatbin loads never warn.
    CHILD_CHECK_MSG(warnings().empty(), warning_text());
    // Every kernel passed its gates here (v9: smoke and window, under Hopper's bf16 model);
    // sm_90 is not in their validated_on. tc3 has no code for sm_90: skipped by design.
    const auto all = mmaemu::kernels::kernel_statuses(0);
    CHILD_CHECK(all.size() == 6);
    for (const auto& s : all) {
      if (s.kernel == "tc3") {
        CHILD_CHECK_MSG(!s.available && !s.tested && has(s.skip, "no PTX") && has(s.skip, "9.0"),
                        describe(s));
        continue;
      }
      const std::size_t gates = s.kernel == "v9" ? 2 : 1;
      CHILD_CHECK_MSG(s.available && s.tested && s.source == "fatbin" && !s.validated_here &&
                          s.cc == 90 && s.device == 0 && s.gates.size() == gates &&
                          s.gates[0].gate == "smoke" && s.gates[0].passed && s.gates.back().passed,
                      describe(s));
    }
    CHILD_CHECK(status_of(all, "v9")->gates[1].gate == "window");
    // Asked for by name, v9 serves (its gates passed); tc3 cannot.
    CHILD_CHECK(select("cuda:v9", &preset("ada")).name == "cuda:v9");
    const auto tc3 = thrown<BackendUnavailableError>([] { select("cuda:tc3", &preset("ada")); });
    CHILD_CHECK_MSG(tc3 && has(*tc3, "sm_80, sm_86, sm_89 only"), tc3.value_or(""));
  });
}

TEST(Registry, ValidatedHereOnSm89) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_CC", "89", 1);
    use_cache("sm89");
    // The gated kernels pass their gates under the sm_89 model, but no GPU run has put a
    // capability in their validated_on: auto skips them silently.
    capture_warnings();
    for (const auto& s : mmaemu::kernels::kernel_statuses(0)) {
      const bool gated = s.kernel == "v9" || s.kernel == "tc3";
      CHILD_CHECK_MSG(s.available && s.validated_here == !gated && s.cc == 89, describe(s));
    }
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "cuda:v4", r.name);
    CHILD_CHECK_MSG(has(joined(r.fallbacks), "cuda:tc3 is gated") &&
                        has(joined(r.fallbacks), "cuda:v9 is gated") &&
                        has(joined(r.fallbacks), "MMAEMU_ALLOW_GATED_KERNELS=1"),
                    joined(r.fallbacks));
    CHILD_CHECK_MSG(fallback_warnings().empty(), warning_text());
  });
}

TEST(Registry, Sm75SkipsTheFastKernelsByDesignWithoutAWarning) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_CC", "75", 1);
    use_cache("sm75");
    capture_warnings();
    const ChainBackend ada = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(ada.name == "cuda:v1", ada.name);
    CHILD_CHECK_MSG(has(joined(ada.fallbacks), "cuda:v4 needs compute capability 8.0"),
                    joined(ada.fallbacks));
    CHILD_CHECK(select("auto", &preset("hopper")).name == "cuda:h1");
    const auto e = thrown<BackendUnavailableError>([] { select("cuda:v4", &preset("ada")); });
    CHILD_CHECK_MSG(e && has(*e, "8.0") && has(*e, "7.5"), e.value_or(""));
    CHILD_CHECK_MSG(fallback_warnings().empty(), warning_text());
    const auto all = mmaemu::kernels::kernel_statuses(0);
    CHILD_CHECK(has(status_of(all, "v4")->skip, "compute capability"));
    CHILD_CHECK(!status_of(all, "v4")->available && !status_of(all, "v4")->tested);
    CHILD_CHECK(has(status_of(all, "h4")->skip, "compute capability"));
    CHILD_CHECK(status_of(all, "v1")->available && status_of(all, "h1")->available);
  });
}

TEST(Registry, SmallSharedMemoryOptInSkipsSilently) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_SMEM_OPTIN", "36863", 1); // v4 needs 36,864 B, h4 73,728 B
    use_cache("smem");
    capture_warnings();
    const ChainBackend ada = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(ada.name == "cuda:v1", ada.name);
    CHILD_CHECK_MSG(has(joined(ada.fallbacks), "36864"), joined(ada.fallbacks));
    CHILD_CHECK(select("auto", &preset("hopper")).name == "cuda:h1");
    const auto e = thrown<BackendUnavailableError>([] { select("cuda:h4", &preset("hopper")); });
    CHILD_CHECK_MSG(e && has(*e, "73728") && has(*e, "36863"), e.value_or(""));
    CHILD_CHECK_MSG(fallback_warnings().empty(), warning_text());
  });
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_SMEM_OPTIN", "36864", 1); // exactly enough for v4
    use_cache("smem");
    CHILD_CHECK(select("auto", &preset("ada")).name == "cuda:v4");
    CHILD_CHECK(select("auto", &preset("hopper")).name == "cuda:h1");
  });
}

// ---------------------------------------------------------------------------------------------
// Failures: they fall through, with one warning per (device, reason)

TEST(Registry, FailedGatesFallBackWithOneWarningNamingEveryFailure) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_WRONG", "1", 1);
    use_cache("wrong");
    capture_warnings();
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "reference" && !r.chain, r.name);
    auto w = fallback_warnings();
    CHILD_CHECK_MSG(w.size() == 1, warning_text());
    CHILD_CHECK_MSG(has(w[0].message, "cuda:v4") && has(w[0].message, "cuda:v1") &&
                        has(w[0].message, "smoke") && has(w[0].message, "reference"),
                    w[0].message);
    CHILD_CHECK(!has(w[0].message, "cuda:h"));
    // The same failures again: no second warning.
    CHILD_CHECK(select("auto", &preset("ada")).name == "reference");
    CHILD_CHECK_MSG(fallback_warnings().size() == 1, warning_text());
    // "cuda" raises, naming both failures.
    const auto e = thrown<BackendUnavailableError>([] { select("cuda", &preset("ada")); });
    CHILD_CHECK_MSG(e && has(*e, "cuda:v4") && has(*e, "cuda:v1") && has(*e, "smoke"),
                    e.value_or(""));
    const auto one = thrown<BackendUnavailableError>([] { select("cuda:v1", &preset("ada")); });
    CHILD_CHECK_MSG(one && has(*one, "gate smoke failed"), one.value_or(""));
    CHILD_CHECK_MSG(fallback_warnings().size() == 1, warning_text());
    // Another preset's failures are another reason.
    CHILD_CHECK(select("auto", &preset("hopper")).name == "reference");
    w = fallback_warnings();
    CHILD_CHECK_MSG(w.size() == 2 && has(w[1].message, "cuda:h4") && has(w[1].message, "cuda:h1"),
                    warning_text());
  });
}

TEST(Registry, UnusableFatbinWarnsOnceThatNvrtcCompiledTheKernel) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_TEST_FORCE_FAIL", "fatbin", 1);
    use_cache("nvrtc");
    capture_warnings();
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "cuda:v4" && r.chain, r.name);
    auto w = fallback_warnings();
    CHILD_CHECK_MSG(w.size() == 1 && has(w[0].message, "cuda:v4") &&
                        has(w[0].message, "compiled with NVRTC") &&
                        has(w[0].message, "MMAEMU_TEST_FORCE_FAIL=fatbin"),
                    warning_text());
    CHILD_CHECK_MSG(has(joined(r.fallbacks), "compiled with NVRTC"), joined(r.fallbacks));
    CHILD_CHECK(select("auto", &preset("ada")).name == "cuda:v4");
    CHILD_CHECK_MSG(fallback_warnings().size() == 1, warning_text());
    const auto s = mmaemu::kernels::kernel_statuses(0, {"v4"});
    CHILD_CHECK_MSG(s.size() == 1 && s[0].source == "nvrtc" && has(s[0].fatbin_reason, "forced"),
                    describe(s[0]));
  });
}

TEST(Registry, ModulesThatCannotLoadFallThroughToTheReference) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_TEST_FORCE_FAIL", "fatbin,nvrtc", 1);
    use_cache("noload");
    capture_warnings();
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "reference", r.name);
    const auto w = fallback_warnings();
    CHILD_CHECK_MSG(w.size() == 1 && has(w[0].message, "cuda:v4") && has(w[0].message, "cuda:v1") &&
                        has(w[0].message, "fatbin: forced") && has(w[0].message, "nvrtc: forced"),
                    warning_text());
    const auto e = thrown<BackendUnavailableError>([] { select("cuda:v1", &preset("ada")); });
    CHILD_CHECK_MSG(e && has(*e, "fatbin: forced") && has(*e, "nvrtc: forced"), e.value_or(""));
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(!s.available && !s.tested && has(s.failure, "forced"), describe(s));
  });
}

TEST(Registry, OnlyNvrtcFailingStillUsesTheFatbin) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_TEST_FORCE_FAIL", "nvrtc", 1);
    use_cache("nvrtcfail");
    capture_warnings();
    CHILD_CHECK(select("auto", &preset("hopper")).name == "cuda:h4");
    CHILD_CHECK_MSG(fallback_warnings().empty(), warning_text());
  });
}

TEST(Registry, ForcedGateFailureIsNotCached) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_TEST_FORCE_FAIL", "smoke", 1);
    use_cache("forcedsmoke");
    capture_warnings();
    CHILD_CHECK(select("auto", &preset("ada")).name == "reference");
    CHILD_CHECK_MSG(fallback_warnings().size() == 1, warning_text());
    for (const auto& s : statuses_here()) {
      CHILD_CHECK_MSG(!s.available && s.gates.size() == 1 && !s.gates[0].passed &&
                          !s.gates[0].cached && has(s.gates[0].detail, "on purpose"),
                      describe(s));
    }
  });
  IN_FRESH_PROCESS({
    use_cache("forcedsmoke"); // the same cache: nothing was stored for the forced failures
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(s.available && !s.gates.empty() && !s.gates[0].cached, describe(s));
    CHILD_CHECK(select("auto", &preset("ada")).name == "cuda:v4");
  });
  IN_FRESH_PROCESS({
    // Cached passing verdicts do not defeat a forced failure.
    ::setenv("MMAEMU_TEST_FORCE_FAIL", "smoke", 1);
    use_cache("forcedsmoke");
    CHILD_CHECK(select("auto", &preset("ada")).name == "reference");
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(!s.available && has(s.gates.at(0).detail, "on purpose"), describe(s));
  });
}

// ---------------------------------------------------------------------------------------------
// The verdict cache across processes

TEST(Registry, VerdictsAreCachedAcrossProcesses) {
  IN_FRESH_PROCESS({
    use_cache("verdicts");
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(s.available && !s.gates.at(0).cached, describe(s));
    // The same process: the in-memory verdict.
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(s.available && s.gates.at(0).cached, describe(s));
  });
  IN_FRESH_PROCESS({
    use_cache("verdicts");
    CHILD_CHECK(select("auto", &preset("ada")).name == "cuda:v4");
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(s.available && s.gates.at(0).cached, describe(s));
    // force runs the gates again.
    for (const auto& s : statuses_here(true))
      CHILD_CHECK_MSG(s.available && !s.gates.at(0).cached, describe(s));
  });
  IN_FRESH_PROCESS({
    // Damaged verdict files are ignored: the gates run again and replace them.
    use_cache("verdicts");
    const fs::path dir = test_root() / "cache-verdicts" / "verdicts";
    int damaged = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
      if (f.path().extension() == ".json") {
        mmaemu::testing::spit(f.path(), ++damaged % 2 ? "{\"format\": \"mmaemu-verd" : "[]");
      }
    }
    // One per gate that ran: smoke of v1, v4, h1, h4 and v9, and v9's window.
    CHILD_CHECK_MSG(damaged == 6, std::to_string(damaged));
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(s.available && !s.gates.at(0).cached, describe(s));
  });
  IN_FRESH_PROCESS({
    use_cache("verdicts");
    for (const auto& s : statuses_here())
      CHILD_CHECK_MSG(s.available && s.gates.at(0).cached, describe(s));
  });
}

TEST(Registry, AFailedVerdictIsCachedUntilForced) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_WRONG", "1", 1);
    use_cache("failcached");
    for (const auto& s : mmaemu::kernels::kernel_statuses(0, {"v1"}))
      CHILD_CHECK_MSG(!s.available && !s.gates.at(0).cached, describe(s));
  });
  IN_FRESH_PROCESS({
    use_cache("failcached"); // the kernel is right now, but the failure was cached
    auto s = mmaemu::kernels::kernel_statuses(0, {"v1"});
    CHILD_CHECK_MSG(!s.at(0).available && s.at(0).gates.at(0).cached, describe(s.at(0)));
    s = mmaemu::kernels::kernel_statuses(0, {"v1"}, true);
    CHILD_CHECK_MSG(s.at(0).available && !s.at(0).gates.at(0).cached, describe(s.at(0)));
  });
}

// ---------------------------------------------------------------------------------------------
// The gated tensor-core kernels (v9, tc3)

TEST(Registry, AllowGatedKernelsSelectsTc3ThenV9ByPriority) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_CC", "89", 1);
    ::setenv("MMAEMU_ALLOW_GATED_KERNELS", "1", 1);
    use_cache("gated-allow");
    capture_warnings();
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "cuda:tc3" && r.chain, r.name);
    CHILD_CHECK(select("cuda:v9", &preset("ada")).name == "cuda:v9");
    CHILD_CHECK(select("auto", &preset("hopper")).name == "cuda:h4");
    CHILD_CHECK_MSG(fallback_warnings().empty(), warning_text());
    const auto all = mmaemu::kernels::kernel_statuses(0, {"tc3", "v9"});
    CHILD_CHECK_MSG(all[0].gates.size() == 2 && all[0].gates[1].gate == "design_a" &&
                        all[0].gates[1].passed,
                    describe(all[0]));
    CHILD_CHECK_MSG(all[1].gates.size() == 2 && all[1].gates[1].gate == "window" &&
                        all[1].gates[1].passed,
                    describe(all[1]));
  });
  // Named explicitly, a gated kernel runs without the variable, and its gates still run.
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_CC", "89", 1);
    use_cache("gated-named");
    CHILD_CHECK(select("cuda:tc3", &preset("ada")).name == "cuda:tc3");
    const auto s = mmaemu::kernels::kernel_statuses(0, {"tc3"});
    CHILD_CHECK_MSG(s[0].tested && s[0].gates.size() == 2, describe(s[0]));
  });
}

// A device that reports 8.9 but whose tensor cores round like Hopper's: tc3's gates fail,
// one BackendFallbackWarning names it, and v9 (whose window holds there) serves.
TEST(Registry, Tc3GateFailsUnderHopperRoundingAndV9Serves) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_CC", "89", 1);
    ::setenv("MMAEMU_SHIM_MMA_ARCH", "sm_90", 1);
    ::setenv("MMAEMU_ALLOW_GATED_KERNELS", "1", 1);
    use_cache("gated-hopper");
    capture_warnings();
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "cuda:v9", r.name);
    const auto w = fallback_warnings();
    // Hopper's extra alignment bit already shows on the smoke gate's random problem (the
    // design_a problems alone fail too: GatedKernelModels in test_host_kernels.cpp).
    CHILD_CHECK_MSG(w.size() == 1 && has(w[0].message, "cuda:tc3: gate smoke failed") &&
                        has(w[0].message, "using cuda:v9"),
                    warning_text());
    const auto e = thrown<BackendUnavailableError>([] { select("cuda:tc3", &preset("ada")); });
    CHILD_CHECK_MSG(e && has(*e, "gate smoke failed"), e.value_or(""));
  });
}

// Volta-like tensor cores (no bf16, fp16 blocks of 4 with no extra bit): both gated kernels
// fail (v9's smoke gate raises: the shim has no bf16 mma there), and v4 serves.
TEST(Registry, BothGatedKernelsFailUnderVoltaModelAndV4Serves) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_CC", "89", 1);
    ::setenv("MMAEMU_SHIM_MMA_ARCH", "sm_70", 1);
    ::setenv("MMAEMU_ALLOW_GATED_KERNELS", "1", 1);
    use_cache("gated-volta");
    capture_warnings();
    const ChainBackend r = select("auto", &preset("ada"));
    CHILD_CHECK_MSG(r.name == "cuda:v4", r.name);
    const auto w = fallback_warnings();
    CHILD_CHECK_MSG(w.size() == 1 && has(w[0].message, "cuda:tc3: gate smoke failed") &&
                        has(w[0].message, "cuda:v9: gate smoke failed") &&
                        has(w[0].message, "using cuda:v4"),
                    warning_text());
  });
}

// ---------------------------------------------------------------------------------------------
// kernel_statuses' arguments

TEST(Registry, KernelStatusesRejectUnknownNamesAndAbsentDevices) {
  IN_FRESH_PROCESS({
    use_cache("statuses");
    for (const char* name : {"zz", "v2", "cuda:v1", ""}) {
      CHILD_CHECK_MSG(thrown<ValueError>([&] { mmaemu::kernels::kernel_statuses(0, {name}); }),
                      name);
    }
    const auto all = mmaemu::kernels::kernel_statuses(3);
    CHILD_CHECK(all.size() == 6);
    for (const auto& s : all)
      CHILD_CHECK_MSG(!s.available && has(s.failure, "device 3 does not exist"), describe(s));
    const auto two = mmaemu::kernels::kernel_statuses(0, {"h1", "v1"});
    CHILD_CHECK(two.size() == 2 && two[0].kernel == "h1" && two[1].kernel == "v1");
  });
}

// ---------------------------------------------------------------------------------------------
// The chosen chain computes the model's bits

std::vector<std::uint8_t> random_codes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& c : v) {
    c = static_cast<std::uint8_t>(rng());
    if ((c & 0x7F) == 0x7F)
      c ^= 1; // finite E4M3 codes only
  }
  return v;
}

TEST(Registry, ChainOfEveryKernelMatchesTheModel) {
  IN_FRESH_PROCESS({
    use_cache("chain");
    const std::size_t M = 37, N = 45, K = 200, lda = K + 13, ldb = K + 7, ldo = N + 3;
    const auto a = random_codes(M * lda, 11);
    const auto b = random_codes(N * ldb, 12);
    mmaemu::model::GemmOperands op;
    op.a = a.data();
    op.lda = lda;
    op.b = b.data();
    op.ldb = ldb;
    op.M = M;
    op.N = N;
    op.K = K;
    for (const auto& [backend, p] : {std::pair{"cuda:v4", "ada"},
                                     {"cuda:v1", "ada"},
                                     {"cuda:h4", "hopper"},
                                     {"cuda:h1", "hopper"}}) {
      const ChainBackend cb = select(backend, &preset(p));
      CHILD_CHECK(cb.name == backend && cb.chain);
      for (const auto& [k0, k1] : {std::pair<std::size_t, std::size_t>{0, K},
                                   {16, 144},
                                   {32, 48},
                                   {64, 64},
                                   {0, 96},
                                   {160, 200}}) {
        std::vector<std::uint32_t> want(M * ldo, 0xDEADBEEFu), got(M * ldo, 0xDEADBEEFu);
        mmaemu::model::chain_gemm(op, k0, k1, preset(p), want.data(), ldo);
        cb.chain(op, k0, k1, got.data(), ldo);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < want.size(); ++i) {
          bad += mmaemu::compare_bits(want[i], got[i], Format::fp32) != mmaemu::Mismatch::none;
        }
        CHILD_CHECK_MSG(bad == 0, std::string(backend) + " k [" + std::to_string(k0) + ", " +
                                      std::to_string(k1) + "): " + std::to_string(bad) +
                                      " outputs differ");
      }
      CHILD_CHECK(thrown<ValueError>([&] {
        std::vector<std::uint32_t> out(M * ldo);
        cb.chain(op, 0, K + 16, out.data(), ldo);
      }));
    }
  });
}

// Both operands as rows of K codes, FP8 tensors.
mmaemu::Tensor rows_tensor(const std::vector<std::uint8_t>& codes, std::int64_t rows,
                           std::int64_t K) {
  return mmaemu::Tensor::from_bits(Format::e4m3, {rows, K},
                                   std::vector<std::uint32_t>(codes.begin(), codes.end()));
}

bool same_bits(const mmaemu::Tensor& x, const mmaemu::Tensor& y, std::string* why) {
  const auto bx = x.to_bits(), by = y.to_bits();
  if (bx.size() != by.size() || x.dtype() != y.dtype()) {
    *why = "shapes or dtypes differ";
    return false;
  }
  for (std::size_t i = 0; i < bx.size(); ++i) {
    if (mmaemu::compare_bits(bx[i], by[i], x.dtype()) != mmaemu::Mismatch::none) {
      *why = "element " + std::to_string(i) + ": " + mmaemu::decompose_bits(bx[i], x.dtype()) +
             " vs " + mmaemu::decompose_bits(by[i], x.dtype());
      return false;
    }
  }
  return true;
}

TEST(Registry, AccumulateAndScaledMmOnAKernelEqualTheReference) {
  IN_FRESH_PROCESS({
    use_cache("calls");
    mmaemu::kernels::install_cuda_backend();
    capture_warnings(); // UnverifiedSplitWarning for S = 2
    const std::int64_t M = 24, N = 48, K = 320;
    auto ac = random_codes(static_cast<std::size_t>(M * K), 21);
    auto bc = random_codes(static_cast<std::size_t>(N * K), 22);
    ac[5] = 0x7F; // a NaN code: the plan sanitises it and patches the result
    const auto a = rows_tensor(ac, M, K), b = rows_tensor(bc, N, K);
    struct Case {
      const char* profile;
      const char* backend;
      bool fast;
      int S;
    };
    for (const Case c : {Case{"ada", "cuda:v1", true, 1}, Case{"ada", "cuda:v4", true, 2},
                         Case{"ada", "cuda:v1", false, 1}, Case{"hopper", "cuda:h4", true, 1},
                         Case{"hopper", "cuda:h1", false, 2}, Case{"ada", "auto", true, 1}}) {
      mmaemu::AccumulateOptions opt;
      opt.profile = c.profile;
      opt.splitk = mmaemu::SplitKRequest::explicit_split(
          c.S, c.S > 1 ? mmaemu::get_profile(c.profile).split_schemes.at(0) : "none");
      std::string used;
      opt.backend_used = &used;
      opt.backend = "reference";
      const auto want = mmaemu::accumulate(a, b, c.fast, opt);
      CHILD_CHECK(used == "reference");
      opt.backend = c.backend;
      const auto got = mmaemu::accumulate(a, b, c.fast, opt);
      CHILD_CHECK_MSG(used == (std::string(c.backend) == "auto" ? "cuda:v4" : c.backend), used);
      std::string why;
      CHILD_CHECK_MSG(same_bits(want, got, &why), std::string(c.backend) + ": " + why);
    }
    // scaled_mm: mat2 is [K, N] column-major, the transpose of b's rows.
    for (const auto& [profile, backend] : {std::pair{"ada", "cuda:v1"}, {"hopper", "cuda:h4"}}) {
      mmaemu::ScaledMmCall call;
      call.input = a;
      call.mat2 = b.t();
      call.scale_a = mmaemu::Tensor::scalar_f32(0x3f000000); // 0.5
      call.scale_b = mmaemu::Tensor::scalar_f32(0x40400000); // 3
      call.out_dtype = Format::bf16;
      call.use_fast_accum = true;
      call.profile = profile;
      call.splitk = mmaemu::SplitKRequest::explicit_split(1);
      call.backend = "reference";
      const auto want = mmaemu::scaled_mm(call);
      std::string used;
      call.backend = backend;
      call.backend_used = &used;
      const auto got = mmaemu::scaled_mm(call);
      CHILD_CHECK_MSG(used == backend, used);
      std::string why;
      CHILD_CHECK_MSG(same_bits(want, got, &why), std::string(backend) + ": " + why);
    }
  });
}

} // namespace

// The fake driver and NVRTC are the libraries the loader opens (one device, sm_90 unless a
// test says otherwise); fake fatbins of every kernel are written once, by the first process,
// into a folder that its child processes inherit (MMAEMU_REGISTRY_TEST_ROOT).
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  static std::optional<mmaemu::testing::TempDir> root;
  if (!std::getenv(kRootVar)) {
    root.emplace("registry");
    ::setenv(kRootVar, root->path().c_str(), 1);
    mmaemu::testing::write_fatbins(root->path() / "fatbins");
  }
  ::setenv("MMAEMU_LIBCUDA_PATH", MMAEMU_FAKE_CUDA_PATH, 1);
  ::setenv("MMAEMU_NVRTC_PATH", MMAEMU_FAKE_NVRTC_PATH, 1);
  ::setenv("MMAEMU_FATBIN_DIR", (test_root() / "fatbins").c_str(), 1);
  ::setenv("MMAEMU_FAKE_CUDA_DEVICES", "1", 1);
  ::setenv("MMAEMU_CACHE_DIR", (test_root() / "cache-default").c_str(), 1);
  for (const char* v :
       {"MMAEMU_DISABLE_CUDA", "MMAEMU_TEST_FORCE_FAIL", "MMAEMU_BACKEND",
        "MMAEMU_ALLOW_GATED_KERNELS", "MMAEMU_FAKE_CUDA_CC", "MMAEMU_FAKE_CUDA_SMEM_OPTIN",
        "MMAEMU_FAKE_CUDA_UUID", "MMAEMU_FAKE_CUDA_WRONG", "MMAEMU_FAKE_CUDA_MAX_GRID_Y",
        "MMAEMU_FAKE_NVRTC_FAIL", "MMAEMU_PROFILE"})
    ::unsetenv(v);
  return RUN_ALL_TESTS();
}
