// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The chain function of a backend (seed 000, "ChainFn"): for every output (m, n), the fast
// block-FMA chain of the preset over k in [k0, k1) from +0. Everything around it (split-K
// plans, slow-accumulation chunks, non-finite inputs, the epilogue) is shared plan code.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"
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

// The chains of a whole GEMM plan (split-K parts, slow-accumulation chunks, the split
// reduction) in one pass over the operands. parts[s] lists part s's chunks, K ranges in order;
// each chunk is a chain from +0. Part s of an output is
//   promote == nullptr (fast accumulation): its one chunk's result (a part has at most one);
//   otherwise (slow accumulation): +0, then acc = promote(acc, chunk result) chunk by chunk;
// and +0 when the part has no chunks. With reduce set, the output is
// reduce(its parts in part order, S, scheme) instead of its S parts. The caller builds the
// plan from plan_decisions, so the chunking, the promotion and the reduction stay swappable
// decisions.
struct ChainPlan {
  std::vector<std::vector<KRange>> parts;
  std::uint32_t (*promote)(std::uint32_t acc, std::uint32_t chunk) = nullptr;
  std::uint32_t (*reduce)(const std::uint32_t* partials, int S,
                          const std::string& scheme) = nullptr;
  std::string scheme; // given to reduce
};

// outs[s][m * ldo + n] = part s of output (m, n), for s < plan.parts.size(); with reduce set,
// outs[0][m * ldo + n] = the reduced output (outs has one entry). The codes must be finite (as
// chain_gemm). ValueError for a chunk outside [0, K), for more than one chunk in a part when
// promote is null, or for reduce with no parts.
void chain_gemm_plan(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                     std::uint32_t* const* outs, std::size_t ldo, unsigned threads = 0);

// The same through chain_gemm_simple's model::dot, output by output: what chain_gemm_plan is
// tested against.
void chain_gemm_plan_simple(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                            std::uint32_t* const* outs, std::size_t ldo);

} // namespace mmaemu::model
