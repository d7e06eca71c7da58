// SPDX-License-Identifier: BSD-2-Clause
// The bit comparator: which mismatch two codes show, masking to the format width, and the
// decomposed-hex rendering used in failure messages.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/format.hpp"

namespace {

using mmaemu::compare_bits;
using mmaemu::decompose_bits;
using mmaemu::Format;
using mmaemu::Mismatch;
using mmaemu::NanPolicy;

TEST(CompareBits, EqualCodesMatchInEveryFormat) {
  EXPECT_EQ(compare_bits(0x3F800000u, 0x3F800000u, Format::fp32), Mismatch::none);
  EXPECT_EQ(compare_bits(0x38, 0x38, Format::e4m3), Mismatch::none);
  EXPECT_EQ(compare_bits(0x7C, 0x7C, Format::e5m2), Mismatch::none);
  EXPECT_EQ(compare_bits(0x3C00, 0x3C00, Format::fp16), Mismatch::none);
  EXPECT_EQ(compare_bits(0x3F80, 0x3F80, Format::bf16), Mismatch::none);
  // Identical NaN codes are equal under both policies.
  EXPECT_EQ(compare_bits(0x7FC00001u, 0x7FC00001u, Format::fp32, NanPolicy::bits), Mismatch::none);
  EXPECT_EQ(compare_bits(0x7F, 0x7F, Format::e4m3, NanPolicy::bits), Mismatch::none);
}

TEST(CompareBits, PositiveVsNegativeZeroIsZeroSign) {
  EXPECT_EQ(compare_bits(0x00000000u, 0x80000000u, Format::fp32), Mismatch::zero_sign);
  EXPECT_EQ(compare_bits(0x80000000u, 0x00000000u, Format::fp32), Mismatch::zero_sign);
  EXPECT_EQ(compare_bits(0x00, 0x80, Format::e4m3), Mismatch::zero_sign);
  EXPECT_EQ(compare_bits(0x00, 0x80, Format::e5m2), Mismatch::zero_sign);
  EXPECT_EQ(compare_bits(0x0000, 0x8000, Format::fp16), Mismatch::zero_sign);
  EXPECT_EQ(compare_bits(0x0000, 0x8000, Format::bf16), Mismatch::zero_sign);
  // The NaN policy does not excuse a zero sign.
  EXPECT_EQ(compare_bits(0x00, 0x80, Format::e4m3, NanPolicy::mask), Mismatch::zero_sign);
}

TEST(CompareBits, DifferentNanPayloadsAreNanPayloadUnderBitsAndNoneUnderMask) {
  EXPECT_EQ(compare_bits(0x7FC00000u, 0x7FC00001u, Format::fp32, NanPolicy::bits),
            Mismatch::nan_payload);
  EXPECT_EQ(compare_bits(0x7FC00000u, 0x7FC00001u, Format::fp32, NanPolicy::mask), Mismatch::none);
  EXPECT_EQ(compare_bits(0x7FFFFFFFu, 0xFFC00000u, Format::fp32, NanPolicy::bits),
            Mismatch::nan_payload);
  EXPECT_EQ(compare_bits(0x7D, 0x7F, Format::e5m2, NanPolicy::bits), Mismatch::nan_payload);
  EXPECT_EQ(compare_bits(0x7D, 0xFE, Format::e5m2, NanPolicy::mask), Mismatch::none);
  // e4m3fn: 0x7F and 0xFF are its only NaNs.
  EXPECT_EQ(compare_bits(0x7F, 0xFF, Format::e4m3, NanPolicy::bits), Mismatch::nan_payload);
  EXPECT_EQ(compare_bits(0x7F, 0xFF, Format::e4m3, NanPolicy::mask), Mismatch::none);
  EXPECT_EQ(compare_bits(0x7E00, 0x7FFF, Format::fp16, NanPolicy::bits), Mismatch::nan_payload);
  EXPECT_EQ(compare_bits(0x7FC0, 0x7FFF, Format::bf16, NanPolicy::mask), Mismatch::none);
}

TEST(CompareBits, DefaultPolicyIsBits) {
  EXPECT_EQ(compare_bits(0x7FC00000u, 0x7FC00001u, Format::fp32), Mismatch::nan_payload);
}

TEST(CompareBits, NanVersusNumberIsValueUnderBothPolicies) {
  for (NanPolicy p : {NanPolicy::bits, NanPolicy::mask}) {
    EXPECT_EQ(compare_bits(0x7FC00000u, 0x3F800000u, Format::fp32, p), Mismatch::value);
    EXPECT_EQ(compare_bits(0x3F800000u, 0x7FC00000u, Format::fp32, p), Mismatch::value);
    EXPECT_EQ(compare_bits(0x7F800000u, 0x7FC00000u, Format::fp32, p), Mismatch::value); // Inf
    EXPECT_EQ(compare_bits(0x7F, 0x7E, Format::e4m3, p), Mismatch::value);
    EXPECT_EQ(compare_bits(0x7C, 0x7D, Format::e5m2, p), Mismatch::value); // Inf vs NaN
    EXPECT_EQ(compare_bits(0x7F, 0x00, Format::e4m3, p), Mismatch::value); // NaN vs zero
  }
}

TEST(CompareBits, OneVersusNextAfterIsValue) {
  EXPECT_EQ(compare_bits(0x3F800000u, 0x3F800001u, Format::fp32), Mismatch::value);
  EXPECT_EQ(compare_bits(0x38, 0x39, Format::e4m3), Mismatch::value);
  EXPECT_EQ(compare_bits(0x3C00, 0x3C01, Format::fp16), Mismatch::value);
  // Same magnitude, other sign: a value difference, not a zero sign.
  EXPECT_EQ(compare_bits(0x38, 0xB8, Format::e4m3), Mismatch::value);
  // Zero versus the smallest subnormal.
  EXPECT_EQ(compare_bits(0x00000000u, 0x00000001u, Format::fp32), Mismatch::value);
  EXPECT_EQ(compare_bits(0x80, 0x01, Format::e5m2), Mismatch::value);
}

TEST(CompareBits, CodesAreMaskedToFormatWidth) {
  EXPECT_EQ(compare_bits(0x1FF, 0xFF, Format::e4m3), Mismatch::none);
  EXPECT_EQ(compare_bits(0xFFFFFF38u, 0x38, Format::e4m3), Mismatch::none);
  EXPECT_EQ(compare_bits(0x100, 0x180, Format::e5m2), Mismatch::zero_sign);
  EXPECT_EQ(compare_bits(0x13C00, 0x3C00, Format::fp16), Mismatch::none);
  EXPECT_EQ(compare_bits(0xABCD3F80u, 0x3F80, Format::bf16), Mismatch::none);
}

TEST(CompareBits, MismatchNamesAreStable) {
  EXPECT_STREQ(mmaemu::mismatch_name(Mismatch::none), "none");
  EXPECT_STREQ(mmaemu::mismatch_name(Mismatch::zero_sign), "zero_sign");
  EXPECT_STREQ(mmaemu::mismatch_name(Mismatch::nan_payload), "nan_payload");
  EXPECT_STREQ(mmaemu::mismatch_name(Mismatch::value), "value");
}

TEST(DecomposeBits, Fp32ShowsSignExponentAndFraction) {
  EXPECT_EQ(decompose_bits(0x3f700000u, Format::fp32), "0x3f700000 (s=0 e=0x7e f=0x700000)");
  EXPECT_EQ(decompose_bits(0x80000001u, Format::fp32), "0x80000001 (s=1 e=0x00 f=0x000001)");
  EXPECT_EQ(decompose_bits(0x7FFFFFFFu, Format::fp32), "0x7fffffff (s=0 e=0xff f=0x7fffff)");
}

TEST(DecomposeBits, E4M3ShowsSignExponentAndFraction) {
  EXPECT_EQ(decompose_bits(0xb8, Format::e4m3), "0xb8 (s=1 e=0x07 f=0x0)");
  EXPECT_EQ(decompose_bits(0x7e, Format::e4m3), "0x7e (s=0 e=0x0f f=0x6)");
  EXPECT_EQ(decompose_bits(0x01, Format::e4m3), "0x01 (s=0 e=0x00 f=0x1)");
}

TEST(DecomposeBits, MasksCodeToFormatWidth) {
  EXPECT_EQ(decompose_bits(0x1b8, Format::e4m3), "0xb8 (s=1 e=0x07 f=0x0)");
  EXPECT_EQ(decompose_bits(0x7c, Format::e5m2), "0x7c (s=0 e=0x1f f=0x0)");
}

} // namespace
