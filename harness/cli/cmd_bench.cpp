// SPDX-License-Identifier: BSD-2-Clause
// mmaemu bench gemm --M --N --K [--fast|--slow] [--threads T] [--profile P] [--repeat R]
//                  [--json PATH]
// mmaemu bench gemm --sweep [--N --K] [--threads T] [--repeat R] [--json PATH]
// The exact CPU reference GEMM (accumulate, split 1) against OpenBLAS cblas_sgemm on the
// decoded operands, timed in the same run on the same cores; prints each figure with what it
// compares: the seconds and GMAC/s of both, the time ratio reference / SGEMM and the call's
// peak memory against its limit. Slow accumulation by default, as torch (use_fast_accum=False)
// and as `gemm` and `explain`. --sweep runs the table of the performance tier: M in
// {1, 16, 128, 2048}, fast and slow, profiles hopper and ada.

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
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

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
};

// The sweep's rows (the performance tier's table).
constexpr std::array<std::int64_t, 4> kSweepM = {1, 16, 128, 2048};
constexpr std::array<const char*, 2> kSweepProfiles = {"hopper", "ada"};

template <class F> double best_seconds(int repeat, F f) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
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
  std::int64_t M = 0, N = 0, K = 0;
  double ref_s = 0, blas_s = 0;
  std::optional<double> peak_mb; // the call's peak: its operands plus what it allocated
  double limit_mb = 0;           // 3 x (operands + output)
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
            unsigned threads, int repeat) {
  Row row;
  row.profile = profile;
  row.fast = fast;
  row.M = a.size(0);
  row.N = b.size(0);
  row.K = a.size(1);
  const double operand_bytes = static_cast<double>((row.M + row.N) * row.K);
  const double output_bytes = 4.0 * static_cast<double>(row.M * row.N);
  row.limit_mb = 3 * (operand_bytes + output_bytes) / 1e6;

  AccumulateOptions opt;
  opt.profile = profile;
  opt.splitk = SplitKRequest::explicit_split(1);
  opt.threads = threads;
  const std::optional<double> before = status_kib("VmRSS:");
  const bool peak_ok = before && reset_peak();
  {
    Tensor acc;
    row.ref_s = best_seconds(repeat, [&] {
      acc = Tensor();
      acc = accumulate(a, b, fast, opt);
    });
  }
  const std::optional<double> hwm = status_kib("VmHWM:");
  if (peak_ok && hwm)
    row.peak_mb = (*hwm - *before) * 1024 / 1e6 + operand_bytes / 1e6;

  const std::vector<float> fa = decoded(a), fb = decoded(b);
  std::vector<float> fc(static_cast<std::size_t>(row.M * row.N));
  openblas_set_num_threads(static_cast<int>(threads));
  row.blas_s = best_seconds(std::max(repeat, 3), [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(row.M),
                static_cast<int>(row.N), static_cast<int>(row.K), 1.0f, fa.data(),
                static_cast<int>(row.K), fb.data(), static_cast<int>(row.K), 0.0f, fc.data(),
                static_cast<int>(row.N));
  });
  return row;
}

nlohmann::json row_json(const Row& r, unsigned threads) {
  nlohmann::json j = {{"M", r.M},
                      {"N", r.N},
                      {"K", r.K},
                      {"fast", r.fast},
                      {"threads", threads},
                      {"profile", r.profile},
                      {"reference_seconds", r.ref_s},
                      {"reference_gmacs", gmacs(r, r.ref_s)},
                      {"sgemm_seconds", r.blas_s},
                      {"sgemm_gmacs", gmacs(r, r.blas_s)},
                      {"ratio", r.ref_s / r.blas_s},
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

int bench_gemm(const BenchArgs& args, unsigned threads) {
  const bool fast = args.fast;
  std::mt19937_64 rng(args.seed);
  const Tensor a = make_operand(args.M, args.K, rng);
  const Tensor b = make_operand(args.N, args.K, rng);
  Row r;
  try {
    r = run_row(a, b, args.profile, fast, threads, args.repeat);
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what()); // the call raises
    return kFailed;
  }
  const double macs = static_cast<double>(args.M) * args.N * args.K;
  std::printf("shape      M=%lld N=%lld K=%lld (%.3g GMAC), profile %s, %u thread%s, best of %d\n",
              static_cast<long long>(args.M), static_cast<long long>(args.N),
              static_cast<long long>(args.K), macs / 1e9, support::printable(args.profile).c_str(),
              threads, threads == 1 ? "" : "s", args.repeat);
  std::printf("accum      %s\n", fast ? "fast (use_fast_accum=True, --fast)"
                                      : "slow (use_fast_accum=False: torch's default; --fast "
                                        "for the other)");
  std::printf(
      "reference  %9.4f s  %9.3f GMAC/s  the exact emulation (mmaemu accumulate, split 1)\n",
      r.ref_s, gmacs(r, r.ref_s));
  std::printf("sgemm      %9.4f s  %9.3f GMAC/s  the baseline: OpenBLAS cblas_sgemm on the decoded "
              "values (fp32, not exact)\n",
              r.blas_s, gmacs(r, r.blas_s));
  std::printf("ratio      %9.2f x  reference time / sgemm time (lower is faster)\n",
              r.ref_s / r.blas_s);
  std::printf("peak       %s\n", peak_text(r).c_str());
  return write_json(args.json, row_json(r, threads));
}

// The sweep: one operand pair per M (shared by the four rows of that M), rows printed as
// they finish.
int bench_sweep(const BenchArgs& args, unsigned threads) {
  std::printf("bench gemm --sweep: N=%lld K=%lld, %u threads; SGEMM (OpenBLAS) timed in the "
              "same run; best of %d\n",
              static_cast<long long>(args.N), static_cast<long long>(args.K), threads, args.repeat);
  std::printf("columns: reference s and GMAC/s of the exact emulation; sgemm GMAC/s of OpenBLAS on "
              "the decoded values; ratio = reference time / sgemm time (lower is faster); peak = "
              "the call's peak memory, limit = 3 x (operands + output), both in MB\n");
  std::printf("%-8s %-5s %6s %11s %9s %12s %7s %9s %9s\n", "profile", "accum", "M", "reference s",
              "GMAC/s", "sgemm GMAC/s", "ratio", "peak MB", "limit MB");
  std::fflush(stdout);
  nlohmann::json rows = nlohmann::json::array(), benchmarks = nlohmann::json::array();
  std::mt19937_64 rng(args.seed);
  const Tensor b = make_operand(args.N, args.K, rng);
  for (const std::int64_t M : kSweepM) {
    const Tensor a = make_operand(M, args.K, rng);
    for (const char* profile : kSweepProfiles) {
      double fast_s = 0;
      for (const bool fast : {true, false}) {
        Row r;
        try {
          r = run_row(a, b, profile, fast, threads, args.repeat);
        } catch (const MmaemuError& e) {
          error_line(std::string(e.class_name()) + ": " + e.what());
          return kFailed;
        }
        char peak[32] = "?";
        if (r.peak_mb)
          std::snprintf(peak, sizeof peak, "%.1f", *r.peak_mb);
        std::printf("%-8s %-5s %6lld %11.4f %9.3f %12.3f %7.2f %9s %9.1f\n", profile,
                    fast ? "fast" : "slow", static_cast<long long>(M), r.ref_s, gmacs(r, r.ref_s),
                    gmacs(r, r.blas_s), r.ref_s / r.blas_s, peak, r.limit_mb);
        std::fflush(stdout);
        rows.push_back(row_json(r, threads));
        const std::string key =
            std::string(profile) + "_" + (fast ? "fast" : "slow") + "_M" + std::to_string(M);
        benchmarks.push_back(
            {{"name", "ratio_" + key}, {"value", r.ref_s / r.blas_s}, {"unit", "x SGEMM time"}});
        benchmarks.push_back(
            {{"name", "gmacs_" + key}, {"value", gmacs(r, r.ref_s)}, {"unit", "GMAC/s"}});
        if (r.peak_mb) {
          benchmarks.push_back({{"name", "peak_memory_" + key},
                                {"value", *r.peak_mb / (r.limit_mb / 3)},
                                {"unit", "x (operands + output)"}});
        }
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
  return write_json(args.json, {{"N", args.N},
                                {"K", args.K},
                                {"threads", threads},
                                {"repeat", args.repeat},
                                {"rows", rows},
                                {"benchmarks", benchmarks}});
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
  if (args.M <= 0 || args.N <= 0 || args.K <= 0 || args.repeat < 1) {
    error_line("bench gemm: M, N, K and --repeat must be positive");
    return kUsage;
  }
  if (args.threads > 4096) {
    error_line("--threads: " + std::to_string(args.threads) + " is over 4096");
    return kUsage;
  }
  try {
    // Before the operands are allocated.
    check_gemm_size(args.sweep ? kSweepM.back() : args.M, args.N, args.K);
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
    return args.sweep ? bench_sweep(args, threads) : bench_gemm(args, threads);
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
  g->add_flag("--sweep", args->sweep,
              "the performance table: M in {1, 16, 128, 2048} (with --N and --K), fast and "
              "slow, profiles hopper and ada");
  args->json.add(*g, "write the figures");
  g->callback([args, &exit_code] { exit_code = run_bench_gemm(*args); });
  add_bench_kernels(*bench, exit_code);
}

} // namespace mmaemu::cli
