// SPDX-License-Identifier: BSD-2-Clause
// Decoding of every format: all FP8, fp16 and bf16 codes checked against derivations written
// here from the format definitions (bit fields + std::ldexp, hand anchors, the compiler's
// _Float16, bf16 as the top half of a binary32). Every claim compares integer bit patterns.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/format.hpp"

namespace {

using mmaemu::decode_bits;
using mmaemu::decode_to_double;
using mmaemu::encode_binary64_bits;
using mmaemu::Exact;
using mmaemu::Format;
using mmaemu::Overflow;
using mmaemu::ValueClass;

std::uint64_t bits64(double v) {
  return std::bit_cast<std::uint64_t>(v);
}
std::uint32_t bits32(float v) {
  return std::bit_cast<std::uint32_t>(v);
}

std::string hex(std::uint32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", c);
  return buf;
}

// The format definitions, typed from the torch / IEEE documentation, not from format.cpp.
struct Def {
  int width, exp_bits, frac_bits, bias;
  bool fn; // e4m3fn: no Inf, only S.1111.111 is NaN
};
constexpr Def kE4M3{8, 4, 3, 7, true};
constexpr Def kE5M2{8, 5, 2, 15, false};
constexpr Def kFP16{16, 5, 10, 15, false};
constexpr Def kBF16{16, 8, 7, 127, false};
constexpr Def kTF32{19, 8, 10, 127, false}; // NVIDIA TensorFloat-32: binary32's top 19 bits

enum class Cls { zero, finite, inf, nan };

struct Ref {
  Cls cls;
  bool neg;
  double value; // signed; NaN for nan
};

Ref reference(const Def& d, std::uint32_t code) {
  const bool neg = ((code >> (d.width - 1)) & 1u) != 0;
  const std::uint32_t ones = (1u << d.exp_bits) - 1u;
  const std::uint32_t e = (code >> d.frac_bits) & ones;
  const std::uint32_t m = code & ((1u << d.frac_bits) - 1u);
  const std::uint32_t mall = (1u << d.frac_bits) - 1u;
  if (d.fn) {
    if (e == ones && m == mall)
      return {Cls::nan, neg, std::nan("")};
  } else if (e == ones) {
    if (m == 0)
      return {Cls::inf, neg, neg ? -HUGE_VAL : HUGE_VAL};
    return {Cls::nan, neg, std::nan("")};
  }
  double mag;
  if (e == 0) {
    mag = std::ldexp(static_cast<double>(m), 1 - d.bias - d.frac_bits);
  } else {
    mag = std::ldexp(static_cast<double>(m + (1u << d.frac_bits)),
                     static_cast<int>(e) - d.bias - d.frac_bits);
  }
  const Cls cls = (e == 0 && m == 0) ? Cls::zero : Cls::finite;
  return {cls, neg, neg ? -mag : mag};
}

ValueClass to_vc(Cls c) {
  switch (c) {
  case Cls::zero:
    return ValueClass::zero;
  case Cls::finite:
    return ValueClass::finite;
  case Cls::inf:
    return ValueClass::inf;
  case Cls::nan:
    return ValueClass::nan;
  }
  return ValueClass::nan;
}

// Checks decode_to_double and decode_bits for every code of a format.
void check_all_codes(Format f, const Def& d) {
  const std::uint32_t n = 1u << d.width;
  for (std::uint32_t code = 0; code < n; ++code) {
    SCOPED_TRACE("code " + hex(code));
    const Ref r = reference(d, code);
    const double got = decode_to_double(f, code);
    const Exact x = decode_bits(f, code);
    ASSERT_EQ(static_cast<int>(x.cls), static_cast<int>(to_vc(r.cls)));
    if (r.cls == Cls::nan) {
      ASSERT_TRUE(std::isnan(got));
      continue;
    }
    ASSERT_EQ(x.neg, r.neg);
    ASSERT_EQ(bits64(got), bits64(r.value));
    if (r.cls == Cls::finite) {
      // The integer significand keeps the hidden bit; subnormals sit at emin - frac_bits.
      const std::uint32_t e = (code >> d.frac_bits) & ((1u << d.exp_bits) - 1u);
      const std::uint32_t m = code & ((1u << d.frac_bits) - 1u);
      if (e == 0) {
        ASSERT_EQ(x.sig, m);
        ASSERT_EQ(x.exp, 1 - d.bias - d.frac_bits);
      } else {
        ASSERT_EQ(x.sig, m | (1u << d.frac_bits));
        ASSERT_EQ(x.exp, static_cast<int>(e) - d.bias - d.frac_bits);
      }
      const double mag = std::ldexp(static_cast<double>(x.sig), x.exp);
      ASSERT_EQ(bits64(r.neg ? -mag : mag), bits64(r.value));
    }
  }
}

struct Counts {
  int nan = 0, inf = 0, zero = 0, finite = 0;
};

Counts count_classes(Format f, int width) {
  Counts c;
  for (std::uint32_t code = 0; code < (1u << width); ++code) {
    switch (decode_bits(f, code).cls) {
    case ValueClass::nan:
      ++c.nan;
      break;
    case ValueClass::inf:
      ++c.inf;
      break;
    case ValueClass::zero:
      ++c.zero;
      break;
    case ValueClass::finite:
      ++c.finite;
      break;
    }
  }
  return c;
}

// decode then encode (Overflow::infinity) gives the code back; NaN codes give `nan`.
void check_round_trip(Format f, int width, std::uint32_t canonical_nan) {
  for (std::uint32_t code = 0; code < (1u << width); ++code) {
    const double v = decode_to_double(f, code);
    const std::uint32_t back = encode_binary64_bits(f, v, Overflow::infinity);
    if (std::isnan(v)) {
      ASSERT_EQ(back, canonical_nan) << "code " << hex(code);
    } else {
      ASSERT_EQ(back, code) << "code " << hex(code);
    }
  }
}

// ---- E4M3 -----------------------------------------------------------------------------

TEST(DecodeE4M3, AllCodesMatchBitFieldDerivation) {
  check_all_codes(Format::e4m3, kE4M3);
}

TEST(DecodeE4M3, HandAnchorValues) {
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x38)), bits64(1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0xB8)), bits64(-1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x01)), bits64(0x1p-9)); // min subnormal
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x07)), bits64(7 * 0x1p-9));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x08)), bits64(0x1p-6)); // min normal
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x7E)), bits64(448.0));  // max finite
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0xFE)), bits64(-448.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x78)), bits64(256.0)); // exp all-ones, finite
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x40)), bits64(2.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x00)), bits64(0.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x80)), bits64(-0.0));
  EXPECT_TRUE(std::signbit(decode_to_double(Format::e4m3, 0x80)));
  EXPECT_TRUE(std::isnan(decode_to_double(Format::e4m3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode_to_double(Format::e4m3, 0xFF)));
}

TEST(DecodeE4M3, HasTwoNanCodesNoInfAndTwoZeros) {
  const Counts c = count_classes(Format::e4m3, 8);
  EXPECT_EQ(c.nan, 2);
  EXPECT_EQ(c.inf, 0);
  EXPECT_EQ(c.zero, 2);
  EXPECT_EQ(c.finite, 252);
  EXPECT_EQ(decode_bits(Format::e4m3, 0x7F).cls, ValueClass::nan);
  EXPECT_EQ(decode_bits(Format::e4m3, 0xFF).cls, ValueClass::nan);
}

TEST(DecodeE4M3, RoundTripsEveryCodeAndNanToCanonical7F) {
  check_round_trip(Format::e4m3, 8, 0x7F);
}

TEST(DecodeE4M3, UsesOnlyLowEightBitsOfCode) {
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0x138)), bits64(1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e4m3, 0xFFFFFF38u)), bits64(1.0));
}

// ---- E5M2 -----------------------------------------------------------------------------

TEST(DecodeE5M2, AllCodesMatchBitFieldDerivation) {
  check_all_codes(Format::e5m2, kE5M2);
}

TEST(DecodeE5M2, HandAnchorValues) {
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x3C)), bits64(1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0xBC)), bits64(-1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x01)), bits64(0x1p-16)); // min subnormal
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x03)), bits64(3 * 0x1p-16));
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x04)), bits64(0x1p-14)); // min normal
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x7B)), bits64(57344.0)); // max finite
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0xFB)), bits64(-57344.0));
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x7C)),
            bits64(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0xFC)),
            bits64(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(bits64(decode_to_double(Format::e5m2, 0x80)), bits64(-0.0));
  for (std::uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) {
    EXPECT_TRUE(std::isnan(decode_to_double(Format::e5m2, c))) << hex(c);
  }
}

TEST(DecodeE5M2, HasSixNanCodesTwoInfAndTwoZeros) {
  const Counts c = count_classes(Format::e5m2, 8);
  EXPECT_EQ(c.nan, 6);
  EXPECT_EQ(c.inf, 2);
  EXPECT_EQ(c.zero, 2);
  EXPECT_EQ(c.finite, 246);
}

TEST(DecodeE5M2, RoundTripsEveryCodeAndNanToCanonical7F) {
  check_round_trip(Format::e5m2, 8, 0x7F);
}

// ---- fp16 -----------------------------------------------------------------------------

TEST(DecodeFP16, AllCodesMatchBitFieldDerivation) {
  check_all_codes(Format::fp16, kFP16);
}

TEST(DecodeFP16, RoundTripsAll65536CodesAndNanToCanonical7FFF) {
  check_round_trip(Format::fp16, 16, 0x7FFF);
}

TEST(DecodeFP16, HandAnchorValues) {
  EXPECT_EQ(bits64(decode_to_double(Format::fp16, 0x3C00)), bits64(1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::fp16, 0x0001)), bits64(0x1p-24));
  EXPECT_EQ(bits64(decode_to_double(Format::fp16, 0x0400)), bits64(0x1p-14));
  EXPECT_EQ(bits64(decode_to_double(Format::fp16, 0x7BFF)), bits64(65504.0));
  EXPECT_EQ(bits64(decode_to_double(Format::fp16, 0x8000)), bits64(-0.0));
  EXPECT_EQ(bits64(decode_to_double(Format::fp16, 0x7C00)),
            bits64(std::numeric_limits<double>::infinity()));
}

#if defined(__FLT16_MAX__)
TEST(DecodeFP16, AllCodesMatchCompilerFloat16) {
  for (std::uint32_t code = 0; code < 0x10000u; ++code) {
    const std::uint16_t c16 = static_cast<std::uint16_t>(code);
    _Float16 h;
    std::memcpy(&h, &c16, sizeof h);
    const double want = static_cast<double>(h);
    const double got = decode_to_double(Format::fp16, code);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "code " << hex(code);
    } else {
      ASSERT_EQ(bits64(got), bits64(want)) << "code " << hex(code);
    }
  }
}
#else
TEST(DecodeFP16, AllCodesMatchCompilerFloat16) {
  GTEST_SKIP() << "no _Float16";
}
#endif

// ---- bf16 -----------------------------------------------------------------------------

TEST(DecodeBF16, AllCodesMatchBitFieldDerivation) {
  check_all_codes(Format::bf16, kBF16);
}

TEST(DecodeBF16, RoundTripsAll65536CodesAndNanToCanonical7FFF) {
  check_round_trip(Format::bf16, 16, 0x7FFF);
}

TEST(DecodeBF16, AllCodesMatchTopHalfOfBinary32) {
  for (std::uint32_t code = 0; code < 0x10000u; ++code) {
    const float fl = std::bit_cast<float>(code << 16);
    const double want = static_cast<double>(fl);
    const double got = decode_to_double(Format::bf16, code);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "code " << hex(code);
    } else {
      ASSERT_EQ(bits64(got), bits64(want)) << "code " << hex(code);
    }
  }
}

TEST(DecodeBF16, HandAnchorValues) {
  EXPECT_EQ(bits64(decode_to_double(Format::bf16, 0x3F80)), bits64(1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::bf16, 0x0001)), bits64(0x1p-133));
  EXPECT_EQ(bits64(decode_to_double(Format::bf16, 0x7F7F)), bits64(0x1.FEp127));
  EXPECT_EQ(bits64(decode_to_double(Format::bf16, 0x8000)), bits64(-0.0));
}

// ---- tf32 -----------------------------------------------------------------------------

TEST(DecodeTF32, AllCodesMatchBitFieldDerivation) {
  check_all_codes(Format::tf32, kTF32);
}

TEST(DecodeTF32, RoundTripsAllCodesAndNanToCanonical3FFFF) {
  check_round_trip(Format::tf32, 19, 0x3FFFF);
}

// A tf32 value is the binary32 of its code shifted to the top 19 bits (the container
// cvt.rna.tf32.f32 writes): every code against the compiler's float of that pattern.
TEST(DecodeTF32, AllCodesMatchTheirBinary32Container) {
  for (std::uint32_t code = 0; code < (1u << 19); ++code) {
    const double want = static_cast<double>(std::bit_cast<float>(code << 13));
    const double got = decode_to_double(Format::tf32, code);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "code " << hex(code);
    } else {
      ASSERT_EQ(bits64(got), bits64(want)) << "code " << hex(code);
    }
    ASSERT_EQ(mmaemu::tf32_container_of_code(code), code << 13);
    ASSERT_EQ(mmaemu::tf32_code_of_container(code << 13), code);
  }
  // The container's low 13 bits are ignored, as an mma ignores them.
  EXPECT_EQ(mmaemu::tf32_code_of_container(0x3F801FFFu), 0x3F800000u >> 13);
}

TEST(DecodeTF32, HandAnchorValuesAndClassCounts) {
  EXPECT_EQ(bits64(decode_to_double(Format::tf32, 0x3F800000u >> 13)), bits64(1.0));
  EXPECT_EQ(bits64(decode_to_double(Format::tf32, 0x00001u)), bits64(0x1p-136));    // min subnormal
  EXPECT_EQ(bits64(decode_to_double(Format::tf32, 0x3FBFFu)), bits64(0x1.FFCp127)); // max
  EXPECT_EQ(bits64(decode_to_double(Format::tf32, 0x40000u)), bits64(-0.0));
  const Counts c = count_classes(Format::tf32, 19);
  EXPECT_EQ(c.inf, 2);
  EXPECT_EQ(c.zero, 2);
  EXPECT_EQ(c.nan, 2 * 1023);
}

// ---- fp32 -----------------------------------------------------------------------------

TEST(DecodeFP32, SmallestSubnormalIsTwoToMinus149) {
  EXPECT_EQ(bits64(decode_to_double(Format::fp32, 0x00000001u)), bits64(0x1p-149));
  const Exact x = decode_bits(Format::fp32, 0x00000001u);
  EXPECT_EQ(x.cls, ValueClass::finite);
  EXPECT_EQ(x.sig, 1u);
  EXPECT_EQ(x.exp, -149);
}

TEST(DecodeFP32, MaxFiniteIsFloatMax) {
  EXPECT_EQ(bits64(decode_to_double(Format::fp32, 0x7F7FFFFFu)),
            bits64(static_cast<double>(std::numeric_limits<float>::max())));
  EXPECT_EQ(bits64(decode_to_double(Format::fp32, 0x7F7FFFFFu)), bits64(0x1.FFFFFEp127));
}

TEST(DecodeFP32, SignBitOnlyIsNegativeZero) {
  const double v = decode_to_double(Format::fp32, 0x80000000u);
  EXPECT_TRUE(std::signbit(v));
  EXPECT_EQ(bits64(v), 0x8000000000000000ull);
  EXPECT_EQ(decode_bits(Format::fp32, 0x80000000u).cls, ValueClass::zero);
  EXPECT_TRUE(decode_bits(Format::fp32, 0x80000000u).neg);
}

TEST(DecodeFP32, SampledCodesMatchBitCastFloat) {
  // A stride that walks every exponent and many fractions, plus the special codes.
  auto check = [](std::uint32_t code) {
    const double want = static_cast<double>(std::bit_cast<float>(code));
    const double got = decode_to_double(Format::fp32, code);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << hex(code);
    } else {
      ASSERT_EQ(bits64(got), bits64(want)) << hex(code);
    }
  };
  for (std::uint64_t c = 0; c <= 0xFFFFFFFFull; c += 40503)
    check(static_cast<std::uint32_t>(c));
  for (std::uint32_t c : {0x00000000u, 0x007FFFFFu, 0x00800000u, 0x7F800000u, 0xFF800000u,
                          0x7FC00000u, 0x7F800001u, 0xFFFFFFFFu}) {
    check(c);
  }
}

TEST(DecodeFP32, Binary32BitsOfExactValuesAndRejectsInexact) {
  std::uint32_t b = 0;
  EXPECT_TRUE(mmaemu::binary32_bits_of(1.0, b));
  EXPECT_EQ(b, 0x3F800000u);
  EXPECT_TRUE(mmaemu::binary32_bits_of(-0.0, b));
  EXPECT_EQ(b, 0x80000000u);
  EXPECT_TRUE(mmaemu::binary32_bits_of(0x1p-149, b));
  EXPECT_EQ(b, 0x00000001u);
  EXPECT_FALSE(mmaemu::binary32_bits_of(1.0 + 0x1p-30, b));
  EXPECT_FALSE(mmaemu::binary32_bits_of(std::nan(""), b));
  EXPECT_EQ(bits32(1.0f), 0x3F800000u);
}

// ---- parse_format ---------------------------------------------------------------------

TEST(ParseFormat, AcceptsShortUpperTorchAndAliasNames) {
  EXPECT_EQ(mmaemu::parse_format("e4m3"), std::optional<Format>(Format::e4m3));
  EXPECT_EQ(mmaemu::parse_format("E4M3"), std::optional<Format>(Format::e4m3));
  EXPECT_EQ(mmaemu::parse_format("float8_e4m3fn"), std::optional<Format>(Format::e4m3));
  EXPECT_EQ(mmaemu::parse_format("e5m2"), std::optional<Format>(Format::e5m2));
  EXPECT_EQ(mmaemu::parse_format("torch.float8_e5m2"), std::optional<Format>(Format::e5m2));
  EXPECT_EQ(mmaemu::parse_format("bfloat16"), std::optional<Format>(Format::bf16));
  EXPECT_EQ(mmaemu::parse_format("float16"), std::optional<Format>(Format::fp16));
  EXPECT_EQ(mmaemu::parse_format("float32"), std::optional<Format>(Format::fp32));
  EXPECT_EQ(mmaemu::parse_format("fp32"), std::optional<Format>(Format::fp32));
  EXPECT_EQ(mmaemu::parse_format("tf32"), std::optional<Format>(Format::tf32));
  EXPECT_EQ(mmaemu::parse_format("TF32"), std::optional<Format>(Format::tf32));
}

TEST(ParseFormat, RejectsUnknownAndEmptyNames) {
  EXPECT_FALSE(mmaemu::parse_format("e3m4").has_value());
  EXPECT_FALSE(mmaemu::parse_format("").has_value());
}

TEST(FormatSpec, FieldsMatchFormatDefinitions) {
  struct Want {
    Format f;
    Def d;
  };
  for (const Want& w :
       {Want{Format::e4m3, kE4M3}, Want{Format::e5m2, kE5M2}, Want{Format::fp16, kFP16},
        Want{Format::bf16, kBF16}, Want{Format::tf32, kTF32}}) {
    const mmaemu::FormatSpec& s = mmaemu::spec(w.f);
    EXPECT_EQ(s.width, w.d.width) << s.name;
    EXPECT_EQ(s.exp_bits, w.d.exp_bits) << s.name;
    EXPECT_EQ(s.frac_bits, w.d.frac_bits) << s.name;
    EXPECT_EQ(s.bias, w.d.bias) << s.name;
  }
  EXPECT_EQ(mmaemu::spec(Format::e4m3).emax(), 8);  // 448 = 1.75 * 2^8
  EXPECT_EQ(mmaemu::spec(Format::e5m2).emax(), 15); // 57344 = 1.75 * 2^15
  EXPECT_EQ(mmaemu::spec(Format::fp32).emin(), -126);
}

} // namespace
