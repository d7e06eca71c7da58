// SPDX-License-Identifier: BSD-2-Clause
// mmaemu bench gemm --M --N --K [--fast|--slow] [--threads T] [--profile P] [--repeat R]
// The exact CPU reference GEMM (accumulate, split 1) against OpenBLAS cblas_sgemm on the
// decoded operands, timed in the same run on the same cores; prints GMAC/s of both and
// `ratio: <reference seconds / SGEMM seconds>`.

#ifdef MMAEMU_WITH_OPENBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "commands.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
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
  bool fast = false, slow = false;
  unsigned threads = 0;
  std::string profile = "hopper";
  int repeat = 1;
  std::uint64_t seed = 40;
  std::string json;
};

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

#ifdef MMAEMU_WITH_OPENBLAS
int bench_gemm(const BenchArgs& args);
#endif

int run_bench_gemm(const BenchArgs& args) {
  if (args.fast && args.slow) {
    error_line("bench gemm: give --fast or --slow, not both");
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
    check_gemm_size(args.M, args.N, args.K); // before the operands are allocated
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
  try {
    return bench_gemm(args);
  } catch (const std::bad_alloc&) {
    error_line("bench gemm: out of memory for M=" + std::to_string(args.M) +
               " N=" + std::to_string(args.N) + " K=" + std::to_string(args.K));
    return kUsage;
  }
#endif
}

#ifdef MMAEMU_WITH_OPENBLAS
int bench_gemm(const BenchArgs& args) {
  const bool fast = !args.slow;
  const unsigned threads =
      args.threads ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  // Operands: finite E4M3 codes, a rough Gaussian shape (small codes more often).
  std::mt19937_64 rng(args.seed);
  const auto& table = model::fp8_operand_table(Format::e4m3);
  auto make = [&](std::int64_t rows) {
    std::vector<std::uint32_t> bits(static_cast<std::size_t>(rows * args.K));
    std::normal_distribution<double> g(0.0, 40.0);
    for (auto& b : bits) {
      std::uint8_t c;
      do
        c = static_cast<std::uint8_t>(static_cast<int>(g(rng)) & 0xFF);
      while (table[c].cls > 1);
      b = c;
    }
    return Tensor::from_bits(Format::e4m3, {rows, args.K}, bits);
  };
  const Tensor a = make(args.M);
  const Tensor b = make(args.N);

  AccumulateOptions opt;
  opt.profile = args.profile;
  opt.splitk = SplitKRequest::explicit_split(1);
  opt.threads = threads;
  Tensor acc;
  double ref_s = 0;
  try {
    ref_s = best_seconds(args.repeat, [&] { acc = accumulate(a, b, fast, opt); });
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUsage;
  }

  std::vector<float> fa(static_cast<std::size_t>(args.M * args.K)),
      fb(static_cast<std::size_t>(args.N * args.K));
  for (std::size_t i = 0; i < fa.size(); ++i) {
    fa[i] = static_cast<float>(
        decode_to_double(Format::e4m3, a.bits_flat(static_cast<std::int64_t>(i))));
  }
  for (std::size_t i = 0; i < fb.size(); ++i) {
    fb[i] = static_cast<float>(
        decode_to_double(Format::e4m3, b.bits_flat(static_cast<std::int64_t>(i))));
  }
  std::vector<float> fc(static_cast<std::size_t>(args.M * args.N));
  openblas_set_num_threads(static_cast<int>(threads));
  const double blas_s = best_seconds(std::max(args.repeat, 3), [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(args.M),
                static_cast<int>(args.N), static_cast<int>(args.K), 1.0f, fa.data(),
                static_cast<int>(args.K), fb.data(), static_cast<int>(args.K), 0.0f, fc.data(),
                static_cast<int>(args.N));
  });
  const double macs = static_cast<double>(args.M) * args.N * args.K;
  std::printf(
      "shape      M=%lld N=%lld K=%lld (%.2f GMAC), %s accumulation, profile %s, %u threads\n",
      static_cast<long long>(args.M), static_cast<long long>(args.N),
      static_cast<long long>(args.K), macs / 1e9, fast ? "fast" : "slow",
      support::printable(args.profile).c_str(), threads);
  std::printf("reference  %9.3f s  %8.3f GMAC/s  (exact, mmaemu accumulate)\n", ref_s,
              macs / ref_s / 1e9);
  std::printf("sgemm      %9.3f s  %8.3f GMAC/s  (OpenBLAS cblas_sgemm, fp32)\n", blas_s,
              macs / blas_s / 1e9);
  std::printf("ratio: %.2f\n", ref_s / blas_s);
  if (!args.json.empty()) {
    nlohmann::json j = {{"M", args.M},
                        {"N", args.N},
                        {"K", args.K},
                        {"fast", fast},
                        {"threads", threads},
                        {"profile", args.profile},
                        {"reference_seconds", ref_s},
                        {"reference_gmacs", macs / ref_s / 1e9},
                        {"sgemm_seconds", blas_s},
                        {"sgemm_gmacs", macs / blas_s / 1e9},
                        {"ratio", ref_s / blas_s}};
    try {
      support::write_file_atomic(args.json, j.dump(2) + "\n");
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  return kOk;
}
#endif

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
  g->add_option("--json", args->json, "write the figures as JSON");
  g->callback([args, &exit_code] { exit_code = run_bench_gemm(*args); });
  add_bench_kernels(*bench, exit_code);
}

} // namespace mmaemu::cli
