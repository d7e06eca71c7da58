// SPDX-License-Identifier: BSD-2-Clause
// model::dot over K = 32 and K = 4096 chains, in MAC/s (counter "MAC/s").
// A baseline in the same process: a plain fp32 dot over the decoded operands, so the
// figure can be read as a ratio against it.

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace {

constexpr std::size_t kRows = 64;

struct Operands {
  std::vector<std::uint8_t> a, b;
  std::vector<float> fa, fb;
};

Operands make(std::size_t K) {
  Operands o;
  std::mt19937 rng(1234);
  o.a.resize(kRows * K);
  o.b.resize(kRows * K);
  for (auto& v : o.a)
    v = static_cast<std::uint8_t>(rng() & 0xF7u); // finite E4M3 codes
  for (auto& v : o.b)
    v = static_cast<std::uint8_t>(rng() & 0xF7u);
  for (auto v : o.a)
    o.fa.push_back(static_cast<float>(mmaemu::decode_to_double(mmaemu::Format::e4m3, v)));
  for (auto v : o.b)
    o.fb.push_back(static_cast<float>(mmaemu::decode_to_double(mmaemu::Format::e4m3, v)));
  return o;
}

void BM_Dot(benchmark::State& state, const char* preset_name) {
  const auto K = static_cast<std::size_t>(state.range(0));
  const Operands o = make(K);
  const mmaemu::Preset& p = mmaemu::get_preset_quiet(preset_name);
  std::vector<std::uint32_t> out(kRows);
  for (auto _ : state) {
    mmaemu::model::dot_rows(o.a.data(), o.b.data(), nullptr, kRows, K, p, {}, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(kRows * K),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Fp32DotBaseline(benchmark::State& state) {
  const auto K = static_cast<std::size_t>(state.range(0));
  const Operands o = make(K);
  std::vector<float> out(kRows);
  for (auto _ : state) {
    for (std::size_t r = 0; r < kRows; ++r) {
      float s = 0.0f;
      for (std::size_t k = 0; k < K; ++k)
        s += o.fa[r * K + k] * o.fb[r * K + k];
      out[r] = s;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(kRows * K),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

BENCHMARK_CAPTURE(BM_Dot, hopper, "hopper")->Arg(32)->Arg(4096);
BENCHMARK_CAPTURE(BM_Dot, ada, "ada")->Arg(32)->Arg(4096);
BENCHMARK_CAPTURE(BM_Dot, b200_mma_sync, "b200_mma_sync")->Arg(32)->Arg(4096);
BENCHMARK(BM_Fp32DotBaseline)->Arg(32)->Arg(4096);

BENCHMARK_MAIN();
