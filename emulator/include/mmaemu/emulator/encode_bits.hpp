// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Rounding exact values into mmaemu formats: round to nearest, ties to even.

#include <cstdint>

#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/format.hpp"

namespace mmaemu {

// What a finite value beyond the largest finite value becomes.
enum class Overflow : std::uint8_t {
  saturate, // satfinite: +-max finite (and +-Inf inputs too); NaN stays NaN
  infinity, // +-Inf where the format has it; the canonical NaN for e4m3 (no Inf)
};

// Rounds (-1)^neg * (sig * 2^exp + a positive amount below 2^exp if `sticky`) to format f,
// to nearest with ties to even, subnormals included. Zero magnitude gives a zero of the sign.
std::uint32_t round_exact_bits(Format f, bool neg, std::uint64_t sig, int exp, bool sticky,
                               Overflow ov);

// Encodes an exact value (any class). NaN -> the format's canonical NaN.
std::uint32_t encode_exact_bits(Format f, const Exact& x, Overflow ov);

// Encodes a binary64 value / a binary32 bit pattern into format f.
std::uint32_t encode_binary64_bits(Format f, double v, Overflow ov);
std::uint32_t encode_binary32_bits(Format f, std::uint32_t fp32_bits, Overflow ov);

} // namespace mmaemu
