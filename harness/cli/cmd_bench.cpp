// SPDX-License-Identifier: BSD-2-Clause
// mmaemu bench gemm --M --N --K [--fast|--slow] [--splitk S,scheme] [--threads T] [--profile P]
//                   [--repeat R] [--json PATH]
// mmaemu bench gemm --sweep [--N --K] [--threads T] [--repeat R] [--shard k/N] [--json PATH]
// The exact CPU reference GEMM (accumulate) against OpenBLAS cblas_sgemm on the decoded
// operands, timed in the same run on the same cores; prints each figure with what it
// compares: the seconds and GMAC/s of both, the time ratio reference / SGEMM and the call's
// peak memory against its limit. Slow accumulation by default, as torch (use_fast_accum=False)
// and as `gemm` and `explain`. With --splitk the
// split call and the unsplit call of the same shape run in the same process, and
// `split_over_unsplit` compares them. --sweep runs the table of the performance tier: M in
// kSweepM, fast and slow, profiles hopper and ada; split calls (M 256, K 8192, S 2, 4, 8, the
// hopper and ada schemes) against their unsplit call; model::dot on one core.

#ifdef MMAEMU_WITH_OPENBLAS
#include <cblas.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "strict_numbers.hpp"

#ifdef MMAEMU_WITH_OPENBLAS
// OpenBLAS's thread control (declared here: the cblas.h alternative may be netlib's).
extern "C" void openblas_set_num_threads(int num_threads);
#endif

namespace mmaemu::cli {

namespace {

struct BenchArgs {
  std::int64_t M = 2048, N = 5760, K = 1920;
  bool fast = false, slow = false, sweep = false;
  unsigned threads = 0;
  std::string profile = "hopper";
  int repeat = 1;
  std::uint64_t seed = 40;
  JsonOption json;
  std::string splitk = "1";
  std::int64_t split_M = 256, split_K = 8192; // the sweep's split calls
  std::string shard;                          // --sweep --shard k/N
};

// The sweep's rows (the performance tier's table): decoding batches, the middle of the range
// and the Evo 2 1B projection (M 2048), at the given N and K.
constexpr std::array<std::int64_t, 7> kSweepM = {1, 16, 64, 128, 200, 256, 2048};
constexpr std::array<const char*, 2> kSweepProfiles = {"hopper", "ada"};
// Its split calls: --split-M x --N x --split-K (256 x N x 8192 by default) with S parts, fast
// accumulation, each profile's schemes, against the unsplit call of the same operands.
constexpr std::array<int, 3> kSplitS = {2, 4, 8};
struct SplitScheme {
  const char* profile;
  const char* scheme;
};
constexpr std::array<SplitScheme, 3> kSplitSchemes = {
    {{"hopper", "contiguous"}, {"ada", "serial"}, {"ada", "pairwise"}}};
// model::dot on one core: rows of K codes (the Google Benchmark mmaemu_bench_dot's shape).
constexpr std::size_t kDotK = 4096, kDotRows = 64;

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The best of `repeat` runs of f: wall-clock seconds, and the process's CPU seconds (all its
// threads), which a loaded machine disturbs much less.
struct Timing {
  double wall = 1e300, cpu = 1e300;
};

template <class F> Timing best_seconds(int repeat, F f) {
  Timing best;
  for (int r = 0; r < repeat; ++r) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best.wall = std::min(
        best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    best.cpu = std::min(best.cpu, process_cpu_seconds() - c0);
  }
  return best;
}

// Peak memory of a call, from Linux's per-process high-water mark: writing "5" to
// /proc/self/clear_refs resets VmHWM to the current VmRSS, and VmHWM after the call is the
// peak during it. Empty where the kernel does not allow it.
std::optional<double> status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0)
      return std::stod(line.substr(std::string(key).size()));
  }
  return std::nullopt;
}

bool reset_peak() {
#if defined(__GLIBC__)
  // A fixed mmap threshold: every large block is mapped and unmapped, so memory freed by an
  // earlier row is not reused (and hidden) by the next, whatever ran before.
  static const bool fixed = mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1;
  (void)fixed;
#endif
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// One row: the reference on the operands, then SGEMM on their decoded values.
struct Row {
  std::string profile;
  bool fast = true;
  int S = 1;
  std::string scheme = "none";
  std::int64_t M = 0, N = 0, K = 0;
  double ref_s = 0, blas_s = 0;         // wall-clock
  double ref_cpu_s = 0, blas_cpu_s = 0; // CPU time of the process
  std::optional<double> peak_mb;        // the call's peak: its operands plus what it allocated
  double limit_mb = 0;                  // 3 x (operands + output)
};

double gmacs(const Row& r, double s) {
  return static_cast<double>(r.M) * static_cast<double>(r.N) * static_cast<double>(r.K) / s / 1e9;
}

#ifdef MMAEMU_WITH_OPENBLAS
// Operands: finite E4M3 codes, a rough Gaussian shape (small codes more often), written
// straight into the tensor's storage.
Tensor make_operand(std::int64_t rows, std::int64_t K, std::mt19937_64& rng) {
  const auto& table = model::fp8_operand_table(Format::e4m3);
  Tensor t = Tensor::zeros(Format::e4m3, {rows, K});
  std::normal_distribution<double> g(0.0, 40.0);
  for (std::uint8_t& b : *t.storage()) {
    std::uint8_t c;
    do
      c = static_cast<std::uint8_t>(static_cast<int>(g(rng)) & 0xFF);
    while (table[c].cls > 1);
    b = c;
  }
  return t;
}

std::vector<float> decoded(const Tensor& t) {
  std::array<float, 256> value{};
  for (std::uint32_t c = 0; c < 256; ++c) {
    if (model::fp8_operand_table(Format::e4m3)[c].cls <= 1)
      value[c] = static_cast<float>(decode_to_double(Format::e4m3, c));
  }
  std::vector<float> f(t.storage()->size());
  for (std::size_t i = 0; i < f.size(); ++i)
    f[i] = value[(*t.storage())[i]];
  return f;
}

Row run_row(const Tensor& a, const Tensor& b, const std::string& profile, bool fast,
            unsigned threads, int repeat, const SplitK& split = {1, "none"}) {
  Row row;
  row.profile = profile;
  row.fast = fast;
  row.S = split.S;
  row.scheme = split.scheme;
  row.M = a.size(0);
  row.N = b.size(0);
  row.K = a.size(1);
  const double operand_bytes = static_cast<double>((row.M + row.N) * row.K);
  const double output_bytes = 4.0 * static_cast<double>(row.M * row.N);
  row.limit_mb = 3 * (operand_bytes + output_bytes) / 1e6;

  AccumulateOptions opt;
  opt.profile = profile;
  opt.splitk = SplitKRequest::explicit_split(split.S, split.scheme);
  opt.threads = threads;
  const std::optional<double> before = status_kib("VmRSS:");
  const bool peak_ok = before && reset_peak();
  {
    Tensor acc;
    const Timing t = best_seconds(repeat, [&] {
      acc = Tensor();
      acc = accumulate(a, b, fast, opt);
    });
    row.ref_s = t.wall;
    row.ref_cpu_s = t.cpu;
  }
  const std::optional<double> hwm = status_kib("VmHWM:");
  if (peak_ok && hwm)
    row.peak_mb = (*hwm - *before) * 1024 / 1e6 + operand_bytes / 1e6;

  const std::vector<float> fa = decoded(a), fb = decoded(b);
  std::vector<float> fc(static_cast<std::size_t>(row.M * row.N));
  openblas_set_num_threads(static_cast<int>(threads));
  const Timing tb = best_seconds(std::max(repeat, 3), [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(row.M),
                static_cast<int>(row.N), static_cast<int>(row.K), 1.0f, fa.data(),
                static_cast<int>(row.K), fb.data(), static_cast<int>(row.K), 0.0f, fc.data(),
                static_cast<int>(row.N));
  });
  row.blas_s = tb.wall;
  row.blas_cpu_s = tb.cpu;
  return row;
}

nlohmann::json row_json(const Row& r, unsigned threads) {
  nlohmann::json j = {{"M", r.M},
                      {"N", r.N},
                      {"K", r.K},
                      {"fast", r.fast},
                      {"splitk", r.S},
                      {"scheme", r.scheme},
                      {"threads", threads},
                      {"profile", r.profile},
                      {"reference_seconds", r.ref_s},
                      {"reference_gmacs", gmacs(r, r.ref_s)},
                      {"sgemm_seconds", r.blas_s},
                      {"sgemm_gmacs", gmacs(r, r.blas_s)},
                      {"ratio", r.ref_s / r.blas_s},
                      {"reference_cpu_seconds", r.ref_cpu_s},
                      {"sgemm_cpu_seconds", r.blas_cpu_s},
                      {"cpu_ratio", r.ref_cpu_s / r.blas_cpu_s},
                      {"peak_memory_limit_mb", r.limit_mb}};
  j["peak_memory_mb"] = r.peak_mb ? nlohmann::json(*r.peak_mb) : nlohmann::json(nullptr);
  return j;
}

// A size in MB given as the most readable unit: "1.23 GB", "45.6 MB", "789 kB".
std::string size_text(double mb) {
  char buf[32];
  if (mb >= 1000)
    std::snprintf(buf, sizeof buf, "%.2f GB", mb / 1000);
  else if (mb >= 10)
    std::snprintf(buf, sizeof buf, "%.1f MB", mb);
  else if (mb >= 1)
    std::snprintf(buf, sizeof buf, "%.2f MB", mb);
  else
    std::snprintf(buf, sizeof buf, "%.0f kB", mb * 1000);
  return buf;
}

std::string peak_text(const Row& r) {
  if (!r.peak_mb)
    return "unknown (/proc/self/clear_refs not writable)";
  return size_text(*r.peak_mb) + "  the call's peak (operands + what it allocated); limit " +
         size_text(r.limit_mb) + " = 3 x (operands + output)";
}

int write_json(const JsonOption& json, const nlohmann::json& j) {
  try {
    json.write(j);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

void print_call(const Row& r, unsigned threads, int repeat) {
  const double macs =
      static_cast<double>(r.M) * static_cast<double>(r.N) * static_cast<double>(r.K);
  std::printf("shape      M=%lld N=%lld K=%lld (%.3g GMAC), profile %s, split %d%s%s, %u thread%s, "
              "best of %d\n",
              static_cast<long long>(r.M), static_cast<long long>(r.N), static_cast<long long>(r.K),
              macs / 1e9, support::printable(r.profile).c_str(), r.S, r.S > 1 ? "," : "",
              r.S > 1 ? r.scheme.c_str() : "", threads, threads == 1 ? "" : "s", repeat);
  std::printf("accum      %s\n", r.fast ? "fast (use_fast_accum=True, --fast)"
                                        : "slow (use_fast_accum=False: torch's default; --fast "
                                          "for the other)");
  std::printf("reference  %9.4f s  %9.3f GMAC/s  the exact emulation (mmaemu accumulate)\n",
              r.ref_s, gmacs(r, r.ref_s));
  std::printf("sgemm      %9.4f s  %9.3f GMAC/s  the baseline: OpenBLAS cblas_sgemm on the decoded "
              "values (fp32, not exact)\n",
              r.blas_s, gmacs(r, r.blas_s));
  std::printf("ratio      %9.2f x  reference time / sgemm time (lower is faster)\n",
              r.ref_s / r.blas_s);
  std::printf("cpu ratio  %9.2f x  CPU seconds of the process, reference / sgemm\n",
              r.ref_cpu_s / r.blas_cpu_s);
  std::printf("peak       %s\n", peak_text(r).c_str());
}

int bench_gemm(const BenchArgs& args, const SplitK& split, unsigned threads) {
  const bool fast = args.fast;
  std::mt19937_64 rng(args.seed);
  const Tensor a = make_operand(args.M, args.K, rng);
  const Tensor b = make_operand(args.N, args.K, rng);
  Row r, unsplit;
  try {
    r = run_row(a, b, args.profile, fast, threads, args.repeat, split);
    if (split.S > 1) // the same shape and operands in one part, in the same run
      unsplit = run_row(a, b, args.profile, fast, threads, args.repeat);
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what()); // the call raises
    return kFailed;
  }
  print_call(r, threads, args.repeat);
  nlohmann::json j = row_json(r, threads);
  if (split.S > 1) {
    std::printf("unsplit    %9.3f s  %8.3f GMAC/s  (the same call in one part; ratio %.2f)\n",
                unsplit.ref_s, gmacs(unsplit, unsplit.ref_s), unsplit.ref_s / unsplit.blas_s);
    std::printf("split_over_unsplit: %.3f\n", r.ref_s / unsplit.ref_s);
    j["unsplit"] = row_json(unsplit, threads);
    j["split_over_unsplit"] = r.ref_s / unsplit.ref_s;
  }
  return write_json(args.json, j);
}

void print_sweep_row(const Row& r) {
  char peak[32] = "?";
  if (r.peak_mb)
    std::snprintf(peak, sizeof peak, "%.0f", *r.peak_mb);
  char split[32] = "1";
  if (r.S > 1)
    std::snprintf(split, sizeof split, "%d,%s", r.S, r.scheme.c_str());
  std::printf("%-8s %-5s %6lld %6lld %-13s %11.4f %9.3f %12.3f %7.2f %9.2f %9s %9.0f\n",
              r.profile.c_str(), r.fast ? "fast" : "slow", static_cast<long long>(r.M),
              static_cast<long long>(r.K), split, r.ref_s, gmacs(r, r.ref_s), gmacs(r, r.blas_s),
              r.ref_s / r.blas_s, r.ref_cpu_s / r.blas_cpu_s, peak, r.limit_mb);
  std::fflush(stdout);
}

// The figures of one row in the sweep's benchmarks array, named after key.
void add_row_benchmarks(nlohmann::json& benchmarks, const std::string& key, const Row& r) {
  benchmarks.push_back(
      {{"name", "ratio_" + key}, {"value", r.ref_s / r.blas_s}, {"unit", "x SGEMM time"}});
  benchmarks.push_back(
      {{"name", "gmacs_" + key}, {"value", gmacs(r, r.ref_s)}, {"unit", "GMAC/s"}});
  benchmarks.push_back({{"name", "cpu_ratio_" + key},
                        {"value", r.ref_cpu_s / r.blas_cpu_s},
                        {"unit", "x SGEMM CPU time"}});
  if (r.peak_mb) {
    benchmarks.push_back({{"name", "peak_memory_" + key},
                          {"value", *r.peak_mb / (r.limit_mb / 3)},
                          {"unit", "x (operands + output)"}});
  }
}

// model::dot on one core: kDotRows chains of kDotK codes (finite E4M3, the same rough Gaussian
// as the GEMM operands) through dot_rows, the best of `repeat` timings of the calling thread's
// CPU time (a figure for one core, as mmaemu_bench_dot's counter).
double dot_gmacs(const std::string& profile, int repeat, std::mt19937_64& rng) {
  const Tensor a =
      make_operand(static_cast<std::int64_t>(kDotRows), static_cast<std::int64_t>(kDotK), rng);
  const Tensor b =
      make_operand(static_cast<std::int64_t>(kDotRows), static_cast<std::int64_t>(kDotK), rng);
  const Preset& p = get_preset(get_profile(profile).preset);
  std::vector<std::uint32_t> out(kDotRows);
  const auto thread_seconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  constexpr int kCalls = 20; // about 5 M MAC per call: a timing well above the clock's step
  double best = 1e300;
  for (int r = 0; r < std::max(repeat, 3); ++r) {
    const double t0 = thread_seconds();
    for (int i = 0; i < kCalls; ++i) {
      model::dot_rows(a.storage()->data(), b.storage()->data(), nullptr, kDotRows, kDotK, p, {},
                      out.data());
    }
    best = std::min(best, thread_seconds() - t0);
  }
  return static_cast<double>(kCalls * kDotRows * kDotK) / best / 1e9;
}

// The sweep: one operand pair per M (shared by the four rows of that M), then the split calls
// and model::dot, rows printed as they finish. Under --shard k/N the shard times the groups
// k-1, k-1+N, ... of the table: each (M, profile) with its fast and slow rows, each profile's
// split calls with their unsplit call, each profile's dot; the others' figures are listed
// under not_in_shard. Every operand is drawn in every shard, so that each shard's are equal.
int bench_sweep(const BenchArgs& args, unsigned threads, const harness::Shard& shard) {
  std::printf("bench gemm --sweep: N=%lld K=%lld (split calls: M=%lld K=%lld), %u threads; SGEMM "
              "(OpenBLAS) timed in the same run; best of %d\n",
              static_cast<long long>(args.N), static_cast<long long>(args.K),
              static_cast<long long>(args.split_M), static_cast<long long>(args.split_K), threads,
              args.repeat);
  std::printf("%-8s %-5s %6s %6s %-13s %11s %9s %12s %7s %9s %9s %9s\n", "profile", "accum", "M",
              "K", "split", "reference s", "GMAC/s", "sgemm GMAC/s", "ratio", "cpu ratio",
              "peak MB", "limit MB");
  std::printf("columns: reference s and GMAC/s of the exact emulation; sgemm GMAC/s of OpenBLAS on "
              "the decoded values; ratio = reference time / sgemm time, cpu ratio the same in CPU "
              "seconds (lower is faster); peak = the call's peak memory, limit = 3 x (operands + "
              "output), both in MB\n");
  std::fflush(stdout);
  nlohmann::json rows = nlohmann::json::array(), benchmarks = nlohmann::json::array();
  nlohmann::json not_in_shard = nlohmann::json::array();
  std::size_t group = 0;
  const auto mine = [&] { return shard.count <= 1 || group++ % shard.count == shard.index - 1; };
  std::mt19937_64 rng(args.seed);
  try {
    {
      const Tensor b = make_operand(args.N, args.K, rng);
      for (const std::int64_t M : kSweepM) {
        const Tensor a = make_operand(M, args.K, rng);
        for (const char* profile : kSweepProfiles) {
          if (!mine()) {
            const std::string at = std::string(profile) + "_";
            for (const char* mode : {"fast", "slow"}) {
              const std::string key = at + mode + "_M" + std::to_string(M);
              for (const char* what : {"ratio_", "gmacs_", "cpu_ratio_", "peak_memory_"})
                not_in_shard.push_back(what + key);
            }
            not_in_shard.push_back("slow_over_fast_" + at + "M" + std::to_string(M));
            continue;
          }
          double fast_s = 0;
          for (const bool fast : {true, false}) {
            const Row r = run_row(a, b, profile, fast, threads, args.repeat);
            print_sweep_row(r);
            rows.push_back(row_json(r, threads));
            add_row_benchmarks(benchmarks,
                               std::string(profile) + "_" + (fast ? "fast" : "slow") + "_M" +
                                   std::to_string(M),
                               r);
            if (fast) {
              fast_s = r.ref_s;
            } else {
              benchmarks.push_back(
                  {{"name", std::string("slow_over_fast_") + profile + "_M" + std::to_string(M)},
                   {"value", r.ref_s / fast_s},
                   {"unit", "x fast time"}});
            }
          }
        }
      }
    }
    {
      const Tensor b = make_operand(args.N, args.split_K, rng);
      const Tensor a = make_operand(args.split_M, args.split_K, rng);
      const std::string shape =
          "_fast_M" + std::to_string(args.split_M) + "_K" + std::to_string(args.split_K);
      std::string last_profile;
      double unsplit_s = 0;
      bool ours = false;
      for (const SplitScheme& sc : kSplitSchemes) {
        if (sc.profile != last_profile)
          ours = mine(); // a profile's split calls are one group
        if (!ours) {
          if (sc.profile != last_profile) {
            for (const char* what : {"ratio_", "gmacs_", "cpu_ratio_", "peak_memory_"})
              not_in_shard.push_back(what + (sc.profile + shape) + "_S1");
          }
          for (const int S : kSplitS) {
            const std::string split = "_S" + std::to_string(S) + "_" + sc.scheme;
            for (const char* what : {"ratio_", "gmacs_", "cpu_ratio_", "peak_memory_"})
              not_in_shard.push_back(what + (sc.profile + shape) + split);
            not_in_shard.push_back(std::string("split_over_unsplit_") + sc.profile + split);
          }
          last_profile = sc.profile;
          continue;
        }
        if (sc.profile != last_profile) { // the unsplit call, once per profile
          const Row r = run_row(a, b, sc.profile, true, threads, args.repeat);
          print_sweep_row(r);
          rows.push_back(row_json(r, threads));
          add_row_benchmarks(benchmarks, sc.profile + shape + "_S1", r);
          unsplit_s = r.ref_s;
          last_profile = sc.profile;
        }
        for (const int S : kSplitS) {
          const Row r = run_row(a, b, sc.profile, true, threads, args.repeat, {S, sc.scheme});
          print_sweep_row(r);
          rows.push_back(row_json(r, threads));
          const std::string split = "_S" + std::to_string(S) + "_" + sc.scheme;
          add_row_benchmarks(benchmarks, sc.profile + shape + split, r);
          benchmarks.push_back({{"name", std::string("split_over_unsplit_") + sc.profile + split},
                                {"value", r.ref_s / unsplit_s},
                                {"unit", "x unsplit time"}});
        }
      }
    }
    for (const char* profile : kSweepProfiles) {
      const std::string name = std::string("dot_gmacs_") + profile + "_K" + std::to_string(kDotK);
      if (!mine()) {
        not_in_shard.push_back(name);
        continue;
      }
      const double g = dot_gmacs(profile, args.repeat, rng);
      std::printf("dot      %-5s K=%zu, one core: %.3f G MAC/s\n", profile, kDotK, g);
      std::fflush(stdout);
      benchmarks.push_back({{"name", name}, {"value", g}, {"unit", "G MAC/s, one core"}});
    }
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what()); // a call raised
    return kFailed;
  }
  nlohmann::json result = {{"N", args.N},           {"K", args.K},  {"threads", threads},
                           {"repeat", args.repeat}, {"rows", rows}, {"benchmarks", benchmarks}};
  if (shard.count > 1) {
    // The figures that other shards measure: not this shard's to report as unmeasured.
    result["shard"] = shard.text();
    result["not_in_shard"] = not_in_shard;
  }
  return write_json(args.json, result);
}
#endif

int run_bench_gemm(const BenchArgs& args) {
  if (args.fast && args.slow) {
    error_line("bench gemm: give --fast or --slow, not both");
    return kUsage;
  }
  if (args.sweep && (args.fast || args.slow)) {
    error_line("bench gemm: --sweep runs fast and slow; give neither --fast nor --slow");
    return kUsage;
  }
  if (args.M <= 0 || args.N <= 0 || args.K <= 0 || args.repeat < 1 || args.split_M <= 0 ||
      args.split_K <= 0) {
    error_line("bench gemm: M, N, K, --split-M, --split-K and --repeat must be positive");
    return kUsage;
  }
  if (args.threads > 4096) {
    error_line("--threads: " + std::to_string(args.threads) + " is over 4096");
    return kUsage;
  }
  SplitK split{1, "none"};
  try {
    const SplitKRequest req = parse_splitk(args.splitk);
    if (req.is_auto)
      throw ValueError("bench gemm times an explicit split: 1 or S,scheme, not 'auto'");
    split = req.split;
  } catch (const MmaemuError& e) {
    error_line("--splitk: " + std::string(e.what()));
    return kUsage;
  }
  if (args.sweep && split.S != 1) {
    error_line("bench gemm: --sweep times its own split calls; give no --splitk");
    return kUsage;
  }
  harness::Shard shard;
  try {
    if (!args.shard.empty()) {
      if (!args.sweep)
        throw std::invalid_argument("--shard splits the --sweep; give --sweep");
      shard = harness::parse_shard(args.shard);
    }
    // Before the operands are allocated.
    check_gemm_size(args.sweep ? kSweepM.back() : args.M, args.N, args.K);
    if (args.sweep)
      check_gemm_size(args.split_M, args.N, args.split_K);
    if (!args.sweep)
      get_profile(args.profile); // an unknown name is a usage error, before the operands
    args.json.check();           // before the run
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const std::exception& e) {
    error_line(std::string("bench gemm: ") + (args.sweep ? "" : "--profile: ") + e.what());
    return kUsage;
  }
#ifndef MMAEMU_WITH_OPENBLAS
  // Built with MMAEMU_OPENBLAS=OFF (the GPU bundle, which must stay small): no SGEMM baseline.
  error_line("bench gemm: this mmaemu was built without OpenBLAS (MMAEMU_OPENBLAS=OFF)");
  return kUnavailable;
#else
  const unsigned threads =
      args.threads ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  try {
    return args.sweep ? bench_sweep(args, threads, shard) : bench_gemm(args, split, threads);
  } catch (const std::bad_alloc&) {
    error_line("bench gemm: out of memory for M=" + std::to_string(args.M) +
               " N=" + std::to_string(args.N) + " K=" + std::to_string(args.K));
    return kUsage;
  }
#endif
}

} // namespace

void add_bench(CLI::App& app, int& exit_code) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks against a baseline run in the same process");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchArgs>();
  CLI::App* g = bench->add_subcommand("gemm", "Exact reference GEMM vs OpenBLAS SGEMM");
  g->add_option("--M", args->M, "rows")->capture_default_str();
  g->add_option("--N", args->N, "columns")->capture_default_str();
  g->add_option("--K", args->K, "inner dimension")->capture_default_str();
  g->add_flag("--fast", args->fast, "fast accumulation (use_fast_accum=True)");
  g->add_flag("--slow", args->slow,
              "slow accumulation, 128-element chunks (the default, as torch, gemm and explain)");
  g->add_option("--threads", args->threads, "threads for both (0: all cores)")
      ->capture_default_str();
  g->add_option("--profile", args->profile, "profile")->capture_default_str();
  g->add_option("--repeat", args->repeat, "runs; the best is reported")->capture_default_str();
  g->add_option("--split-M", args->split_M, "--sweep: rows of the split calls")
      ->capture_default_str();
  g->add_option("--split-K", args->split_K, "--sweep: inner dimension of the split calls")
      ->capture_default_str();
  g->add_option("--splitk", args->splitk,
                "1 | S,contiguous | S,serial | S,pairwise: the split call, timed with the "
                "unsplit call of the same shape")
      ->capture_default_str();
  g->add_flag("--sweep", args->sweep,
              "the performance table: M in {1, 16, 64, 128, 200, 256, 2048} (with --N and --K), "
              "fast and slow, profiles hopper and ada; split calls; model::dot");
  args->json.add(*g, "write the figures");
  g->add_option("--shard", args->shard,
                "with --sweep: k/N, the groups k-1, k-1+N, ... of the table ((M, profile), each "
                "profile's split calls, each profile's dot; T6's shards)")
      ->check(non_empty("a shard k/N"));
  g->callback([args, &exit_code] { exit_code = run_bench_gemm(*args); });
  add_bench_kernels(*bench, exit_code);
}

} // namespace mmaemu::cli
