// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Decoding a code of any mmaemu format into its exact value.

#include <cstdint>

#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/format.hpp"

namespace mmaemu {

// The exact value of `code` (its low spec(f).width bits) in format f. A finite value keeps
// the integer significand of the code (hidden bit included for normals), so a subnormal has
// exp = emin - frac_bits.
Exact decode_bits(Format f, std::uint32_t code);

// The same value as a binary64 (exact for every format here). NaN -> quiet NaN.
double decode_to_double(Format f, std::uint32_t code);

// The binary32 bit pattern of a double that holds a binary32 value exactly; used by tests
// and importers. Returns false if the value is not exactly a binary32.
bool binary32_bits_of(double v, std::uint32_t& bits);

} // namespace mmaemu
