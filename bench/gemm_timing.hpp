// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Shared by the GEMM benchmarks: seeded FP8 operands with their exact fp32 decodings (the
// input of an SGEMM baseline), and wall-clock timing of a callable in GMAC/s.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/decode_bits.hpp"

namespace mmaemu::bench {

// a is [M][K] and b is [N][K] (b = mat2 transposed), random finite codes of fmt; fa and fb
// hold the same values as binary32 (every FP8 value is one).
struct GemmInputs {
  std::size_t M = 0, N = 0, K = 0;
  model::FormatPair fmt;
  std::vector<std::uint8_t> a, b;
  std::vector<float> fa, fb;

  model::GemmOperands operands() const {
    model::GemmOperands op;
    op.a = a.data();
    op.lda = K;
    op.b = b.data();
    op.ldb = K;
    op.M = M;
    op.N = N;
    op.K = K;
    op.fmt = fmt;
    return op;
  }
};

inline GemmInputs make_gemm_inputs(std::size_t M, std::size_t N, std::size_t K,
                                   model::FormatPair fmt = {}, std::uint32_t seed = 1234) {
  GemmInputs in{M, N, K, fmt, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  auto fill = [&rng](Format f, std::vector<std::uint8_t>& codes, std::vector<float>& vals,
                     std::size_t n) {
    codes.resize(n);
    vals.resize(n);
    float table[256];
    for (int c = 0; c < 256; ++c)
      table[c] = static_cast<float>(decode_to_double(f, c));
    for (std::size_t i = 0; i < n; ++i) {
      std::uint8_t c;
      do {
        c = static_cast<std::uint8_t>(rng());
      } while (table[c] != table[c] || table[c] - table[c] != 0.0f); // finite codes only
      codes[i] = c;
      vals[i] = table[c];
    }
  };
  fill(fmt.a, in.a, in.fa, M * K);
  fill(fmt.b, in.b, in.fb, N * K);
  return in;
}

// The best of `reps` runs of f (after one warm-up run when warm_up), in seconds. The best,
// not the mean: on a shared machine the others measure the neighbours.
template <class F> double best_seconds(F&& f, int reps, bool warm_up = true) {
  if (warm_up)
    f();
  double best = 1e300;
  for (int i = 0; i < std::max(reps, 1); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

inline double gmac_per_s(std::size_t M, std::size_t N, std::size_t K, double seconds) {
  return static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) / seconds / 1e9;
}

} // namespace mmaemu::bench
