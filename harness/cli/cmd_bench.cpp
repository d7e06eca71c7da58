// SPDX-License-Identifier: BSD-2-Clause
// mmaemu bench gemm --M --N --K [--fast|--slow] [--threads T] [--profile P] [--repeat R]
// mmaemu bench gemm --sweep [--N --K] [--threads T] [--repeat R] [--json F]
// The exact CPU reference GEMM (accumulate, split 1) against OpenBLAS cblas_sgemm on the
// decoded operands, timed in the same run on the same cores; prints GMAC/s of both,
// `ratio: <reference seconds / SGEMM seconds>` and the call's peak memory. --sweep runs the
// table of the performance tier: M in {1, 16, 128, 2048}, fast and slow, profiles hopper and
// ada.

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
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

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
  std::string json;
  std::string shard; // --sweep --shard k/N
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

std::string peak_text(const Row& r) {
  if (!r.peak_mb)
    return "unknown (/proc/self/clear_refs not writable)";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f MB (limit %.0f MB: 3 x operands and output)", *r.peak_mb,
                r.limit_mb);
  return buf;
}

int write_json(const std::string& path, const nlohmann::json& j) {
  try {
    support::write_file_atomic(path, j.dump(2) + "\n");
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

int bench_gemm(const BenchArgs& args, unsigned threads) {
  const bool fast = !args.slow;
  std::mt19937_64 rng(args.seed);
  const Tensor a = make_operand(args.M, args.K, rng);
  const Tensor b = make_operand(args.N, args.K, rng);
  Row r;
  try {
    r = run_row(a, b, args.profile, fast, threads, args.repeat);
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUsage;
  }
  const double macs = static_cast<double>(args.M) * args.N * args.K;
  std::printf(
      "shape      M=%lld N=%lld K=%lld (%.2f GMAC), %s accumulation, profile %s, %u threads\n",
      static_cast<long long>(args.M), static_cast<long long>(args.N),
      static_cast<long long>(args.K), macs / 1e9, fast ? "fast" : "slow",
      support::printable(args.profile).c_str(), threads);
  std::printf("reference  %9.3f s  %8.3f GMAC/s  (exact, mmaemu accumulate)\n", r.ref_s,
              gmacs(r, r.ref_s));
  std::printf("sgemm      %9.3f s  %8.3f GMAC/s  (OpenBLAS cblas_sgemm, fp32)\n", r.blas_s,
              gmacs(r, r.blas_s));
  std::printf("peak       %s\n", peak_text(r).c_str());
  std::printf("ratio: %.2f\n", r.ref_s / r.blas_s);
  return args.json.empty() ? kOk : write_json(args.json, row_json(r, threads));
}

// The sweep: one operand pair per M (shared by the four rows of that M), rows printed as
// they finish.
int bench_sweep(const BenchArgs& args, unsigned threads, const harness::Shard& shard) {
  std::printf("bench gemm --sweep: N=%lld K=%lld, %u threads; SGEMM (OpenBLAS) timed in the "
              "same run; best of %d\n",
              static_cast<long long>(args.N), static_cast<long long>(args.K), threads, args.repeat);
  std::printf("%-8s %-5s %6s %11s %9s %12s %7s %9s %9s\n", "profile", "accum", "M", "reference s",
              "GMAC/s", "sgemm GMAC/s", "ratio", "peak MB", "limit MB");
  std::fflush(stdout);
  nlohmann::json rows = nlohmann::json::array(), benchmarks = nlohmann::json::array();
  nlohmann::json not_in_shard = nlohmann::json::array();
  std::mt19937_64 rng(args.seed);
  const Tensor b = make_operand(args.N, args.K, rng);
  std::size_t group = 0; // (M, profile): its fast and slow rows stay together in one shard
  for (const std::int64_t M : kSweepM) {
    const Tensor a = make_operand(M, args.K, rng); // every M's, so that each shard's are equal
    for (const char* profile : kSweepProfiles) {
      if (shard.count > 1 && group++ % shard.count != shard.index - 1) {
        const std::string at = std::string(profile) + "_";
        for (const char* mode : {"fast", "slow"}) {
          const std::string key = at + mode + "_M" + std::to_string(M);
          for (const char* what : {"ratio_", "gmacs_", "peak_memory_"})
            not_in_shard.push_back(what + key);
        }
        not_in_shard.push_back("slow_over_fast_" + at + "M" + std::to_string(M));
        continue;
      }
      double fast_s = 0;
      for (const bool fast : {true, false}) {
        Row r;
        try {
          r = run_row(a, b, profile, fast, threads, args.repeat);
        } catch (const MmaemuError& e) {
          error_line(std::string(e.class_name()) + ": " + e.what());
          return kUsage;
        }
        char peak[32] = "?";
        if (r.peak_mb)
          std::snprintf(peak, sizeof peak, "%.0f", *r.peak_mb);
        std::printf("%-8s %-5s %6lld %11.4f %9.3f %12.3f %7.2f %9s %9.0f\n", profile,
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
  if (args.json.empty())
    return kOk;
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
  if (args.M <= 0 || args.N <= 0 || args.K <= 0 || args.repeat < 1) {
    error_line("bench gemm: M, N, K and --repeat must be positive");
    return kUsage;
  }
  if (args.threads > 4096) {
    error_line("--threads: " + std::to_string(args.threads) + " is over 4096");
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
    if (!args.json.empty())
      support::check_output_path(args.json); // before the run
  } catch (const std::exception& e) {
    error_line(std::string("bench gemm: ") + e.what());
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
    return args.sweep ? bench_sweep(args, threads, shard) : bench_gemm(args, threads);
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
  g->add_flag("--fast", args->fast, "fast accumulation (the default)");
  g->add_flag("--slow", args->slow, "slow accumulation (128-element chunks)");
  g->add_option("--threads", args->threads, "threads for both (0: all cores)")
      ->capture_default_str();
  g->add_option("--profile", args->profile, "profile")->capture_default_str();
  g->add_option("--repeat", args->repeat, "runs; the best is reported")->capture_default_str();
  g->add_flag("--sweep", args->sweep,
              "the performance table: M in {1, 16, 128, 2048} (with --N and --K), fast and "
              "slow, profiles hopper and ada");
  g->add_option("--json", args->json, "write the figures as JSON");
  g->add_option("--shard", args->shard,
                "with --sweep: k/N, the (M, profile) groups k-1, k-1+N, ... of the table (T6's "
                "shards)");
  g->callback([args, &exit_code] { exit_code = run_bench_gemm(*args); });
  add_bench_kernels(*bench, exit_code);
}

} // namespace mmaemu::cli
