// SPDX-License-Identifier: BSD-2-Clause
// Soft binary32 add and multiply against the host FPU (an independent IEEE implementation:
// SSE, round to nearest even, no flush to zero), compared as bit patterns.

#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cstring>
#include <random>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/f32_arith.hpp"

namespace {

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float val(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The FPU's answer, with any NaN mapped to the canonical NaN (mmaemu's NaN policy).
std::uint32_t fpu(std::uint32_t a, std::uint32_t b, bool mul) {
  volatile float x = val(a);
  volatile float y = val(b);
  const float r = mul ? x * y : x + y;
  const std::uint32_t rb = bits(r);
  if (((rb >> 23) & 0xFFu) == 0xFFu && (rb & 0x7FFFFFu))
    return mmaemu::kF32CanonicalNaN;
  return rb;
}

// Random bit patterns weighted towards the interesting places: subnormals, near overflow,
// close exponents (cancellation), zeros, infinities and NaNs.
std::uint32_t pattern(std::mt19937& rng, std::uint32_t other) {
  const std::uint32_t r = rng();
  switch (rng() % 8) {
  case 0:
    return r & 0x807FFFFFu; // subnormal / zero
  case 1:
    return (r & 0x807FFFFFu) | (0xFEu << 23); // near the top
  case 2:
    return (other & 0x7F800000u) | (r & 0x807FFFFFu); // same exponent
  case 3:
    return (other & 0xFFFFFF00u) ^ 0x80000000u ^ (r & 0xFFu); // near -other
  case 4:
    return (r & 0x80000000u) | ((r % 5 == 0) ? 0x7F800000u : (r & 0x7FFFFFFFu));
  default:
    return r;
  }
}

TEST(F32Arith, AddMatchesHostFpuOnWeightedRandomPatterns) {
  ASSERT_EQ(_mm_getcsr() & 0x8040u, 0u) << "FTZ/DAZ must be off for this oracle";
  std::mt19937 rng(20261129);
  for (int i = 0; i < 400000; ++i) {
    const std::uint32_t a = rng();
    const std::uint32_t b = pattern(rng, a);
    const std::uint32_t got = mmaemu::f32_add_bits(a, b);
    ASSERT_EQ(mmaemu::compare_bits(fpu(a, b, false), got, mmaemu::Format::fp32),
              mmaemu::Mismatch::none)
        << std::hex << "a=" << a << " b=" << b << " got=" << got;
  }
}

TEST(F32Arith, MulMatchesHostFpuOnWeightedRandomPatterns) {
  std::mt19937 rng(11292026);
  for (int i = 0; i < 400000; ++i) {
    const std::uint32_t a = rng();
    const std::uint32_t b = pattern(rng, a);
    const std::uint32_t got = mmaemu::f32_mul_bits(a, b);
    ASSERT_EQ(mmaemu::compare_bits(fpu(a, b, true), got, mmaemu::Format::fp32),
              mmaemu::Mismatch::none)
        << std::hex << "a=" << a << " b=" << b << " got=" << got;
  }
}

TEST(F32Arith, SignedZeroRules) {
  EXPECT_EQ(mmaemu::f32_add_bits(0x80000000u, 0x80000000u), 0x80000000u); // -0 + -0 = -0
  EXPECT_EQ(mmaemu::f32_add_bits(0x80000000u, 0x00000000u), 0x00000000u); // -0 + +0 = +0
  EXPECT_EQ(mmaemu::f32_add_bits(0x3f800000u, 0xbf800000u), 0x00000000u); // 1 - 1 = +0
  EXPECT_EQ(mmaemu::f32_mul_bits(0x80000000u, 0x3f800000u), 0x80000000u); // -0 * 1 = -0
}

TEST(F32Arith, HandDerivedTiesAndSpecials) {
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even -> 1.
  EXPECT_EQ(mmaemu::f32_add_bits(0x3f800000u, 0x33800000u), 0x3f800000u);
  // (1 + 2^-23) + 2^-24 ties to the even 1 + 2^-22.
  EXPECT_EQ(mmaemu::f32_add_bits(0x3f800001u, 0x33800000u), 0x3f800002u);
  // 1 + 2^-24 * (1 + 2^-23): just above the tie, rounds up.
  EXPECT_EQ(mmaemu::f32_add_bits(0x3f800000u, 0x33800001u), 0x3f800001u);
  // 2^100 - 2^-100: the small term lies beyond the window and is kept as a sticky unit; the
  // exact result is just below 2^100 and rounds back to it.
  EXPECT_EQ(mmaemu::f32_add_bits(0x71800000u, 0x8d800000u), 0x71800000u);
  EXPECT_EQ(mmaemu::f32_add_bits(0x7f800000u, 0xff800000u), mmaemu::kF32CanonicalNaN);
  EXPECT_EQ(mmaemu::f32_mul_bits(0x7f800000u, 0x00000000u), mmaemu::kF32CanonicalNaN);
  EXPECT_EQ(mmaemu::f32_mul_bits(0x7f7fffffu, 0x40000000u), 0x7f800000u); // overflow
  EXPECT_EQ(mmaemu::f32_mul_bits(0x00000001u, 0x3f000000u), 0x00000000u); // 2^-150 ties to 0
  EXPECT_EQ(mmaemu::f32_mul_bits(0x00000003u, 0x3f000000u), 0x00000002u); // 1.5 -> 2 (even)
}

} // namespace
