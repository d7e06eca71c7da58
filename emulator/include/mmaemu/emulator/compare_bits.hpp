// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The one bit comparator: every bit claim in mmaemu compares integer bit patterns here.
// +0 differs from -0; NaN payloads must match unless the policy says "mask".

#include <cstdint>
#include <string>

#include "mmaemu/emulator/format.hpp"

namespace mmaemu {

enum class NanPolicy {
  bits, // NaNs must have the same bits
  mask, // any NaN matches any NaN (only against references that do not canonicalise NaN)
};

// Why two codes differ, or `none`.
enum class Mismatch { none, zero_sign, nan_payload, value };

const char* mismatch_name(Mismatch m);

// Compares the low spec(f).width bits of two codes.
Mismatch compare_bits(std::uint32_t expected, std::uint32_t actual, Format f,
                      NanPolicy nan = NanPolicy::bits);

// A code in decomposed hex: "0x3f700000 (s=0 e=0x7e f=0x700000)".
std::string decompose_bits(std::uint32_t code, Format f);

} // namespace mmaemu
