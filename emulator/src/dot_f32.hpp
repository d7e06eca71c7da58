// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Internal to model::dot: the chain of one output with AVX2 and FMA, every term an exact
// binary32 value truncated by a round-toward-zero add (the arithmetic of chain_gemm_f32.cpp,
// along K instead of across columns).

#include <cstddef>
#include <cstdint>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::model::detail {

// Whether chain_f32 may compute chains of this preset and format pair on this CPU: the preset
// rounds toward zero, has no late c, its block sums stay below 2^24 units, frac <= 21 and
// frac - 149 <= min_exp <= 100; the CPU has AVX2 and FMA and honours the MXCSR rounding mode.
bool chain_f32_applies(const Preset& p, FormatPair fmt);

// The chain over K codes from the finite c_bits, as model::dot computes it, into out. Returns
// false, with out unset, when some code is NaN or Inf (the caller then applies the non-finite
// rule). A block that the binary32 arithmetic cannot represent (a sum that is a binary32
// subnormal, a block exponent above 100, a block with no nonzero product) is computed by
// block_fma itself. Only where chain_f32_applies.
bool chain_f32(const std::uint8_t* a, const std::uint8_t* b, std::size_t K, std::uint32_t c_bits,
               const Preset& p, FormatPair fmt, std::uint32_t& out);

// Whether this CPU honours the SSE rounding mode set in MXCSR: (1 + 3 * 2^-25) rounds to 1
// toward zero and to 1 + 2^-23 to nearest. An emulator that ignores the mode (valgrind does)
// would make the binary32 arithmetic wrong, so it is then not used. Needs AVX2 and FMA.
bool cpu_rounds_toward_zero();

// Two chains of length K at once (a[i], b[i], c_bits[i] -> out[i]), faster than one after the
// other; ok[i] is false where chain i must be computed by the caller (a NaN or Inf code or c,
// an overflow), out[i] then unset. Only where chain_f32_applies.
void chain2_f32(const std::uint8_t* const* a, const std::uint8_t* const* b, std::size_t K,
                const std::uint32_t* c_bits, const Preset& p, FormatPair fmt, std::uint32_t* out,
                bool* ok);

// Makes model::dot use chain_f32 (true, the default where it applies) or only block_fma
// (false). Process-wide: for tests and benchmarks only. Returns the previous setting.
bool use_chain_f32(bool on);

} // namespace mmaemu::model::detail
