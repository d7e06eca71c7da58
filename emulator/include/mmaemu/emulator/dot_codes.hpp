// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The chain of the 16-bit and tf32 tensor-core instructions (HMMA class): model::dot for
// fp16, bf16 and tf32 operands, with an fp32 or (fp16 presets) an fp16 accumulator.
// block-fma.md, "The same block for fp16, bf16 and tf32 inputs", and docs/semantics.md.
//
// Codes are passed as 32-bit words holding the format's code in the low bits: an fp16 or bf16
// code (16 bits) or a tf32 code (19 bits: tf32_code_of_container of its binary32 container).
// The accumulator format `acc` is Format::fp32 (c and the result are binary32 bits) or
// Format::fp16 (fp16 codes; only for a preset whose half_out is not none).

#include <cstddef>
#include <cstdint>
#include <span>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::model {

// One block, n <= p.nfma pairs of finite codes (a NaN or Inf code counts as a zero and sets
// `nonfinite`, never clears it), from the finite accumulator value c in format acc:
//  1. pairs with a zero factor are dropped; each other pair is the exact product
//     sa*sb * 2^(ea+eb) with ea = max(floor(log2|a|), emin of a's format) (not renormalised);
//  2. c != 0 is one more term (its binary32 exponent, -126 for subnormals), unless p.late_c:
//     then c is added exactly to the truncated product sum before the rounding of step 4;
//  3. E = max(the terms' exponents, p.min_exp); each term is truncated toward zero to a
//     multiple of 2^(E - p.frac) and the signed terms are summed exactly;
//  4. a zero sum is +0; otherwise acc fp32: the sum rounded to p.frac_out fraction bits by
//     p.rounding (binary32 subnormals, Inf beyond the range); acc fp16: rounded to nearest
//     even into fp16 as p.half_out says (overflow to Inf).
// Throws ValueError when the preset does not take the formats or acc is not allowed.
std::uint32_t block_fma_codes(const std::uint32_t* a, const std::uint32_t* b, int n,
                              std::uint32_t c, const Preset& p, FormatPair fmt, Format acc,
                              bool& nonfinite);

// The chain over K = a.size() codes from c (in format acc): blocks of p.nfma pairs, each
// block's result (in format acc) the next block's c; K need not be a multiple of nfma; K = 0
// returns c. Non-finite rule over the whole chain, as model::dot: a NaN operand or c,
// Inf * 0, or +Inf meeting -Inf give acc's canonical NaN (fp32 0x7FFFFFFF, fp16 0x7FFF);
// otherwise an Inf operand or c gives an Inf of its sign; a block that overflows gives Inf
// and ends the chain. Throws ValueError if a and b differ in length, the formats are not the
// preset's (fp16, bf16 or tf32 for both), or acc is neither fp32 nor (when the preset has an
// fp16 accumulator) fp16.
std::uint32_t dot_codes(std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                        std::uint32_t c, const Preset& p, FormatPair fmt,
                        Format acc = Format::fp32);

// `rows` chains of length K: a and b are [rows][K] row-major, c is [rows] values in format
// acc or null (+0), out is [rows] values in format acc.
void dot_codes_rows(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                    std::size_t rows, std::size_t K, const Preset& p, FormatPair fmt, Format acc,
                    std::uint32_t* out);

// Throws ValueError (naming `who`) unless the preset takes fmt and acc is allowed for it.
void check_codes_call(const Preset& p, FormatPair fmt, Format acc, const char* who);

} // namespace mmaemu::model
