// SPDX-License-Identifier: BSD-2-Clause
// Rounding to nearest, ties to even, into E4M3, E5M2, fp16, bf16, tf32 and fp32, saturating and
// not. The oracle here enumerates every finite code of the target, takes its exact value from
// the bit fields with std::ldexp (no emulator code), and picks the nearest by brute force.
// Every claim compares integer bit patterns.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/format.hpp"

namespace {

using mmaemu::encode_binary32_bits;
using mmaemu::encode_binary64_bits;
using mmaemu::Format;
using mmaemu::Overflow;
using mmaemu::round_exact_bits;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDblMax = std::numeric_limits<double>::max();
constexpr double kDblDenormMin = std::numeric_limits<double>::denorm_min();

std::string hex(std::uint64_t c) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(c));
  return buf;
}

std::string show(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

const char* ov_name(Overflow ov) {
  return ov == Overflow::saturate ? "saturate" : "infinity";
}

// The format definitions, typed from the torch / IEEE documentation.
struct Def {
  const char* name;
  Format f;
  int width, exp_bits, frac_bits, bias;
  bool fn; // e4m3fn: no Inf; only S.1111.111 is NaN
  std::uint32_t canonical_nan;
};
constexpr Def kE4M3{"e4m3", Format::e4m3, 8, 4, 3, 7, true, 0x7F};
constexpr Def kE5M2{"e5m2", Format::e5m2, 8, 5, 2, 15, false, 0x7F};
constexpr Def kFP16{"fp16", Format::fp16, 16, 5, 10, 15, false, 0x7FFF};
constexpr Def kBF16{"bf16", Format::bf16, 16, 8, 7, 127, false, 0x7FFF};
constexpr Def kTF32{"tf32", Format::tf32, 19, 8, 10, 127, false, 0x3FFFF};

// Brute-force round-to-nearest-even oracle over the enumerated finite codes of a format.
class Oracle {
public:
  explicit Oracle(const Def& d) : d_(d) {
    const std::uint32_t ones = (1u << d.exp_bits) - 1u;
    const std::uint32_t mall = (1u << d.frac_bits) - 1u;
    sign_ = 1u << (d.width - 1);
    // Positive codes in increasing order; the first non-finite one ends the list.
    for (std::uint32_t code = 0; code < sign_; ++code) {
      const std::uint32_t e = code >> d.frac_bits;
      const std::uint32_t m = code & mall;
      if (d.fn ? (e == ones && m == mall) : (e == ones))
        break;
      const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - d.bias - d.frac_bits)
                              : std::ldexp(static_cast<double>(m | (1u << d.frac_bits)),
                                           static_cast<int>(e) - d.bias - d.frac_bits);
      values_.push_back(v);
    }
    max_code_ = static_cast<std::uint32_t>(values_.size() - 1);
    const int emax_biased = static_cast<int>(max_code_ >> d.frac_bits);
    ulp_max_ = std::ldexp(1.0, emax_biased - d.bias - d.frac_bits);
    inf_code_ = ones << d.frac_bits;
  }

  const std::vector<double>& values() const { return values_; }
  std::uint32_t max_code() const { return max_code_; }
  double max_value() const { return values_.back(); }
  // The value the code after max would have with an unbounded exponent.
  double beyond_max() const { return values_.back() + ulp_max_; }

  std::uint32_t overflow(bool neg, Overflow ov) const {
    const std::uint32_t s = neg ? sign_ : 0u;
    if (ov == Overflow::saturate)
      return s | max_code_;
    if (d_.fn)
      return d_.canonical_nan;
    return s | inf_code_;
  }

  std::uint32_t expect(double x, Overflow ov) const {
    if (std::isnan(x))
      return d_.canonical_nan;
    const bool neg = std::signbit(x);
    const std::uint32_t s = neg ? sign_ : 0u;
    const double a = std::fabs(x);
    if (std::isinf(a))
      return overflow(neg, ov);
    // Largest representable value <= a.
    const auto it = std::upper_bound(values_.begin(), values_.end(), a);
    const std::uint32_t lo = static_cast<std::uint32_t>(it - values_.begin()) - 1u;
    if (values_[lo] == a)
      return s | lo;                  // exact (not a bit claim: a search)
    const std::uint32_t hi = lo + 1u; // may be the virtual code after max
    const double hv = hi <= max_code_ ? values_[hi] : beyond_max();
    if (a >= hv)
      return overflow(neg, ov);                // only when lo == max_code_
    const double mid = (values_[lo] + hv) / 2; // exact: few significant bits
    std::uint32_t pick;
    if (a < mid) {
      pick = lo;
    } else if (a > mid) {
      pick = hi;
    } else {
      pick = (lo & 1u) == 0 ? lo : hi; // the code with an even last significand bit
    }
    if (pick > max_code_)
      return overflow(neg, ov);
    return s | pick;
  }

private:
  Def d_;
  std::vector<double> values_;
  std::uint32_t sign_ = 0, max_code_ = 0, inf_code_ = 0;
  double ulp_max_ = 0;
};

const Oracle& oracle(const Def& d) {
  static const Oracle e4m3(kE4M3), e5m2(kE5M2), fp16(kFP16), bf16(kBF16), tf32(kTF32);
  switch (d.f) {
  case Format::e4m3:
    return e4m3;
  case Format::e5m2:
    return e5m2;
  case Format::fp16:
    return fp16;
  case Format::tf32:
    return tf32;
  default:
    return bf16;
  }
}

// Compares encode_binary64_bits (and encode_binary32_bits when x is a binary32) with the
// oracle, in both overflow modes. Returns the number of mismatches (capped reporting).
int check_inputs(const Def& d, const std::vector<double>& xs) {
  const Oracle& o = oracle(d);
  int bad = 0;
  for (double x : xs) {
    for (Overflow ov : {Overflow::saturate, Overflow::infinity}) {
      const std::uint32_t want = o.expect(x, ov);
      const std::uint32_t got = encode_binary64_bits(d.f, x, ov);
      if (got != want && ++bad <= 20) {
        ADD_FAILURE() << d.name << " binary64 " << show(x) << " " << ov_name(ov) << ": want "
                      << hex(want) << " got " << hex(got);
      }
      const float fx = static_cast<float>(x);
      if (!std::isnan(x) && static_cast<double>(fx) == x) { // exactness test, not a bit claim
        const std::uint32_t got32 = encode_binary32_bits(d.f, std::bit_cast<std::uint32_t>(fx), ov);
        if (got32 != want && ++bad <= 20) {
          ADD_FAILURE() << d.name << " binary32 " << show(x) << " " << ov_name(ov) << ": want "
                        << hex(want) << " got " << hex(got32);
        }
      }
    }
  }
  return bad;
}

// Every representable value, every midpoint between neighbours (including the one past the
// max), the midpoints +- one binary64 ulp and +- one binary32 ulp, and the special inputs.
std::vector<double> boundary_inputs(const Def& d) {
  const Oracle& o = oracle(d);
  const std::vector<double>& v = o.values();
  std::vector<double> xs;
  auto add_mid = [&xs](double mid) {
    xs.push_back(mid);
    xs.push_back(std::nextafter(mid, kInf));
    xs.push_back(std::nextafter(mid, -kInf));
    const float fm = static_cast<float>(mid);
    if (static_cast<double>(fm) == mid) {
      xs.push_back(std::nextafter(fm, std::numeric_limits<float>::infinity()));
      xs.push_back(std::nextafter(fm, -std::numeric_limits<float>::infinity()));
    }
  };
  for (std::size_t i = 0; i < v.size(); ++i) {
    xs.push_back(v[i]);
    const double next = i + 1 < v.size() ? v[i + 1] : o.beyond_max();
    add_mid((v[i] + next) / 2);
  }
  const double tiny = v[1];
  xs.insert(xs.end(),
            {o.beyond_max(), std::nextafter(o.beyond_max(), kInf),
             std::nextafter(o.beyond_max(), 0.0), 2 * o.max_value(), 4 * o.beyond_max(), 1e300,
             kDblMax, tiny / 2, tiny / 4, std::nextafter(tiny / 2, kInf),
             std::nextafter(tiny / 2, 0.0), kDblDenormMin, 0x1p-1022, 0.0, kInf, std::nan("")});
  const std::size_t n = xs.size();
  for (std::size_t i = 0; i < n; ++i)
    xs.push_back(-xs[i]); // -0.0, -Inf, -NaN too
  return xs;
}

// Seeded random doubles spread over the format's exponent range (and a little beyond).
std::vector<double> random_inputs(const Def& d, std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const int emin = 1 - d.bias;
  const int emax = (1 << d.exp_bits) - 1 - d.bias; // one past ieee emax: covers overflow
  std::uniform_int_distribution<int> exp_dist(emin - d.frac_bits - 3, emax + 1);
  std::vector<double> xs;
  xs.reserve(count);
  for (int i = 0; i < count; ++i) {
    const std::uint64_t r = rng();
    const double frac = static_cast<double>(r >> 12) * 0x1p-52; // 52 random bits in [0, 1)
    double x = std::ldexp(1.0 + frac, exp_dist(rng));
    if (r & 1u)
      x = -x;
    xs.push_back(x);
  }
  return xs;
}

constexpr std::uint64_t kSeed = 0x6d6d61656d75ull; // "mmaemu"

// ---- exhaustive boundaries and random inputs, per format ------------------------------

TEST(EncodeOracle, OracleEnumeratesExpectedFiniteRanges) {
  EXPECT_EQ(oracle(kE4M3).max_code(), 0x7Eu);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(oracle(kE4M3).max_value()),
            std::bit_cast<std::uint64_t>(448.0));
  EXPECT_EQ(oracle(kE5M2).max_code(), 0x7Bu);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(oracle(kE5M2).max_value()),
            std::bit_cast<std::uint64_t>(57344.0));
  EXPECT_EQ(oracle(kFP16).max_code(), 0x7BFFu);
  EXPECT_EQ(oracle(kBF16).max_code(), 0x7F7Fu);
  EXPECT_EQ(oracle(kTF32).max_code(), 0x3FBFFu);
}

TEST(EncodeE4M3, AllValuesMidpointsAndNeighboursMatchBruteForceRNE) {
  EXPECT_EQ(check_inputs(kE4M3, boundary_inputs(kE4M3)), 0);
}
TEST(EncodeE5M2, AllValuesMidpointsAndNeighboursMatchBruteForceRNE) {
  EXPECT_EQ(check_inputs(kE5M2, boundary_inputs(kE5M2)), 0);
}
TEST(EncodeFP16, AllValuesMidpointsAndNeighboursMatchBruteForceRNE) {
  EXPECT_EQ(check_inputs(kFP16, boundary_inputs(kFP16)), 0);
}
TEST(EncodeBF16, AllValuesMidpointsAndNeighboursMatchBruteForceRNE) {
  EXPECT_EQ(check_inputs(kBF16, boundary_inputs(kBF16)), 0);
}
TEST(EncodeTF32, AllValuesMidpointsAndNeighboursMatchBruteForceRNE) {
  EXPECT_EQ(check_inputs(kTF32, boundary_inputs(kTF32)), 0);
}

TEST(EncodeRandom, SeededRandomDoublesMatchBruteForceRNEInAllSmallFormats) {
  SCOPED_TRACE("mt19937_64 seed " + hex(kSeed));
  for (const Def* d : {&kE4M3, &kE5M2, &kFP16, &kBF16, &kTF32}) {
    SCOPED_TRACE(d->name);
    EXPECT_EQ(check_inputs(*d, random_inputs(*d, kSeed, 5000)), 0);
  }
}

TEST(EncodeRandom, SeededRandomBinary32InputsMatchBruteForceRNE) {
  SCOPED_TRACE("mt19937_64 seed " + hex(kSeed + 1));
  for (const Def* d : {&kE4M3, &kE5M2, &kFP16, &kBF16, &kTF32}) {
    SCOPED_TRACE(d->name);
    std::vector<double> xs = random_inputs(*d, kSeed + 1, 3000);
    for (double& x : xs)
      x = static_cast<double>(static_cast<float>(x)); // binary32 inputs
    EXPECT_EQ(check_inputs(*d, xs), 0);
  }
}

#if defined(__FLT16_MAX__)
TEST(EncodeFP16, SeededRandomDoublesMatchCompilerFloat16Conversion) {
  SCOPED_TRACE("mt19937_64 seed " + hex(kSeed + 2));
  for (double x : random_inputs(kFP16, kSeed + 2, 5000)) {
    const _Float16 h = static_cast<_Float16>(x);
    const std::uint32_t want = std::bit_cast<std::uint16_t>(h);
    ASSERT_EQ(encode_binary64_bits(Format::fp16, x, Overflow::infinity), want) << show(x);
  }
}
#endif

TEST(EncodeFP32, SeededRandomDoublesMatchCompilerFloatConversion) {
  SCOPED_TRACE("mt19937_64 seed " + hex(kSeed + 3));
  std::mt19937_64 rng(kSeed + 3);
  std::uniform_int_distribution<int> exp_dist(-155, 130);
  for (int i = 0; i < 5000; ++i) {
    const std::uint64_t r = rng();
    double x = std::ldexp(1.0 + static_cast<double>(r >> 12) * 0x1p-52, exp_dist(rng));
    if (r & 1u)
      x = -x;
    const float fx = static_cast<float>(x); // hardware RNE, overflow to Inf
    const std::uint32_t inf_want = std::bit_cast<std::uint32_t>(fx);
    const std::uint32_t sat_want =
        std::isinf(fx) ? (inf_want & 0x80000000u) | 0x7F7FFFFFu : inf_want;
    ASSERT_EQ(encode_binary64_bits(Format::fp32, x, Overflow::infinity), inf_want) << show(x);
    ASSERT_EQ(encode_binary64_bits(Format::fp32, x, Overflow::saturate), sat_want) << show(x);
  }
}

// ---- E4M3 hand-derived boundaries ------------------------------------------------------
// 448 = 1.110b * 2^8 (0x7E). The next value with an unbounded exponent, 480 = 1.111b * 2^8,
// would be 0x7F (odd field 111, and the NaN code). 464 is their midpoint: ties go to the
// even field 110, i.e. 448. Anything above 464 rounds to 480 > max: overflow.

TEST(EncodeE4M3, TieAt464GoesToEven448) {
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 464.0, Overflow::infinity), 0x7Eu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 464.0, Overflow::saturate), 0x7Eu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -464.0, Overflow::infinity), 0xFEu);
}

TEST(EncodeE4M3, JustAbove464OverflowsToNanOrSaturates) {
  const double x = std::nextafter(464.0, kInf);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, x, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, x, Overflow::saturate), 0x7Eu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -x, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -x, Overflow::saturate), 0xFEu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 480.0, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 1e6, Overflow::saturate), 0x7Eu);
}

TEST(EncodeE4M3, InfinityInputIsNanOrSaturatesWithSign) {
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, kInf, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -kInf, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, kInf, Overflow::saturate), 0x7Eu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -kInf, Overflow::saturate), 0xFEu);
}

TEST(EncodeE4M3, SubnormalTiesAndHalfOfSmallest) {
  // Smallest subnormal 2^-9 = 0x01; half of it ties to +0 (even); just above goes to 0x01.
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 0x1p-9, Overflow::infinity), 0x01u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 0x1p-10, Overflow::infinity), 0x00u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -0x1p-10, Overflow::infinity), 0x80u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, std::nextafter(0x1p-10, 1.0), Overflow::infinity),
            0x01u);
  // 3 * 2^-10 ties between 0x01 and 0x02 -> 0x02; 15 * 2^-10 ties between the largest
  // subnormal 0x07 and the smallest normal 0x08 -> 0x08.
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 3 * 0x1p-10, Overflow::infinity), 0x02u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 15 * 0x1p-10, Overflow::infinity), 0x08u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 13 * 0x1p-10, Overflow::infinity), 0x06u);
}

TEST(EncodeE4M3, NormalTiesGoToEvenField) {
  // 1.0625 ties 1.0 (0x38) / 1.125 (0x39) -> 0x38; 1.1875 ties 0x39 / 1.25 (0x3A) -> 0x3A.
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 1.0625, Overflow::infinity), 0x38u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 1.1875, Overflow::infinity), 0x3Au);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -1.1875, Overflow::infinity), 0xBAu);
  // 1.9375 ties 1.875 (0x3F) / 2.0 (0x40) -> 0x40 (carry into the exponent).
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 1.9375, Overflow::infinity), 0x40u);
}

TEST(EncodeE4M3, NegativeZeroAndNanInputs) {
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -0.0, Overflow::infinity), 0x80u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, 0.0, Overflow::saturate), 0x00u);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, std::nan(""), Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::e4m3, -std::nan(""), Overflow::saturate), 0x7Fu);
}

// ---- E5M2 hand-derived boundaries ------------------------------------------------------
// 57344 = 1.11b * 2^15 (0x7B, odd field 11). The next value with an unbounded exponent is
// 2^16 = 65536 (field 00, even). Their midpoint 61440 therefore rounds up: overflow to Inf.

TEST(EncodeE5M2, TieAt61440OverflowsToInfBecause57344IsOdd) {
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 61440.0, Overflow::infinity), 0x7Cu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, -61440.0, Overflow::infinity), 0xFCu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 61440.0, Overflow::saturate), 0x7Bu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, -61440.0, Overflow::saturate), 0xFBu);
}

TEST(EncodeE5M2, JustBelow61440RoundsToMaxFinite) {
  const double x = std::nextafter(61440.0, 0.0);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, x, Overflow::infinity), 0x7Bu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 57344.0, Overflow::infinity), 0x7Bu);
}

TEST(EncodeE5M2, InfinityInputKeepsSignOrSaturates) {
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, kInf, Overflow::infinity), 0x7Cu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, -kInf, Overflow::infinity), 0xFCu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, kInf, Overflow::saturate), 0x7Bu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, -kInf, Overflow::saturate), 0xFBu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, std::nan(""), Overflow::infinity), 0x7Fu);
}

TEST(EncodeE5M2, SmallestSubnormalHalfAndTies) {
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 0x1p-16, Overflow::infinity), 0x01u);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 0x1p-17, Overflow::infinity), 0x00u);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, std::nextafter(0x1p-17, 1.0), Overflow::infinity),
            0x01u);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, -0.0, Overflow::infinity), 0x80u);
  // 1.125 ties 1.0 (0x3C) / 1.25 (0x3D) -> 0x3C; 1.375 ties 0x3D / 1.5 (0x3E) -> 0x3E.
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 1.125, Overflow::infinity), 0x3Cu);
  EXPECT_EQ(encode_binary64_bits(Format::e5m2, 1.375, Overflow::infinity), 0x3Eu);
}

// ---- fp16 / bf16 hand-derived boundaries -----------------------------------------------

TEST(EncodeFP16, TieAt65520OverflowsToInfBecause65504IsOdd) {
  EXPECT_EQ(encode_binary64_bits(Format::fp16, 65520.0, Overflow::infinity), 0x7C00u);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, 65520.0, Overflow::saturate), 0x7BFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, std::nextafter(65520.0, 0.0), Overflow::infinity),
            0x7BFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, -kInf, Overflow::saturate), 0xFBFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, std::nan(""), Overflow::saturate), 0x7FFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, 0x1p-24, Overflow::infinity), 0x0001u);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, 0x1p-25, Overflow::infinity), 0x0000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp16, -0x1p-25, Overflow::infinity), 0x8000u);
}

TEST(EncodeBF16, TieAboveMaxOverflowsToInfAndMantissaTiesGoToEven) {
  // max 0x7F7F = 1.1111111b * 2^127 (odd); midpoint to 2^128 is 0x1.FFp127 -> Inf.
  EXPECT_EQ(encode_binary64_bits(Format::bf16, 0x1.FFp127, Overflow::infinity), 0x7F80u);
  EXPECT_EQ(encode_binary64_bits(Format::bf16, 0x1.FFp127, Overflow::saturate), 0x7F7Fu);
  EXPECT_EQ(encode_binary64_bits(Format::bf16, 1.0 + 0x1p-8, Overflow::infinity), 0x3F80u);
  EXPECT_EQ(encode_binary64_bits(Format::bf16, 1.0 + 3 * 0x1p-8, Overflow::infinity), 0x3F82u);
  EXPECT_EQ(encode_binary64_bits(Format::bf16, std::nan(""), Overflow::infinity), 0x7FFFu);
}

// ---- encode_binary32_bits --------------------------------------------------------------

TEST(EncodeBinary32, SubnormalBinary32InputsToBf16) {
  // bf16 subnormals are the binary32 subnormals with the low 16 bits cut.
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x00010000u, Overflow::infinity), 0x0001u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x00018000u, Overflow::infinity), 0x0002u); // tie
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x00028000u, Overflow::infinity), 0x0002u); // tie
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x00008000u, Overflow::infinity), 0x0000u); // tie
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x00008001u, Overflow::infinity), 0x0001u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x80008000u, Overflow::infinity), 0x8000u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x00000001u, Overflow::infinity), 0x0000u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x007FFFFFu, Overflow::infinity), 0x0080u);
}

TEST(EncodeBinary32, NormalBinary32InputsToBf16) {
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x3F808000u, Overflow::infinity), 0x3F80u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x3F818000u, Overflow::infinity), 0x3F82u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x3F808001u, Overflow::infinity), 0x3F81u);
  // FLT_MAX is above the bf16 midpoint 0x7F7F8000: overflow.
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x7F7FFFFFu, Overflow::infinity), 0x7F80u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0x7F7FFFFFu, Overflow::saturate), 0x7F7Fu);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0xFF800000u, Overflow::infinity), 0xFF80u);
  EXPECT_EQ(encode_binary32_bits(Format::bf16, 0xFF800000u, Overflow::saturate), 0xFF7Fu);
}

TEST(EncodeBinary32, SubnormalAndSmallBinary32InputsToFp8AndFp16) {
  EXPECT_EQ(encode_binary32_bits(Format::e4m3, 0x00000001u, Overflow::infinity), 0x00u);
  EXPECT_EQ(encode_binary32_bits(Format::e4m3, 0x80000001u, Overflow::infinity), 0x80u);
  EXPECT_EQ(encode_binary32_bits(Format::e5m2, 0x807FFFFFu, Overflow::saturate), 0x80u);
  EXPECT_EQ(encode_binary32_bits(Format::fp16, 0x00400000u, Overflow::infinity), 0x0000u);
  EXPECT_EQ(encode_binary32_bits(Format::e4m3, 0x3B000000u, Overflow::infinity), 0x01u);   // 2^-9
  EXPECT_EQ(encode_binary32_bits(Format::fp16, 0x33800000u, Overflow::infinity), 0x0001u); // 2^-24
  EXPECT_EQ(encode_binary32_bits(Format::fp16, 0x33000000u, Overflow::infinity), 0x0000u); // 2^-25
  EXPECT_EQ(encode_binary32_bits(Format::fp16, 0x33000001u, Overflow::infinity), 0x0001u);
  EXPECT_EQ(encode_binary32_bits(Format::e4m3, 0x43E80000u, Overflow::infinity), 0x7Eu); // 464
  EXPECT_EQ(encode_binary32_bits(Format::e4m3, 0x43E80001u, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(encode_binary32_bits(Format::e4m3, 0x43E80001u, Overflow::saturate), 0x7Eu);
}

TEST(EncodeBinary32, NanWithPayloadBecomesCanonicalNan) {
  for (std::uint32_t nan : {0x7FC00001u, 0x7F800001u, 0xFFC00000u, 0xFFFFFFFFu}) {
    for (Overflow ov : {Overflow::saturate, Overflow::infinity}) {
      EXPECT_EQ(encode_binary32_bits(Format::e4m3, nan, ov), 0x7Fu) << hex(nan);
      EXPECT_EQ(encode_binary32_bits(Format::e5m2, nan, ov), 0x7Fu) << hex(nan);
      EXPECT_EQ(encode_binary32_bits(Format::fp16, nan, ov), 0x7FFFu) << hex(nan);
      EXPECT_EQ(encode_binary32_bits(Format::bf16, nan, ov), 0x7FFFu) << hex(nan);
      EXPECT_EQ(encode_binary32_bits(Format::fp32, nan, ov), 0x7FFFFFFFu) << hex(nan);
    }
  }
}

TEST(EncodeBinary32, Fp32ToFp32IsIdentityForNonNan) {
  for (std::uint32_t c : {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu,
                          0x00800000u, 0x3F800000u, 0xBF800001u, 0x7F7FFFFFu, 0xFF7FFFFFu}) {
    EXPECT_EQ(encode_binary32_bits(Format::fp32, c, Overflow::infinity), c) << hex(c);
    EXPECT_EQ(encode_binary32_bits(Format::fp32, c, Overflow::saturate), c) << hex(c);
  }
  for (std::uint64_t c = 0; c <= 0xFFFFFFFFull; c += 65521) {
    const std::uint32_t code = static_cast<std::uint32_t>(c);
    if ((code & 0x7F800000u) == 0x7F800000u)
      continue; // Inf / NaN
    ASSERT_EQ(encode_binary32_bits(Format::fp32, code, Overflow::infinity), code) << hex(code);
  }
  EXPECT_EQ(encode_binary32_bits(Format::fp32, 0x7F800000u, Overflow::infinity), 0x7F800000u);
  EXPECT_EQ(encode_binary32_bits(Format::fp32, 0xFF800000u, Overflow::saturate), 0xFF7FFFFFu);
}

// ---- fp32 from binary64 ----------------------------------------------------------------

TEST(EncodeFP32, TieAtTwoToMinus150GoesToZero) {
  EXPECT_EQ(encode_binary64_bits(Format::fp32, 0x1p-150, Overflow::infinity), 0x00000000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, -0x1p-150, Overflow::infinity), 0x80000000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, std::nextafter(0x1p-150, 1.0), Overflow::infinity),
            0x00000001u);
}

TEST(EncodeFP32, TieAtThreeTimesTwoToMinus150GoesToEvenCode2) {
  EXPECT_EQ(encode_binary64_bits(Format::fp32, 3 * 0x1p-150, Overflow::infinity), 0x00000002u);
}

TEST(EncodeFP32, OnePlusHalfUlpTiesDownAndOnePlusThreeHalfUlpsTiesUp) {
  // ulp(1) = 2^-23: 1 + 2^-24 ties 1.0 (even) / 1 + 2^-23 -> 0x3F800000;
  // 1 + 3*2^-24 ties 1 + 2^-23 (odd) / 1 + 2^-22 (even) -> 0x3F800002.
  EXPECT_EQ(encode_binary64_bits(Format::fp32, 1.0 + 0x1p-24, Overflow::infinity), 0x3F800000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, 1.0 + 3 * 0x1p-24, Overflow::infinity), 0x3F800002u);
  EXPECT_EQ(
      encode_binary64_bits(Format::fp32, std::nextafter(1.0 + 0x1p-24, 2.0), Overflow::infinity),
      0x3F800001u);
}

TEST(EncodeFP32, SubnormalToNormalTieGoesToSmallestNormal) {
  // Largest subnormal 0x007FFFFF (odd) and 2^-126 (0x00800000) have midpoint 2^-126 - 2^-150.
  EXPECT_EQ(encode_binary64_bits(Format::fp32, 0x1p-126 - 0x1p-150, Overflow::infinity),
            0x00800000u);
}

TEST(EncodeFP32, DoubleMaxIsInfOrSaturatesToFloatMax) {
  EXPECT_EQ(encode_binary64_bits(Format::fp32, kDblMax, Overflow::infinity), 0x7F800000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, kDblMax, Overflow::saturate), 0x7F7FFFFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, -kDblMax, Overflow::infinity), 0xFF800000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, -kDblMax, Overflow::saturate), 0xFF7FFFFFu);
}

TEST(EncodeFP32, TieAboveFloatMaxOverflowsAndJustBelowStays) {
  // FLT_MAX = (2 - 2^-23) * 2^127, odd field; + half ulp (2^103) ties to 2^128: overflow.
  const long double fmax = std::ldexp(2.0L - std::ldexp(1.0L, -23), 127);
  const double tie = static_cast<double>(fmax + std::ldexp(1.0L, 103));
  EXPECT_EQ(encode_binary64_bits(Format::fp32, tie, Overflow::infinity), 0x7F800000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, tie, Overflow::saturate), 0x7F7FFFFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, std::nextafter(tie, 0.0), Overflow::infinity),
            0x7F7FFFFFu);
}

TEST(EncodeFP32, SpecialInputs) {
  EXPECT_EQ(encode_binary64_bits(Format::fp32, -0.0, Overflow::infinity), 0x80000000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, kInf, Overflow::saturate), 0x7F7FFFFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, -kInf, Overflow::infinity), 0xFF800000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, std::nan(""), Overflow::infinity), 0x7FFFFFFFu);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, kDblDenormMin, Overflow::infinity), 0x00000000u);
  EXPECT_EQ(encode_binary64_bits(Format::fp32, -kDblDenormMin, Overflow::infinity), 0x80000000u);
}

// ---- round_exact_bits with sticky ------------------------------------------------------

TEST(RoundExactSticky, TiePlusStickyRoundsUp) {
  // E4M3: 17 * 2^-4 = 1.0625 ties 0x38 / 0x39; even -> 0x38, with sticky -> 0x39.
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 17, -4, false, Overflow::infinity), 0x38u);
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 17, -4, true, Overflow::infinity), 0x39u);
  EXPECT_EQ(round_exact_bits(Format::e4m3, true, 17, -4, true, Overflow::infinity), 0xB9u);
  // fp32: (2^24 + 1) * 2^-24 ties 1.0 / 1 + 2^-23.
  EXPECT_EQ(round_exact_bits(Format::fp32, false, (1u << 24) + 1, -24, false, Overflow::infinity),
            0x3F800000u);
  EXPECT_EQ(round_exact_bits(Format::fp32, false, (1u << 24) + 1, -24, true, Overflow::infinity),
            0x3F800001u);
  // Subnormal tie: 2^-10 in E4M3 is half the smallest subnormal; plus sticky -> 0x01.
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 1, -10, false, Overflow::infinity), 0x00u);
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 1, -10, true, Overflow::infinity), 0x01u);
}

TEST(RoundExactSticky, StickyBelowHalfDoesNotRoundUp) {
  // 33 * 2^-5 = 1.03125: a quarter ulp above 1.0; sticky keeps it below the tie.
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 33, -5, true, Overflow::infinity), 0x38u);
  // A tie that already rounds up stays up with sticky: 19 * 2^-4 = 1.1875 -> 0x3A.
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 19, -4, true, Overflow::infinity), 0x3Au);
}

TEST(RoundExactSticky, TieAt464PlusStickyOverflows) {
  // 29 * 2^4 = 464: tie -> 448 (0x7E); with sticky it is above the tie -> overflow.
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 29, 4, false, Overflow::infinity), 0x7Eu);
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 29, 4, true, Overflow::infinity), 0x7Fu);
  EXPECT_EQ(round_exact_bits(Format::e4m3, false, 29, 4, true, Overflow::saturate), 0x7Eu);
}

TEST(RoundExactSticky, WideSignificandsRoundCorrectly) {
  // sig with 64 significant bits: (2^63 + 2^39) * 2^-63 = 1 + 2^-24 ties to 1.0 in fp32;
  // one more unit of sig (or sticky) rounds up.
  const std::uint64_t s = (std::uint64_t{1} << 63) | (std::uint64_t{1} << 39);
  EXPECT_EQ(round_exact_bits(Format::fp32, false, s, -63, false, Overflow::infinity), 0x3F800000u);
  EXPECT_EQ(round_exact_bits(Format::fp32, false, s + 1, -63, false, Overflow::infinity),
            0x3F800001u);
  EXPECT_EQ(round_exact_bits(Format::fp32, false, s, -63, true, Overflow::infinity), 0x3F800001u);
  // Zero significand: a signed zero.
  EXPECT_EQ(round_exact_bits(Format::e5m2, true, 0, 0, false, Overflow::infinity), 0x80u);
}

TEST(RoundExactSticky, DroppingSixtyFourOrMoreBitsRoundsByHalf) {
  // sig = 2^63 at exp = -63 - 149 - 1 is exactly 2^-150 in fp32: r = 64 dropped bits, a tie.
  const std::uint64_t h = std::uint64_t{1} << 63;
  EXPECT_EQ(round_exact_bits(Format::fp32, false, h, -213, false, Overflow::infinity), 0x0u);
  EXPECT_EQ(round_exact_bits(Format::fp32, false, h, -213, true, Overflow::infinity), 0x1u);
  EXPECT_EQ(round_exact_bits(Format::fp32, false, h + 1, -213, false, Overflow::infinity), 0x1u);
  // 2^63 * 2^-214 = 2^-151: a quarter of the smallest subnormal -> 0 even with sticky.
  EXPECT_EQ(round_exact_bits(Format::fp32, false, h, -214, true, Overflow::infinity), 0x0u);
}

} // namespace
