// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// IEEE binary32 addition and multiplication on bit patterns, round to nearest even, with
// subnormals (no flush to zero) and canonical NaN results: the fp32 operations of the plans
// and the epilogue, independent of the host's floating-point mode.

#include <cstdint>

#include "mmaemu/emulator/specialize.hpp"

namespace mmaemu {

inline constexpr std::uint32_t kF32CanonicalNaN = specialize::kF32CanonicalNaN;

std::uint32_t f32_add_bits(std::uint32_t a, std::uint32_t b);
std::uint32_t f32_mul_bits(std::uint32_t a, std::uint32_t b);

} // namespace mmaemu
