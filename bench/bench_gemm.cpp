// SPDX-License-Identifier: BSD-2-Clause
// model::chain_gemm (fast accumulation: one chain over K per output) in GMAC/s, against
// OpenBLAS cblas_sgemm on the same operands decoded to fp32, in the same process and with the
// same thread count. Shapes include the Evo 2 1B projection (M 2048, N 5760, K 1920).
//
//   mmaemu_bench_gemm                                  # everything (a few minutes)
//   mmaemu_bench_gemm --benchmark_filter=Evo2          # the figures only
//
// BM_Evo2Slowdown times both GEMMs itself and reports chain_GMAC/s, sgemm_GMAC/s and
// slowdown = sgemm rate / chain rate. Times are wall-clock (the code is multi-threaded).

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "../emulator/src/chain_gemm_internal.hpp"
#include "gemm_timing.hpp"
#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace {

using mmaemu::bench::GemmInputs;

const GemmInputs& inputs(std::size_t M, std::size_t N, std::size_t K) {
  static std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::unique_ptr<GemmInputs>>
      cache;
  auto& slot = cache[{M, N, K}];
  if (!slot)
    slot = std::make_unique<GemmInputs>(mmaemu::bench::make_gemm_inputs(M, N, K));
  return *slot;
}

void run_chain(const GemmInputs& in, const mmaemu::Preset& p, std::vector<std::uint32_t>& out,
               unsigned threads) {
  mmaemu::model::chain_gemm(in.operands(), 0, in.K, p, out.data(), in.N, threads);
}

void run_sgemm(const GemmInputs& in, std::vector<float>& out, unsigned threads) {
  openblas_set_num_threads(static_cast<int>(threads));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(in.M),
              static_cast<int>(in.N), static_cast<int>(in.K), 1.0f, in.fa.data(),
              static_cast<int>(in.K), in.fb.data(), static_cast<int>(in.K), 0.0f, out.data(),
              static_cast<int>(in.N));
}

void set_rate(benchmark::State& state, const GemmInputs& in) {
  state.counters["GMAC/s"] = benchmark::Counter(
      static_cast<double>(in.M) * static_cast<double>(in.N) * static_cast<double>(in.K) / 1e9,
      benchmark::Counter::kIsIterationInvariantRate);
}

// Args: M, N, K, threads.
void BM_ChainGemm(benchmark::State& state, const char* preset,
                  mmaemu::model::detail::ChainKernel kernel) {
  const GemmInputs& in = inputs(state.range(0), state.range(1), state.range(2));
  const auto threads = static_cast<unsigned>(state.range(3));
  if (!mmaemu::model::detail::force_chain_kernel(kernel)) {
    state.SkipWithError("this CPU cannot run the kernel");
    return;
  }
  const mmaemu::Preset& p = mmaemu::get_preset_quiet(preset);
  std::vector<std::uint32_t> out(in.M * in.N);
  for (auto _ : state) {
    run_chain(in, p, out, threads);
    benchmark::DoNotOptimize(out.data());
  }
  mmaemu::model::detail::force_chain_kernel(mmaemu::model::detail::ChainKernel::automatic);
  set_rate(state, in);
  state.SetLabel(mmaemu::model::detail::chain_kernel_name(kernel));
}

void BM_Sgemm(benchmark::State& state) {
  const GemmInputs& in = inputs(state.range(0), state.range(1), state.range(2));
  const auto threads = static_cast<unsigned>(state.range(3));
  std::vector<float> out(in.M * in.N);
  for (auto _ : state) {
    run_sgemm(in, out, threads);
    benchmark::DoNotOptimize(out.data());
  }
  set_rate(state, in);
  state.SetLabel(openblas_get_corename());
}

// The figure: hopper fast accumulation on the Evo 2 1B projection, and the slowdown
// against SGEMM measured right before it (best of 3 SGEMM runs). Args: threads.
void BM_Evo2Slowdown(benchmark::State& state) {
  const GemmInputs& in = inputs(2048, 5760, 1920);
  const auto threads = static_cast<unsigned>(state.range(0));
  std::vector<float> fout(in.M * in.N);
  const double sgemm_s = mmaemu::bench::best_seconds([&] { run_sgemm(in, fout, threads); }, 3);
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("hopper");
  std::vector<std::uint32_t> out(in.M * in.N);
  double chain_s = 1e300;
  for (auto _ : state) {
    chain_s = std::min(
        chain_s, mmaemu::bench::best_seconds([&] { run_chain(in, p, out, threads); }, 1, false));
    state.SetIterationTime(chain_s);
  }
  state.counters["chain_s"] = chain_s;
  state.counters["chain_GMAC/s"] = mmaemu::bench::gmac_per_s(in.M, in.N, in.K, chain_s);
  state.counters["sgemm_GMAC/s"] = mmaemu::bench::gmac_per_s(in.M, in.N, in.K, sgemm_s);
  state.counters["slowdown"] = chain_s / sgemm_s;
}

using mmaemu::model::detail::ChainKernel;

void shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({256, 256, 256, threads});
    b->Args({512, 2048, 1024, threads});
  }
}

} // namespace

BENCHMARK_CAPTURE(BM_ChainGemm, hopper, "hopper", ChainKernel::automatic)
    ->Apply(shapes)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, ada, "ada", ChainKernel::automatic)
    ->Args({512, 2048, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// The kernels other CPUs and presets take (see chain_gemm_internal.hpp).
BENCHMARK_CAPTURE(BM_ChainGemm, hopper_lanes_avx512, "hopper", ChainKernel::lanes_avx512)
    ->Args({256, 1024, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, hopper_lanes_avx2, "hopper", ChainKernel::lanes_avx2)
    ->Args({256, 1024, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// The two fast kernels side by side on the sweep's shapes (N 5760, K 1920, 2 threads): on an
// AVX-512 host the automatic choice is avx512_i16 (avx512_i16_vnni with VNNI), and f32_avx2
// runs there too.
BENCHMARK_CAPTURE(BM_ChainGemm, sweep_i16, "hopper", ChainKernel::avx512_i16)
    ->ArgsProduct({{1, 16, 64, 256, 2048}, {5760}, {1920}, {2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, sweep_i16_vnni, "hopper", ChainKernel::avx512_i16_vnni)
    ->ArgsProduct({{1, 16, 64, 256, 2048}, {5760}, {1920}, {2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, sweep_f32, "hopper", ChainKernel::f32_avx2)
    ->ArgsProduct({{1, 16, 64, 256, 2048}, {5760}, {1920}, {2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sgemm)
    ->Name("BM_Sgemm/sweep")
    ->ArgsProduct({{1, 16, 64, 256, 2048}, {5760}, {1920}, {2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, hopper_lanes_base, "hopper", ChainKernel::lanes_base)
    ->Args({64, 256, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, hopper_exact, "hopper", ChainKernel::exact)
    ->Args({64, 256, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, b200_mma_sync, "b200_mma_sync", ChainKernel::automatic)
    ->Args({256, 1024, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, b200_mma_sync_lanes_avx2, "b200_mma_sync", ChainKernel::lanes_avx2)
    ->Args({256, 1024, 1024, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sgemm)->Apply(shapes)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ChainGemm, Evo2_hopper, "hopper", ChainKernel::automatic)
    ->Args({2048, 5760, 1920, 1})
    ->Args({2048, 5760, 1920, 2})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_Sgemm)
    ->Name("BM_Sgemm/Evo2")
    ->Args({2048, 5760, 1920, 1})
    ->Args({2048, 5760, 1920, 2})
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_Evo2Slowdown)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
