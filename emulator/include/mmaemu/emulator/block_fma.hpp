// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// One tensor-core block: d = block(a[0..n), b[0..n), c), n <= nfma, as block-fma.md states.
// An exact integer core: no floating-point rounding anywhere in the sum.

#include <array>
#include <cstdint>

#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::model {

// An FP8 operand as the block sees it: |x| = mant * 2^(ea - frac_bits) with
// ea = max(floor(log2 |x|), emin): a subnormal keeps ea = emin and mant < 2^frac_bits.
// A zero has mant 0 and ea = kZeroExp, so that it never sets the block exponent.
struct Fp8Operand {
  std::uint8_t mant;
  std::int8_t ea;
  std::uint8_t neg;
  std::uint8_t cls; // ValueClass
};

inline constexpr int kZeroExp = -100;

// The 256-entry operand table of an FP8 format (e4m3 or e5m2).
const std::array<Fp8Operand, 256>& fp8_operand_table(Format f);

// Rounds the exact block value (-1)^neg * mag * 2^lsb_exp to the preset's block result:
// frac_out fraction bits with the preset's rounding, binary32 subnormals as multiples of
// 2^-149 (never finer than frac_out bits), +-Inf beyond the binary32 range. mag = 0: +0.
std::uint32_t round_block_result(bool neg, unsigned __int128 mag, int lsb_exp, const Preset& p);

// One block over finite codes, n <= p.nfma (zero pairs are dropped, so padding is free).
// c_bits is a finite binary32 value (+-0 counts as no term).
std::uint32_t block_fma(const std::uint8_t* a, Format fa, const std::uint8_t* b, Format fb, int n,
                        std::uint32_t c_bits, const Preset& p);

// What a chain computes once for all its blocks: the operand tables and the alignment
// constants of a format pair under a preset.
struct BlockContext {
  const Fp8Operand* ta;
  const Fp8Operand* tb;
  const Preset* preset;
  int s0; // frac - frac_bits(a) - frac_bits(b): a product's shift when its exponent is E
  int G;  // max(s0, 0): products are pre-shifted left by G so every shift is a right shift

  BlockContext(Format fa, Format fb, const Preset& p);
};

// block_fma with a prepared context (the chain's inner loop).
std::uint32_t block_fma(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b,
                        int n, std::uint32_t c_bits);

// The same for codes that may be NaN or Inf: such a code counts as a zero in the block, and
// `nonfinite` is set to true (never cleared) so that the caller can apply the chain's
// non-finite rule. This lets a chain find them in its block pass instead of a scan of its own.
std::uint32_t block_fma(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b,
                        int n, std::uint32_t c_bits, bool& nonfinite);

// The compiled variants of block_fma, which must agree bit for bit: `baseline` is plain
// x86-64 (32-bit terms when frac <= 20, else 64-bit), `wide` always uses 64-bit terms, `avx2`
// vectorises the 32-bit terms (falls back to `wide` when frac > 20). `automatic` (what the
// other overloads use) picks avx2 when the CPU has it, and so does avx2 on a CPU without it
// (block_kernel_supported tells). Tests run each one.
enum class BlockKernel : std::uint8_t { automatic, baseline, wide, avx2 };
bool block_kernel_supported(BlockKernel k);
std::uint32_t block_fma(BlockKernel k, const BlockContext& ctx, const std::uint8_t* a,
                        const std::uint8_t* b, int n, std::uint32_t c_bits, bool& nonfinite);

} // namespace mmaemu::model
