// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The chain function of a backend (seed 000, "ChainFn"): for every output (m, n), the fast
// block-FMA chain of the preset over k in [k0, k1) from +0. Everything around it (split-K
// plans, slow-accumulation chunks, non-finite inputs, the epilogue) is shared plan code.

#include <cstddef>
#include <cstdint>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::model {

// Operands as rows of K codes: a is [M][lda >= K], b is [N][ldb >= K] (b = mat2 transposed).
struct GemmOperands {
  const std::uint8_t* a = nullptr;
  std::size_t lda = 0;
  const std::uint8_t* b = nullptr;
  std::size_t ldb = 0;
  std::size_t M = 0, N = 0, K = 0;
  FormatPair fmt;
};

// out[m * ldo + n] = chain over k in [k0, k1) of a[m][k] * b[n][k] from +0 (binary32 bits).
// The codes must be finite (the plan sanitises them). threads = 0: all hardware threads.
// ValueError when k0 > k1 or k1 > K.
void chain_gemm(const GemmOperands& op, std::size_t k0, std::size_t k1, const Preset& p,
                std::uint32_t* out, std::size_t ldo, unsigned threads = 0);

// The same, one chain at a time through model::dot: the slow, obviously correct path that
// chain_gemm is tested against.
void chain_gemm_simple(const GemmOperands& op, std::size_t k0, std::size_t k1, const Preset& p,
                       std::uint32_t* out, std::size_t ldo);

} // namespace mmaemu::model
