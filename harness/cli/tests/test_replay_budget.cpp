// SPDX-License-Identifier: BSD-2-Clause
// Budgets before allocation (docs/recordings.md, "Budgets"): no small recording can cost
// gigabytes. The probe's hostile files are written here at run time (the project's own HDF5
// writer): each is one clear error for that file (exit 2, one line naming it and the budget),
// the other files of the run still replay, and the peak resident memory of `mmaemu replay`
// (every process: the child's getrusage through wait4, which covers the reader's own child)
// stays within 320 MiB plus 10 times the largest file.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/recordings/budget.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "replay_fixtures.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::testing::TempDir;
using nlohmann::json;
namespace rec = mmaemu::recordings;

std::uint64_t largest(const std::vector<fs::path>& files) {
  std::uint64_t m = 0;
  for (const auto& f : files)
    m = std::max<std::uint64_t>(m, fs::file_size(f));
  return m;
}

struct Measured {
  int status = -1;
  std::uint64_t max_rss_bytes = 0;
  std::string out, err;
};

// `mmaemu replay FILES...` as a child; its peak resident memory and that of its children.
Measured replay_measured(const std::vector<fs::path>& files) {
  TempDir io("budget_io");
  const std::string out = (io / "out").string(), err = (io / "err").string();
  std::vector<std::string> args{MMAEMU_BIN, "replay"};
  for (const auto& f : files)
    args.push_back(f.string());
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& v : mmaemu::testing::cli_cleared_variables())
      ::unsetenv(v.c_str());
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int n = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || n < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 || ::dup2(n, 0) < 0)
      ::_exit(127);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Measured m;
  int st = 0;
  struct rusage ru {};
  if (pid > 0 && ::wait4(pid, &st, 0, &ru) == pid) {
    m.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    m.max_rss_bytes = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024; // Linux: KiB
  }
  m.out = mmaemu::testing::slurp(out);
  m.err = mmaemu::testing::slurp(err);
  // The figures, for the test log (the bound is asserted by each test).
  std::printf("replay of %zu file(s), largest %llu bytes: exit %d, peak %llu bytes\n", files.size(),
              static_cast<unsigned long long>(largest(files)), m.status,
              static_cast<unsigned long long>(m.max_rss_bytes));
  return m;
}

// AddressSanitizer's shadow memory and quarantine multiply every process's resident memory:
// the bound is then not measured (the refusals still are).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMeasuresMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMeasuresMemory = false;
#else
constexpr bool kMeasuresMemory = true;
#endif
#else
constexpr bool kMeasuresMemory = true;
#endif

// The bound docs/recordings.md states, for a run whose largest file is `file_bytes`.
std::uint64_t bound(std::uint64_t file_bytes) {
  if (!kMeasuresMemory)
    return ~0ull;
  return rec::kReplayBoundBaseBytes + rec::kReplayBoundFactor * file_bytes;
}

// A recording of one gemm_call call with description `call` (storages of 0x38 codes) and one
// fp32 output that expects `expect_error` (so that no expected bits need storing).
fs::path write_call(const TempDir& dir, const std::string& name, const json& call,
                    std::size_t input_bytes, std::size_t mat2_bytes,
                    const std::string& expect_error = "ReferenceRejectsError") {
  rec::Recording r;
  rec::GemmCallBatch b;
  b.name = "budget";
  b.attrs["gpu"] = "none (synthetic)";
  rec::GemmCall gc;
  gc.id = "budget/0";
  gc.call_json = call.dump();
  gc.input_storage.assign(input_bytes, 0x38);
  gc.mat2_storage.assign(mat2_bytes, 0x38);
  gc.outputs = {{"fp32", mmaemu::Format::fp32, true, "1", {}, {}, expect_error}};
  b.calls.push_back(std::move(gc));
  r.gemm_call.push_back(std::move(b));
  const fs::path p = dir / name;
  rec::write_recording(p, r);
  return p;
}

// An mma set of n cases of K zero codes each, +0 accumulators and +0 expected (every product
// of two zeros is +0, and +0 + +0 is +0 in every preset).
fs::path write_zero_mma(const TempDir& dir, const std::string& name, std::size_t n,
                        std::uint32_t K) {
  rec::Recording r;
  rec::MmaBatch b;
  b.name = "zeros";
  b.preset = "hopper";
  b.K = K;
  b.c_policy = "zero";
  b.ids.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    b.ids.push_back("zeros/" + std::to_string(i));
  b.a.assign(n * K, 0);
  b.b.assign(n * K, 0);
  b.c.assign(n, 0);
  b.expect.assign(n, 0);
  r.mma.push_back(std::move(b));
  const fs::path p = dir / name;
  rec::write_recording(p, r);
  return p;
}

json fill_tensor(const char* dtype, std::int64_t numel, const char* code) {
  return {{"dtype", dtype}, {"shape", {numel}}, {"fill", code}};
}

const fs::path kGood = fs::path(MMAEMU_SOURCE_DIR) / "recordings/data/public/A100_tf32.h5";

// Runs the hostile file with a good one after it: exit 2, one ERROR line naming the hostile
// file and `what`, the good file's 5000 cases still replayed, memory within the bound.
void expect_refused_and_bounded(const fs::path& hostile, const std::string& what) {
  const std::vector<fs::path> files{hostile, kGood};
  const Measured m = replay_measured(files);
  EXPECT_EQ(m.status, 2) << m.err;
  EXPECT_NE(m.err.find("ERROR " + hostile.string()), std::string::npos) << m.err;
  EXPECT_NE(m.err.find(what), std::string::npos) << m.err;
  EXPECT_NE(m.out.find("5000 passed, 0 failed, 1 unreadable"), std::string::npos) << m.out;
  EXPECT_LE(m.max_rss_bytes, bound(largest(files)))
      << "peak " << m.max_rss_bytes << " bytes for files of at most " << largest(files);
}

TEST(ReplayBudget, FiveCreatedTensorsOf2To28ElementsAreOverBudgetBeforeAllocation) {
  TempDir dir("budget");
  json call = replaytest::unit_call();
  const std::int64_t big = std::int64_t{1} << 28;
  call["scale_a"] = fill_tensor("fp32", big, "3f800000");
  call["scale_b"] = fill_tensor("fp32", big, "3f800000");
  call["bias"] = fill_tensor("bf16", big, "3f80");
  call["scale_result"] = fill_tensor("fp32", big, "3f800000");
  call["out"] = fill_tensor("fp32", big, "0");
  const fs::path f = write_call(dir, "five.h5", call, 64, 512);
  EXPECT_LT(fs::file_size(f), 64u << 10);
  expect_refused_and_bounded(f, "gemm_call 'budget/0': over budget:");
}

TEST(ReplayBudget, StrideZeroRowsOfM2To26AreOverBudgetBeforeAllocation) {
  TempDir dir("budget");
  json call = replaytest::unit_call();
  call["M"] = std::int64_t{1} << 26;
  call["input"] = {{"dtype", "e4m3"}, {"shape", {std::int64_t{1} << 26, 32}}, {"strides", {0, 1}}};
  const fs::path f = write_call(dir, "stride0.h5", call, 32, 512);
  expect_refused_and_bounded(f, "over budget: 67108864 x 16 x 32");
}

TEST(ReplayBudget, GemmCallMultiplyAccumulatesOver2To36AreRefused) {
  TempDir dir("budget");
  json call = replaytest::unit_call();
  call.erase("M");
  call.erase("N");
  call.erase("K");
  call["input"] = {{"dtype", "e4m3"},
                   {"shape", {std::int64_t{1} << 20, 4096}},
                   {"strides", {0, 1}}}; // 2^20 x 2^12 over 4096 bytes
  call["mat2"] = {{"dtype", "e4m3"}, {"shape", {4096, 256}}, {"strides", {1, 0}}};
  const fs::path f = write_call(dir, "macs.h5", call, 4096, 4096);
  expect_refused_and_bounded(f, "is over the limit of 68719476736 multiply-accumulates");
}

TEST(ReplayBudget, AScaleOf2To28ElementsIsRefusedByItsShapeWithoutAllocating) {
  // torch refuses a scale that is neither one element nor row-wise; the case expects that
  // refusal and passes, and the 1 GiB scale is never made.
  TempDir dir("budget");
  json call = replaytest::unit_call();
  call["scale_a"] = fill_tensor("fp32", std::int64_t{1} << 28, "3f800000");
  const fs::path f = write_call(dir, "scale.h5", call, 64, 512);
  const Measured m = replay_measured({f});
  EXPECT_EQ(m.status, 0) << m.err << m.out;
  EXPECT_NE(m.out.find("1 passed, 0 failed"), std::string::npos) << m.out;
  EXPECT_LE(m.max_rss_bytes, bound(fs::file_size(f)));
}

TEST(ReplayBudget, CompressedDataOverSixteenMiBPlusTheFileIsRefusedBeforeDecoding) {
  TempDir dir("budget");
  // 2 x 32 MiB of zero codes: a file of a few hundred KiB.
  const fs::path f = write_zero_mma(dir, "zeros.h5", 8192, 4096);
  EXPECT_LT(fs::file_size(f), 4u << 20);
  expect_refused_and_bounded(f, "bytes in memory (16 MiB plus the file's");
}

TEST(ReplayBudget, ManyTinyCasesAreChargedTheirMemoryBeforeTheirIDsAreRead) {
  // 2^18 cases of K = 1: ~60 bytes a case on disk, ~220 in memory with their results.
  TempDir dir("budget");
  const fs::path f = write_zero_mma(dir, "many.h5", std::size_t{1} << 18, 1);
  expect_refused_and_bounded(f, "bytes in memory (16 MiB plus the file's");
}

TEST(ReplayBudget, AFileJustWithinTheDecodedBudgetReplaysWithinTheBound) {
  // The worst accepted kind of file: zeros that compress 1000-fold, decoding to just under
  // 16 MiB plus the file.
  TempDir dir("budget");
  const fs::path f = write_zero_mma(dir, "edge.h5", 1800, 4096);
  const Measured m = replay_measured({f});
  EXPECT_EQ(m.status, 0) << m.err;
  EXPECT_NE(m.out.find("1800 passed, 0 failed"), std::string::npos) << m.out;
  EXPECT_LE(m.max_rss_bytes, bound(fs::file_size(f)))
      << "peak " << m.max_rss_bytes << " bytes for a file of " << fs::file_size(f);
}

TEST(ReplayBudget, CommittedRecordingsReplayWithinTheBound) {
  const fs::path f = fs::path(MMAEMU_SOURCE_DIR) / "recordings/data/public/H100_fp16.h5";
  const Measured m = replay_measured({f});
  EXPECT_EQ(m.status, 0) << m.err;
  EXPECT_LE(m.max_rss_bytes, bound(fs::file_size(f)));
}

TEST(ReplayBudget, TheWorkOfACallIsChargedFromItsShapes) {
  // Independent arithmetic: 2 x (M*K + N*K) code bytes and M*N words of 4 bytes for the
  // accumulator, the result, out= and each of S parts.
  EXPECT_EQ(rec::gemm_work_bytes(2, 16, 32, 1), 2u * (64 + 512) + 4u * 32 * 4);
  EXPECT_EQ(rec::gemm_work_bytes(2, 16, 32, 4, 100), 2u * (64 + 512) + 4u * 32 * 7 + 100);
  EXPECT_EQ(rec::gemm_work_bytes(~0ull, ~0ull, ~0ull, 1), ~0ull); // saturates, never wraps
  EXPECT_EQ(rec::split_parts("1"), 1u);
  EXPECT_EQ(rec::split_parts("4,contiguous"), 4u);
  EXPECT_EQ(rec::split_parts("auto"), rec::kAssumedAutoSplitParts);
  EXPECT_EQ(rec::work_budget(1000), (256u << 20) + 8 * 1000);
  EXPECT_EQ(rec::decoded_budget(0), 16u << 20);
  EXPECT_EQ(rec::decoded_budget(~0ull), rec::kMaxDecodedBytes);
}

TEST(ReplayBudget, AnOverBudgetDescriptionIsAGemmCallErrorNamingTheBudget) {
  json call = replaytest::unit_call();
  call["input"] = {{"dtype", "e4m3"}, {"shape", {std::int64_t{1} << 26, 32}}, {"strides", {0, 1}}};
  try {
    mmaemu::harness::parse_gemm_call_desc(call.dump(), 32, 512);
    ADD_FAILURE() << "parsed";
  } catch (const mmaemu::harness::GemmCallError& e) {
    EXPECT_NE(std::string(e.what()).find("over budget: 67108864 x 16 x 32 with 1 split-K part"),
              std::string::npos)
        << e.what();
  }
}

TEST(ReplayBudget, FuzzSeedsNamedOverBudgetAreRefusedByTheBudget) {
  // fuzz/corpus/gemm_call/over-budget-*.json start the fuzzer at the budget checks; on the
  // fuzz target's storages (256 and 1024 bytes) each is refused by them, and the 2^28-element
  // scale parses (its shape is refused by scaled_mm's rules, never allocated).
  const fs::path dir = fs::path(MMAEMU_SOURCE_DIR) / "fuzz" / "corpus" / "gemm_call";
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("over-budget-", 0) != 0)
      continue;
    ++n;
    try {
      mmaemu::harness::parse_gemm_call_desc(mmaemu::testing::slurp(e.path()), 256, 1024);
      ADD_FAILURE() << name << " parsed";
    } catch (const mmaemu::harness::GemmCallError& err) {
      EXPECT_EQ(std::string(err.what()).rfind("over budget: ", 0), 0u)
          << name << ": " << err.what();
    }
  }
  EXPECT_GE(n, 3);
  const mmaemu::harness::GemmCallDesc d = mmaemu::harness::parse_gemm_call_desc(
      mmaemu::testing::slurp(dir / "scale-of-2to28-elements.json"), 256, 1024);
  EXPECT_TRUE(d.scale_a.make().is_meta());
  EXPECT_EQ(d.scale_a.bytes(), 0u);
}

} // namespace
