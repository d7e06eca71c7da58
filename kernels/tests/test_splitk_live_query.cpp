// SPDX-License-Identifier: BSD-2-Clause
// The split-K live query on the fake libcuda and the fake libcublasLt (fake_cuda/): the
// descriptor it hands cuBLASLt (torch's scaled_gemm, shared/scaled-mm-facts.md "The cuBLASLt
// call"), answers of every kind through resolve_splitk, a failing heuristic, zero results, a
// failing cublasLtCreate, a library without an entry point, libraries that cannot be opened
// (and paths that are no regular file, refused before dlopen), and that without a device or
// with CUDA disabled no libcublasLt is ever mapped. Every check runs in a fresh process
// (EXPECT_EXIT, threadsafe style): a loaded library stays loaded for the process, and the fake
// driver reads its device list once.

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/emulator/warnings.hpp"
#include "mmaemu/kernels/cublaslt_library.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/splitk_live_query.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace driver = mmaemu::kernels::driver;
namespace lt = mmaemu::kernels::cublaslt;
using mmaemu::Format;
using mmaemu::SplitDecision;
using mmaemu::SplitKQuery;
using mmaemu::SplitKRequest;

constexpr const char* kRootVar = "MMAEMU_LIVE_QUERY_TEST_ROOT";
constexpr const char* kEvidence = "bitequiv-h100-cublaslt-13.1.1";

fs::path test_root() {
  const char* r = std::getenv(kRootVar);
  return r ? fs::path(r) : fs::path();
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

void in_fresh_process(const std::function<void()>& body) {
  EXPECT_EXIT(
      {
        body();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}
#define IN_FRESH_PROCESS(...) in_fresh_process([&] __VA_ARGS__)

#define CHILD_CHECK_MSG(cond, detail)                                                              \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "child check failed: %s (line %d): %s\n", #cond, __LINE__,              \
                   std::string(detail).c_str());                                                   \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)
#define CHILD_CHECK(cond) CHILD_CHECK_MSG(cond, "")

// A value the fake cuBLASLt recorded (-999: unseen; -1000: the fake is not loaded).
long long fake(const char* key) {
  void* h = ::dlopen(MMAEMU_FAKE_CUBLASLT_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return -1000;
  auto f = reinterpret_cast<long long (*)(const char*)>(::dlsym(h, "mmaemu_fake_cublaslt_value"));
  const long long v = f ? f(key) : -1000;
  ::dlclose(h);
  return v;
}

// The fake driver's cuCtxGetCurrent on this thread (nullptr when none or not loaded).
void* current_context() {
  void* h = ::dlopen(MMAEMU_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return nullptr;
  // Through the fake driver's own signature (another function type is undefined behaviour).
  namespace drv = mmaemu::kernels::driver;
  auto f = reinterpret_cast<drv::CUresult (*)(drv::CUcontext*)>(::dlsym(h, "cuCtxGetCurrent"));
  drv::CUcontext ctx = nullptr;
  if (f)
    f(&ctx);
  ::dlclose(h);
  return ctx;
}

// The environment of an H200 with the fake cuBLASLt 13.1.0 answering `answer`.
void h200(const std::string& answer = "66,21,36,1,0") {
  ::setenv("MMAEMU_FAKE_CUDA_NAME", "NVIDIA H200", 1);
  ::setenv("MMAEMU_FAKE_CUDA_SMS", "132", 1);
  ::setenv("MMAEMU_CUBLASLT_PATH", MMAEMU_FAKE_CUBLASLT_PATH, 1);
  ::setenv("MMAEMU_FAKE_CUBLASLT_ANSWER", answer.c_str(), 1);
}

SplitKQuery evo2(Format out = Format::bf16, bool fast = false) {
  return SplitKQuery{2048, 5760, 1920, Format::e4m3, Format::e4m3, out, fast, true};
}

SplitDecision resolve_auto(const SplitKQuery& q, const char* profile = "h200") {
  return mmaemu::resolve_splitk(q, mmaemu::get_profile(profile), SplitKRequest::automatic(), true);
}

// The SplitKUnknownError text of splitk="auto" (strict), or "" when it decided.
std::string unknown_error(const SplitKQuery& q, const char* profile = "h200") {
  try {
    resolve_auto(q, profile);
  } catch (const mmaemu::SplitKUnknownError& e) {
    return e.what();
  }
  return "";
}

// ---- laziness and no device ------------------------------------------------------------------

TEST(SplitKLiveQuery, InstallingOpensNothing) {
  IN_FRESH_PROCESS({
    h200();
    mmaemu::kernels::install_splitk_live_query();
    CHILD_CHECK(!driver::driver_loaded());
    CHILD_CHECK(!lt::cublaslt_loaded());
    CHILD_CHECK(!mapped("libcublasLt") && !mapped("fake_cublaslt") && !mapped("fake_cuda"));
  });
}

TEST(SplitKLiveQuery, WithoutAVisibleDeviceNoCublasLtIsEverMapped) {
  // The fake driver with 0 devices; once with the fake cuBLASLt named, once with the ladder
  // free to find the system's (this machine has a real libcublasLt.so.13 on the loader path).
  for (const bool named : {true, false}) {
    IN_FRESH_PROCESS({
      h200();
      ::setenv("MMAEMU_FAKE_CUDA_DEVICES", "0", 1);
      if (!named)
        ::unsetenv("MMAEMU_CUBLASLT_PATH");
      mmaemu::kernels::install_splitk_live_query();
      const std::string msg = unknown_error(evo2());
      CHILD_CHECK_MSG(has(msg, "live-query: no CUDA device is visible"), msg);
      CHILD_CHECK(driver::driver_loaded());
      CHILD_CHECK(!lt::cublaslt_loaded());
      CHILD_CHECK(!mapped("libcublasLt") && !mapped("fake_cublaslt"));
    });
  }
}

TEST(SplitKLiveQuery, WithoutADriverNoCublasLtIsEverMapped) {
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_LIBCUDA_PATH", (test_root() / "no-such-libcuda.so.1").c_str(), 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(
        has(msg, "live-query: no CUDA device is visible (no usable CUDA driver library"), msg);
    CHILD_CHECK_MSG(has(msg, "no-such-libcuda.so.1"), msg);
    CHILD_CHECK(!lt::cublaslt_loaded());
    CHILD_CHECK(!mapped("libcublasLt") && !mapped("fake_cublaslt"));
  });
}

TEST(SplitKLiveQuery, DisabledCudaTouchesNothing) {
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_DISABLE_CUDA", "1", 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "live-query: MMAEMU_DISABLE_CUDA=1"), msg);
    CHILD_CHECK(!driver::driver_loaded());
    CHILD_CHECK(!lt::cublaslt_loaded());
    CHILD_CHECK(!mapped("fake_cuda") && !mapped("fake_cublaslt"));
  });
}

TEST(SplitKLiveQuery, ADeviceThatIsNotTheProfilesGpuIsNotAsked) {
  IN_FRESH_PROCESS({
    h200();
    ::unsetenv("MMAEMU_FAKE_CUDA_NAME"); // "mmaemu fake GPU sm_90"
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "no visible CUDA device is the profile's GPU (NVIDIA H200"), msg);
    CHILD_CHECK_MSG(has(msg, "device 0 is mmaemu fake GPU sm_90 (sm_90, 132 SMs)"), msg);
    CHILD_CHECK(!lt::cublaslt_loaded());
  });
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_FAKE_CUDA_SMS", "114", 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "(sm_90, 114 SMs)"), msg);
    CHILD_CHECK(!lt::cublaslt_loaded());
  });
}

// ---- the descriptor ----------------------------------------------------------------------------

TEST(SplitKLiveQuery, DescriptorIsTorchsScaledGemm) {
  IN_FRESH_PROCESS({
    h200();
    mmaemu::kernels::install_splitk_live_query();
    // M = 16, N = 5760, K = 1920 (the Evo 2 projection while decoding), bf16 out.
    const SplitKQuery q{16, 5760, 1920, Format::e4m3, Format::e5m2, Format::bf16, false, true};
    // (mat2 e5m2 is outside the map, so the answer is declined; the descriptor is the point.)
    (void)unknown_error(q);
    CHILD_CHECK(fake("heuristic_calls") == 1);
    CHILD_CHECK(fake("requested") == 1);
    CHILD_CHECK(fake("compute") == 68);   // CUBLAS_COMPUTE_32F
    CHILD_CHECK(fake("scale_type") == 0); // CUDA_R_32F
    CHILD_CHECK(fake("transa") == 1);     // 't'
    CHILD_CHECK(fake("transb") == 0);     // 'n'
    CHILD_CHECK(fake("fast_accum") == 0 && fake("fast_accum_size") == 1);
    CHILD_CHECK(fake("a_scale_pointer_set") == 1 && fake("a_scale_pointer_size") == 8);
    CHILD_CHECK(fake("b_scale_pointer_set") == 1 && fake("b_scale_pointer_size") == 8);
    CHILD_CHECK(fake("a_scale_pointer") % 256 == 0);
    CHILD_CHECK(fake("d_scale_pointer_set") == 0);
    CHILD_CHECK(fake("attrs_set") == 5);
    // cuBLAS A = mat2 (e5m2: CUDA_R_8F_E5M2 29), k x m with m = N, ld k.
    CHILD_CHECK(fake("layout0_type") == 29 && fake("layout0_rows") == 1920 &&
                fake("layout0_cols") == 5760 && fake("layout0_ld") == 1920);
    // cuBLAS B = mat1 (e4m3: 28), k x n with n = M, ld k.
    CHILD_CHECK(fake("layout1_type") == 28 && fake("layout1_rows") == 1920 &&
                fake("layout1_cols") == 16 && fake("layout1_ld") == 1920);
    // C and D: m x n, ld m, the output type (bf16: CUDA_R_16BF 14).
    CHILD_CHECK(fake("layout2_type") == 14 && fake("layout2_rows") == 5760 &&
                fake("layout2_cols") == 16 && fake("layout2_ld") == 5760);
    CHILD_CHECK(fake("layout3_type") == 14 && fake("layout3_rows") == 5760 &&
                fake("layout3_cols") == 16 && fake("layout3_ld") == 5760);
    // The profile's workspace, as a uint64.
    CHILD_CHECK(fake("workspace") == 33554432 && fake("workspace_size") == 8);
    CHILD_CHECK(fake("live_objects") == 0); // everything created was destroyed
    // cublasLtCreate ran with the device's primary context current; the caller's (none) is
    // current again afterwards.
    CHILD_CHECK(fake("creates") == 1 && fake("create_had_context") == 1);
    CHILD_CHECK(current_context() == nullptr);
    // A second query reuses the handle.
    (void)unknown_error(q);
    CHILD_CHECK(fake("creates") == 1 && fake("heuristic_calls") == 2);
  });
}

TEST(SplitKLiveQuery, Fp8OutputHasAHalfCAndScaleResultSetsDScale) {
  IN_FRESH_PROCESS({
    h200();
    mmaemu::kernels::install_splitk_live_query();
    SplitKQuery q = evo2(Format::e4m3, /*fast=*/true);
    q.scale_result = true;
    (void)unknown_error(q); // FAST_ACCUM 1 is not in the map: declined, but asked
    CHILD_CHECK(fake("heuristic_calls") == 1);
    CHILD_CHECK(fake("fast_accum") == 1);
    CHILD_CHECK(fake("d_scale_pointer_set") == 1 && fake("d_scale_pointer_size") == 8);
    CHILD_CHECK(fake("layout2_type") == 2);  // C: CUDA_R_16F
    CHILD_CHECK(fake("layout3_type") == 28); // D: the FP8 output
  });
}

// ---- answers -----------------------------------------------------------------------------------

TEST(SplitKLiveQuery, NvjetUnsplitDecidesSOne) {
  IN_FRESH_PROCESS({
    h200("66,21,36,1,0");
    mmaemu::kernels::install_splitk_live_query();
    const SplitDecision d = resolve_auto(evo2());
    CHILD_CHECK(d.source == "live-query" && d.S == 1 && d.scheme == "none");
    CHILD_CHECK(!d.verified);
    CHILD_CHECK(d.evidence == kEvidence);
    CHILD_CHECK_MSG(has(d.note, "cuBLASLt 13.1.0 on NVIDIA H200 (sm_90) answered ALGO_ID 66, "
                                "TILE_ID 21, STAGES_ID 36, SPLITK_NUM 1, reduction none"),
                    d.note);
    CHILD_CHECK_MSG(has(d.note, MMAEMU_FAKE_CUBLASLT_PATH), d.note);
    CHILD_CHECK(d.warnings.empty());
  });
}

TEST(SplitKLiveQuery, NvjetSplitWithFp32PartialsDecidesContiguousAndWarns) {
  IN_FRESH_PROCESS({
    h200("66,21,36,3,2"); // SPLITK_NUM 3, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
    mmaemu::kernels::install_splitk_live_query();
    std::vector<mmaemu::Warning> seen;
    mmaemu::set_warning_sink([&](const mmaemu::Warning& w) { seen.push_back(w); });
    const SplitDecision d = resolve_auto(evo2());
    CHILD_CHECK(d.source == "live-query" && d.S == 3 && d.scheme == "contiguous");
    CHILD_CHECK(!d.verified && d.evidence == kEvidence);
    CHILD_CHECK(seen.size() == 1 && seen[0].cls == mmaemu::WarningClass::unverified_split);
  });
}

TEST(SplitKLiveQuery, EveryOtherAnswerDeclinesNamingTheAlgorithm) {
  struct Case {
    const char* answer;
    const char* named;
  };
  for (const Case c : {
           Case{"66,21,36,3,0", "SPLITK_NUM 3, reduction none"},
           Case{"66,21,36,3,1", "SPLITK_NUM 3, reduction inplace"},
           Case{"66,21,36,3,4", "SPLITK_NUM 3, reduction output_type"},
           Case{"67,21,36,1,0", "ALGO_ID 67, TILE_ID 21, STAGES_ID 36"},
           Case{"66,21,35,1,0", "ALGO_ID 66, TILE_ID 21, STAGES_ID 35"},
           Case{"66,21,36,0,0", "SPLITK_NUM 0"},
       }) {
    IN_FRESH_PROCESS({
      h200(c.answer);
      mmaemu::kernels::install_splitk_live_query();
      const std::string msg = unknown_error(evo2());
      CHILD_CHECK_MSG(has(msg, "live-query: cuBLASLt 13.1.0 on NVIDIA H200 (sm_90) answered"), msg);
      CHILD_CHECK_MSG(has(msg, c.named), msg);
      CHILD_CHECK_MSG(has(msg, "envelope disabled (strict)") || has(msg, "no envelope"), msg);
    });
  }
}

TEST(SplitKLiveQuery, FailuresOfTheQueryAreNamed) {
  struct Case {
    const char* var;
    const char* value;
    const char* named;
  };
  for (const Case c : {
           Case{"MMAEMU_FAKE_CUBLASLT_RESULTS", "0", "returned no algorithm (0 results)"},
           Case{"MMAEMU_FAKE_CUBLASLT_HEURISTIC_STATUS", "15",
                "cublasLtMatmulAlgoGetHeuristic returned CUBLAS_STATUS_NOT_SUPPORTED (15)"},
           Case{"MMAEMU_FAKE_CUBLASLT_CREATE_STATUS", "1",
                "cublasLtCreate returned CUBLAS_STATUS_NOT_INITIALIZED (1) on device 0"},
       }) {
    IN_FRESH_PROCESS({
      h200();
      ::setenv(c.var, c.value, 1);
      mmaemu::kernels::install_splitk_live_query();
      const std::string msg = unknown_error(evo2());
      CHILD_CHECK_MSG(has(msg, c.named), msg);
      CHILD_CHECK(fake("live_objects") == 0);
      CHILD_CHECK(current_context() == nullptr);
    });
  }
  // A failed cublasLtCreate is not remembered: the next query creates the handle and asks.
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_FAKE_CUBLASLT_CREATE_STATUS", "1", 1);
    mmaemu::kernels::install_splitk_live_query();
    (void)unknown_error(evo2());
    ::unsetenv("MMAEMU_FAKE_CUBLASLT_CREATE_STATUS");
    const SplitDecision d = resolve_auto(evo2());
    CHILD_CHECK(d.source == "live-query" && fake("creates") == 2);
  });
}

TEST(SplitKLiveQuery, TheCublasLtVersionMustBeTheProfiles) {
  // h200 records "13 (CUDA 13)": a 12.8.3 library is not its platform.
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_FAKE_CUBLASLT_VERSION", "120803", 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "cuBLASLt 12.8.3 (" + std::string(MMAEMU_FAKE_CUBLASLT_PATH) +
                                 ") is not the profile's cuBLASLt 13 (CUDA 13)"),
                    msg);
    CHILD_CHECK(fake("heuristic_calls") == -999);
  });
  // The hopper profile (H100 PCIe, cuBLASLt 12.8.3.14) is asked, but the map has no row for
  // cuBLASLt 12: nothing measured it.
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_FAKE_CUDA_NAME", "NVIDIA H100 PCIe", 1);
    ::setenv("MMAEMU_FAKE_CUDA_SMS", "114", 1);
    ::setenv("MMAEMU_FAKE_CUBLASLT_VERSION", "120803", 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2(), "hopper");
    CHILD_CHECK_MSG(has(msg, "cuBLASLt 12.8.3 on NVIDIA H100 PCIe (sm_90) answered ALGO_ID 66"),
                    msg);
    CHILD_CHECK_MSG(has(msg, "needs cuBLASLt 13.x"), msg);
  });
  // A profile that records no version cannot be described by any live answer.
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_FAKE_CUDA_NAME", "NVIDIA H100", 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2(), "hopper-experimental");
    CHILD_CHECK_MSG(has(msg, "records no cuBLASLt version ('unrecorded')"), msg);
  });
}

TEST(SplitKLiveQuery, WorkspaceZeroDecidesBeforeAnyLibraryIsOpened) {
  IN_FRESH_PROCESS({
    h200();
    mmaemu::kernels::install_splitk_live_query();
    const SplitDecision d = resolve_auto(evo2(), "hopper-ws0");
    CHILD_CHECK(d.source == "workspace0");
    CHILD_CHECK(!driver::driver_loaded() && !lt::cublaslt_loaded());
  });
}

// ---- the library ladder ------------------------------------------------------------------------

TEST(SplitKLiveQuery, ALibraryWithoutAnEntryPointIsRefused) {
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_CUBLASLT_PATH", MMAEMU_FAKE_CUBLASLT_PARTIAL_PATH, 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "no usable cuBLASLt"), msg);
    CHILD_CHECK_MSG(has(msg, "missing symbols cublasLtMatmulAlgoGetHeuristic"), msg);
    CHILD_CHECK(lt::cublaslt_loaded()); // it was opened, and stays mapped
  });
}

TEST(SplitKLiveQuery, ALibraryThatFailsToLoadIsNamed) {
  const fs::path text = test_root() / "not-a-library.so";
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_CUBLASLT_PATH", text.c_str(), 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "no usable cuBLASLt (" + text.string()), msg);
    CHILD_CHECK(!lt::cublaslt_loaded());
    // Only the named library is tried: not the system's.
    CHILD_CHECK(!mapped("libcublasLt"));
  });
}

TEST(SplitKLiveQuery, EnvironmentPathsThatAreNoRegularFileAreRefusedBeforeDlopen) {
  struct Case {
    fs::path path;
    const char* why;
  };
  // A FIFO would block dlopen's open(2) forever: the test would hang, not fail.
  for (const Case& c : {Case{test_root() / "fifo.so", "a FIFO, not a regular file"},
                        Case{test_root(), "a folder, not a regular file"},
                        Case{"/dev/null", "a device, not a regular file"},
                        Case{test_root() / "absent.so", "not found"}}) {
    IN_FRESH_PROCESS({
      h200();
      ::setenv("MMAEMU_CUBLASLT_PATH", c.path.c_str(), 1);
      mmaemu::kernels::install_splitk_live_query();
      const std::string msg = unknown_error(evo2());
      CHILD_CHECK_MSG(has(msg, "MMAEMU_CUBLASLT_PATH " + c.path.string() + ": " + c.why), msg);
      CHILD_CHECK(!lt::cublaslt_loaded());
    });
  }
}

TEST(SplitKLiveQuery, ABareNameInTheVariableIsRefused) {
  IN_FRESH_PROCESS({
    h200();
    ::setenv("MMAEMU_CUBLASLT_PATH", "libcublasLt.so.13", 1);
    mmaemu::kernels::install_splitk_live_query();
    const std::string msg = unknown_error(evo2());
    CHILD_CHECK_MSG(has(msg, "MMAEMU_CUBLASLT_PATH 'libcublasLt.so.13': not a path"), msg);
    CHILD_CHECK(!lt::cublaslt_loaded() && !mapped("libcublasLt"));
  });
}

TEST(SplitKLiveQuery, TheLadderPrefersTheVariableThenTorchsWheelThenTheSystem) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_CUBLASLT_PATH", "/x/libcublasLt.so.13", 1);
    const auto forced = lt::candidates();
    CHILD_CHECK(forced.size() == 1 && forced[0] == "/x/libcublasLt.so.13");
    ::unsetenv("MMAEMU_CUBLASLT_PATH");
    // A site folder with torch's CUDA 13 and CUDA 12 wheels.
    const fs::path site = test_root() / "site";
    const std::vector<std::string> dirs{site.string()};
    lt::set_site_dirs(dirs);
    const auto c = lt::candidates();
    const auto at = [&](const std::string& s) {
      for (std::size_t i = 0; i < c.size(); ++i)
        if (c[i] == s)
          return static_cast<long>(i);
      return -1L;
    };
    const long cu13 = at((site / "nvidia/cu13/lib/libcublasLt.so.13").string());
    const long cu12 = at((site / "nvidia/cublas/lib/libcublasLt.so.12").string());
    const long sys = at("libcublasLt.so.13");
    CHILD_CHECK_MSG(cu13 >= 0 && cu12 > cu13 && sys > cu12,
                    std::to_string(cu13) + " " + std::to_string(cu12) + " " + std::to_string(sys));
    CHILD_CHECK(at((site / "nvidia/cu13/lib/libcublasLt.so.13.fifo").string()) < 0);
  });
}

TEST(SplitKLiveQuery, ALibraryTheProcessMapsIsTheFirstCandidate) {
  // Once a libcublasLt is mapped (torch's, after its first matmul), the query asks that one.
  IN_FRESH_PROCESS({
    h200();
    ::unsetenv("MMAEMU_CUBLASLT_PATH");
    const fs::path copy = fs::canonical(test_root()) / "mapped" / "libcublasLt.so.13";
    CHILD_CHECK(::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr);
    const auto c = lt::candidates();
    CHILD_CHECK_MSG(!c.empty() && c[0] == copy.string(), c.empty() ? "" : c[0]);
    mmaemu::kernels::install_splitk_live_query();
    const SplitDecision d = resolve_auto(evo2());
    CHILD_CHECK_MSG(has(d.note, copy.string()), d.note);
  });
}

} // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  static std::optional<mmaemu::testing::TempDir> root;
  if (!std::getenv(kRootVar)) {
    root.emplace("live-query");
    const fs::path r = root->path();
    ::setenv(kRootVar, r.c_str(), 1);
    std::ofstream(r / "not-a-library.so") << "this is not an ELF file\n";
    ::mkfifo((r / "fifo.so").c_str(), 0600);
    for (const char* d : {"site/nvidia/cu13/lib", "site/nvidia/cublas/lib"})
      fs::create_directories(r / d);
    std::ofstream(r / "site/nvidia/cu13/lib/libcublasLt.so.13") << "x";
    std::ofstream(r / "site/nvidia/cublas/lib/libcublasLt.so.12") << "x";
    ::mkfifo((r / "site/nvidia/cu13/lib/libcublasLt.so.13.fifo").c_str(), 0600);
    fs::create_directories(r / "mapped");
    fs::copy_file(MMAEMU_FAKE_CUBLASLT_PATH, r / "mapped" / "libcublasLt.so.13");
  }
  ::setenv("MMAEMU_LIBCUDA_PATH", MMAEMU_FAKE_CUDA_PATH, 1);
  ::setenv("MMAEMU_FAKE_CUDA_DEVICES", "1", 1);
  for (const char* v :
       {"MMAEMU_DISABLE_CUDA", "MMAEMU_SPLITK_STRICT", "MMAEMU_PROFILE", "MMAEMU_FAKE_CUDA_CC",
        "MMAEMU_FAKE_CUDA_NAME", "MMAEMU_FAKE_CUDA_SMS", "MMAEMU_CUBLASLT_PATH",
        "MMAEMU_FAKE_CUBLASLT_VERSION", "MMAEMU_FAKE_CUBLASLT_ANSWER",
        "MMAEMU_FAKE_CUBLASLT_RESULTS", "MMAEMU_FAKE_CUBLASLT_HEURISTIC_STATUS",
        "MMAEMU_FAKE_CUBLASLT_CREATE_STATUS", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH"})
    ::unsetenv(v);
  return RUN_ALL_TESTS();
}
