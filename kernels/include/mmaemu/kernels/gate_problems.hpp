// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The inputs of the kernel gates and tests (seed 000, "Gates"): seeded random codes and the
// adversarial patterns that break a wrong block-FMA chain. Inputs only: expected bits always
// come from the reference emulator.

#include <cstdint>
#include <string>
#include <vector>

namespace mmaemu::kernels {

struct GateProblem {
  std::string what;
  int M = 0, N = 0, K = 0;
  std::vector<std::uint8_t> a; // [M][K] E4M3 codes
  std::vector<std::uint8_t> b; // [N][K]
};

// [M][K] x [N][K] finite E4M3 codes drawn from a seeded generator.
GateProblem random_problem(std::uint32_t seed, int M, int N, int K, std::string what = "random");

// One problem per adversarial pattern: every finite code, subnormals and zeros of both signs,
// +-448, cancellation inside blocks, one exponent per 16-block, -0 everywhere.
std::vector<GateProblem> adversarial_problems(std::uint32_t seed, int M, int N, int K);

// All adversarial patterns in one problem: row r of A and column n of B take pattern
// (r + n) % 6 row by row, so that every output meets several patterns.
GateProblem mixed_adversarial_problem(std::uint32_t seed, int M, int N, int K);

// The smoke gate's cases: 16x8x64 random and 64x64x256 mixed adversarial, fixed seeds.
std::vector<GateProblem> smoke_problems();

// The window gate's cases (cuda:v9): alignment exponents -12..16 with the bf16 exponent pass's
// extremes (one largest term; 15 of them and the rest one binade lower), fine terms whose
// truncation a wrong E changes, blocks without a pair (docs/backends.md, "v9").
std::vector<GateProblem> window_problems();

// The design_a gate's cases (cuda:tc3): the largest term, its cancellation and a term at
// 2^(E - 13) and 2^(E - 14), in both halves of a block (docs/backends.md, "tc3").
std::vector<GateProblem> design_a_problems();

} // namespace mmaemu::kernels
