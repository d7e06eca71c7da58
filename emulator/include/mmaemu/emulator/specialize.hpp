// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The instruction constants, in one place, in the spirit of SoftFloat's specialize.h: the bit
// patterns the modelled GPUs write for special results, the defaults of the block-FMA
// parameters and their limits. The CPU code includes this header; the CUDA sources cannot
// (NVRTC compiles them without the host's headers), so kernels/cuda/mmaemu_chain.cuh writes its
// own copies and kernels/tests/test_chain_constants.cpp checks them against these, value by
// value.

#include <cstdint>

namespace mmaemu::specialize {

// NaN results. Every NaN a tensor core or the fp32 epilogue writes is the canonical one,
// whatever the payloads of the NaN operands (CUDA's 0x7fffffff; fp16/bf16 outputs 0x7fff).
inline constexpr std::uint32_t kF32CanonicalNaN = 0x7FFFFFFFu;
inline constexpr std::uint32_t kF16CanonicalNaN = 0x7FFFu; // fp16 and bf16 outputs
inline constexpr std::uint32_t kTf32CanonicalNaN = 0x3FFFFu;
inline constexpr std::uint32_t kFp8CanonicalNaN = 0x7Fu; // e4m3 (S.1111.111) and e5m2

// binary32 fields.
inline constexpr std::uint32_t kF32SignBit = 0x80000000u;
inline constexpr std::uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr std::uint32_t kF32PosInf = 0x7F800000u;
inline constexpr std::uint32_t kF32NegInf = 0xFF800000u;

// The FP8 block-FMA of Ada and Hopper (block-fma.md): terms and block results keep 13
// fraction bits below the block's largest exponent (the ada and hopper presets' frac and
// frac_out; a Preset built without them gets these).
inline constexpr int kFp8Frac = 13;
inline constexpr int kFp8FracOut = 13;

// Limits of a preset's parameters: the integer core sums terms exactly up to 48 fraction bits,
// and a block holds at most 256 products.
inline constexpr int kMaxFrac = 48;
inline constexpr int kMaxNfma = 256;

// The binary32 fast kernels (chain_gemm_f32.cpp, dot_f32.cpp) represent a block's terms as
// exact binary32 values only while the block's exponent E stays at or below this bound; above
// it only c's term is nonzero (it is exact), and model::dot decides the output.
inline constexpr int kF32KernelMaxCExp = 100;

} // namespace mmaemu::specialize
