// SPDX-License-Identifier: BSD-2-Clause
// The block-FMA chain (block-fma.md) against an independent binary64 derivation
// (ref_chain.hpp) and against hand-derived bit patterns.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/warnings.hpp"
#include "ref_chain.hpp"

using mmaemu::Format;
using mmaemu::Mismatch;
using mmaemu::Preset;
using mmaemu::model::dot;
using mmaemu::model::FormatPair;

namespace {

reftest::Params params_of(const Preset& p) {
  return {p.nfma, p.frac, p.frac_out, p.rounding == mmaemu::BlockRounding::nearest_even, p.min_exp};
}

const reftest::Fmt& ref_fmt(Format f) {
  return f == Format::e5m2 ? reftest::kE5M2 : reftest::kE4M3;
}

bool finite_code(Format f, std::uint8_t c) {
  bool fin = true;
  reftest::value(ref_fmt(f), c, &fin);
  return fin;
}

// Expects equal binary32 bits through the project's comparator.
::testing::AssertionResult same_bits(std::uint32_t expected, std::uint32_t actual) {
  const Mismatch m = mmaemu::compare_bits(expected, actual, Format::fp32);
  if (m == Mismatch::none)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mmaemu::mismatch_name(m) << ": expected "
         << mmaemu::decompose_bits(expected, Format::fp32) << " actual "
         << mmaemu::decompose_bits(actual, Format::fp32);
}

const Preset& preset(const char* name) {
  mmaemu::set_warning_sink([](const mmaemu::Warning&) {});
  return mmaemu::get_preset(name);
}

struct PairCase {
  const char* preset;
  Format fa, fb;
};

class AllCodePairs : public ::testing::TestWithParam<PairCase> {};

// Every one of the 256 x 256 code pairs as a one-term chain from +0 and from a nonzero c.
TEST_P(AllCodePairs, OneTermChainMatchesIndependentFormula) {
  const PairCase pc = GetParam();
  const Preset& p = preset(pc.preset);
  const reftest::Params rp = params_of(p);
  const std::uint32_t cs[] = {0x00000000u, 0x3f800000u /*1.0*/, 0xbe2aaaabu /*-1/6*/};
  int checked = 0;
  for (std::uint32_t c : cs) {
    for (int x = 0; x < 256; ++x) {
      if (!finite_code(pc.fa, static_cast<std::uint8_t>(x)))
        continue;
      for (int y = 0; y < 256; ++y) {
        if (!finite_code(pc.fb, static_cast<std::uint8_t>(y)))
          continue;
        const std::vector<std::uint8_t> a{static_cast<std::uint8_t>(x)};
        const std::vector<std::uint8_t> b{static_cast<std::uint8_t>(y)};
        const std::uint32_t want = reftest::chain(ref_fmt(pc.fa), ref_fmt(pc.fb), a, b, c, rp);
        const std::uint32_t got = dot(a, b, c, p, FormatPair{pc.fa, pc.fb});
        ASSERT_TRUE(same_bits(want, got))
            << "a=0x" << std::hex << x << " b=0x" << y << " c=0x" << c;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 3 * 240 * 240);
}

INSTANTIATE_TEST_SUITE_P(Presets, AllCodePairs,
                         ::testing::Values(PairCase{"ada", Format::e4m3, Format::e4m3},
                                           PairCase{"ada", Format::e5m2, Format::e5m2},
                                           PairCase{"ada", Format::e4m3, Format::e5m2},
                                           PairCase{"hopper", Format::e4m3, Format::e4m3},
                                           PairCase{"hopper", Format::e5m2, Format::e5m2},
                                           PairCase{"hopper", Format::e5m2, Format::e4m3},
                                           PairCase{"b200_mma_sync", Format::e4m3, Format::e4m3},
                                           PairCase{"b200_mma_sync", Format::e5m2, Format::e5m2}),
                         [](const auto& info) {
                           return std::string(info.param.preset) + "_" +
                                  mmaemu::format_name(info.param.fa) + "_" +
                                  mmaemu::format_name(info.param.fb);
                         });

struct ChainCase {
  const char* preset;
  Format fa, fb;
  std::size_t K;
};

class SeededChains : public ::testing::TestWithParam<ChainCase> {};

// Seeded random codes (finite) and c, across block boundaries.
TEST_P(SeededChains, ChainMatchesIndependentFormula) {
  const ChainCase cc = GetParam();
  const Preset& p = preset(cc.preset);
  const std::uint64_t seed = 0x5EED0000u + cc.K;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint8_t> a(cc.K), b(cc.K);
    for (std::size_t k = 0; k < cc.K; ++k) {
      do
        a[k] = static_cast<std::uint8_t>(rng());
      while (!finite_code(cc.fa, a[k]));
      do
        b[k] = static_cast<std::uint8_t>(rng());
      while (!finite_code(cc.fb, b[k]));
      // Narrow some trials to one binade to provoke cancellation.
      if (trial % 3 == 0)
        a[k] = static_cast<std::uint8_t>((a[k] & 0x87u) | 0x38u);
    }
    std::uint32_t c = static_cast<std::uint32_t>(rng());
    if (((c >> 23) & 0xFFu) == 0xFFu)
      c &= 0xBFFFFFFFu; // keep c finite
    if (trial % 4 == 0)
      c = 0;
    if (trial % 4 == 1)
      c = (c & 0x807FFFFFu) | (static_cast<std::uint32_t>(120 + trial % 16) << 23);
    const std::uint32_t want =
        reftest::chain(ref_fmt(cc.fa), ref_fmt(cc.fb), a, b, c, params_of(p));
    const std::uint32_t got = dot(a, b, c, p, FormatPair{cc.fa, cc.fb});
    ASSERT_TRUE(same_bits(want, got)) << "trial " << trial;
  }
}

std::vector<ChainCase> chain_cases() {
  std::vector<ChainCase> v;
  for (const char* pr : {"ada", "hopper", "b200_mma_sync"}) {
    for (std::size_t K : {0, 1, 15, 16, 17, 31, 32, 33, 1000}) {
      v.push_back({pr, Format::e4m3, Format::e4m3, K});
      v.push_back({pr, Format::e5m2, Format::e4m3, K});
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Presets, SeededChains, ::testing::ValuesIn(chain_cases()),
                         [](const auto& info) {
                           return std::string(info.param.preset) + "_" +
                                  mmaemu::format_name(info.param.fa) + "_" +
                                  mmaemu::format_name(info.param.fb) + "_K" +
                                  std::to_string(info.param.K);
                         });

// Hand-derived cases. E4M3 codes: 0x38 = 1.0, 0xb8 = -1.0, 0x01 = 2^-9, 0x08 = 2^-6,
// 0x48 = 2.0, 0x7e = 448, 0x20 = 2^-3.

TEST(BlockFma, CancellationInsideBlockTruncatesSmallTermToPlusZero) {
  // 1*1 - 1*1 + 2^-9 * 2^-6: E = 0, the small term 2^-15 is below 2^(0-13) and truncates to 0.
  // The exact sum would be 2^-15; the block gives +0.
  const std::vector<std::uint8_t> a{0x38, 0xb8, 0x01};
  const std::vector<std::uint8_t> b{0x38, 0x38, 0x08};
  EXPECT_TRUE(same_bits(0x00000000u, dot(a, b, 0u, preset("hopper"))));
  EXPECT_TRUE(same_bits(0x00000000u, dot(a, b, 0u, preset("ada"))));
}

TEST(BlockFma, OneExponentPerBlockAdaAlignsEachBlockSeparately) {
  // ada: 16-term blocks. Block 1 = 448*1 + 2^-9*2^-6 -> E = 8, 2^-15 truncates away -> 448.
  // Block 2 = (c = 448) + 0.125*1: E = 8, 2^-3 is a multiple of 2^(8-13) -> 448.125, which
  // needs 12 fraction bits: kept (frac_out 13).
  std::vector<std::uint8_t> a(32, 0x00), b(32, 0x00);
  a[0] = 0x7e;
  b[0] = 0x38;
  a[1] = 0x01;
  b[1] = 0x08;
  a[16] = 0x20;
  b[16] = 0x38;
  // 448.125 = 1.75048828125 * 2^8: binary32 exponent 135 (0x87), fraction 0.75048828125 * 2^23
  // = 0x601000 -> 0x43e01000.
  EXPECT_TRUE(same_bits(0x43e01000u, dot(a, b, 0u, preset("ada"))));
  // hopper: one 32-term block holds all three terms with E = 8: same result.
  EXPECT_TRUE(same_bits(0x43e01000u, dot(a, b, 0u, preset("hopper"))));
}

TEST(BlockFma, BlockResultIsTruncatedToFracOutBits) {
  // 1*1 + 2^-9*2^-3 = 1 + 2^-12 ... E = 0, term 2^-12 is a multiple of 2^-13: exact.
  // 1 + 2^-14 would need 14 bits: the term is truncated to 0 at alignment (2^-14 < 2^-13).
  const std::vector<std::uint8_t> a{0x38, 0x01};
  const std::vector<std::uint8_t> b{0x38, 0x20};
  EXPECT_TRUE(same_bits(0x3f800800u, dot(a, b, 0u, preset("hopper")))); // 1 + 2^-12
  const std::vector<std::uint8_t> b2{0x38, 0x08};                       // 2^-9 * 2^-6
  EXPECT_TRUE(same_bits(0x3f800000u, dot(a, b2, 0u, preset("hopper"))));
}

TEST(BlockFma, SubnormalProductKeepsMinExponent) {
  // 2^-9 * 2^-9: both operands keep ea = emin = -6, so E = -12 and the term 2^-18 is exact.
  const std::vector<std::uint8_t> a{0x01};
  const std::vector<std::uint8_t> b{0x01};
  EXPECT_TRUE(same_bits(0x36800000u, dot(a, b, 0u, preset("hopper")))); // 2^-18
  // 3*2^-9 (0x03) * 1.875 (0x3f): E = -6 + 0 = -6; term 5.625 * 2^-9 = 45 * 2^-12 is exact.
  const std::vector<std::uint8_t> a2{0x03};
  const std::vector<std::uint8_t> b2{0x3f};
  // 45 * 2^-12 = 1.40625 * 2^-7: exponent 120 (0x78), fraction 0.40625 * 2^23 = 0x340000.
  EXPECT_TRUE(same_bits(0x3c340000u, dot(a2, b2, 0u, preset("ada"))));
}

TEST(BlockFma, MinExpBoundsTheAlignmentExponent) {
  // A custom preset with min_exp = 0: the term 2^-18 lies below 2^(0 - 13) and vanishes.
  const Preset p =
      mmaemu::make_custom_preset("minexp0", 32, 13, 13, mmaemu::BlockRounding::toward_zero, 0);
  const std::vector<std::uint8_t> a{0x01};
  const std::vector<std::uint8_t> b{0x01};
  EXPECT_TRUE(same_bits(0x00000000u, dot(a, b, 0u, p)));
  // With min_exp = -20 the same term survives.
  const Preset q =
      mmaemu::make_custom_preset("minexp20", 32, 13, 13, mmaemu::BlockRounding::toward_zero, -20);
  EXPECT_TRUE(same_bits(0x36800000u, dot(a, b, 0u, q)));
}

TEST(BlockFma, NegativeZeroCIsNoTermAndZeroSumIsPlusZero) {
  const std::vector<std::uint8_t> a{0x00, 0x80};
  const std::vector<std::uint8_t> b{0x38, 0xb8};
  EXPECT_TRUE(same_bits(0x00000000u, dot(a, b, 0x80000000u, preset("ada"))));
  const std::vector<std::uint8_t> one{0x38};
  const std::vector<std::uint8_t> neg{0xb8};
  EXPECT_TRUE(same_bits(0xbf800000u, dot(one, neg, 0x80000000u, preset("hopper"))));
  // -1 + 1 cancels exactly: +0, never -0.
  EXPECT_TRUE(same_bits(0x00000000u, dot(one, neg, 0x3f800000u, preset("hopper"))));
}

TEST(BlockFma, EmptyChainReturnsC) {
  const std::vector<std::uint8_t> none;
  EXPECT_TRUE(same_bits(0x80000000u, dot(none, none, 0x80000000u, preset("ada"))));
  EXPECT_TRUE(same_bits(0x3f800000u, dot(none, none, 0x3f800000u, preset("hopper"))));
}

TEST(BlockFma, CEntersTheAlignmentOfTheFirstBlock) {
  // ada: c = 2^20 dominates: E = 20 and 1*1 lies below 2^(20-13), so it truncates to 0 and
  // the result is c itself.
  const std::vector<std::uint8_t> one{0x38};
  EXPECT_TRUE(same_bits(0x49800000u, dot(one, one, 0x49800000u, preset("ada"))));
  // c = 2^12: E = 12, 1 is a multiple of 2^(12-13): 4097 = 2^12 * (1 + 2^-12) exactly, whose
  // binary32 fraction field is 2^(23-12) = 0x800.
  EXPECT_TRUE(same_bits(0x45800800u, dot(one, one, 0x45800000u, preset("ada"))));
}

TEST(BlockFma, PaddingWithZeroPairsChangesNothing) {
  std::mt19937_64 rng(17);
  for (int t = 0; t < 100; ++t) {
    std::vector<std::uint8_t> a(17), b(17);
    for (auto& v : a)
      v = static_cast<std::uint8_t>(rng() & 0x7e);
    for (auto& v : b)
      v = static_cast<std::uint8_t>(rng() & 0xfe);
    std::vector<std::uint8_t> ap = a, bp = b;
    ap.resize(32, 0x00);
    bp.resize(32, 0x80);
    EXPECT_TRUE(same_bits(dot(ap, bp, 0u, preset("ada")), dot(a, b, 0u, preset("ada"))));
  }
}

TEST(BlockFma, LateCAddsCAfterTheProductSum) {
  // late_c: products aligned without c. c = 2^20, product 1 -> exact sum 2^20 + 1 needs 20
  // fraction bits; frac_out = 23 keeps it: 0x49800008.
  const Preset p = mmaemu::make_custom_preset("late", 32, 13, 23,
                                              mmaemu::BlockRounding::toward_zero, -133, true);
  const std::vector<std::uint8_t> one{0x38};
  EXPECT_TRUE(same_bits(0x49800008u, dot(one, one, 0x49800000u, p)));
  // With c inside the alignment (late_c false) the product truncates away.
  const Preset q = mmaemu::make_custom_preset("early", 32, 13, 23,
                                              mmaemu::BlockRounding::toward_zero, -133, false);
  EXPECT_TRUE(same_bits(0x49800000u, dot(one, one, 0x49800000u, q)));
  // late_c, opposite signs far apart: -(2^20) + 2^-9*2^-9 truncates toward zero to just
  // below 2^20 in magnitude: 2^20 - 2^-3 (23 fraction bits at exponent 19) = 0xc97fffff.
  const std::vector<std::uint8_t> tiny{0x01};
  EXPECT_TRUE(same_bits(0xc97fffffu, dot(tiny, tiny, 0xc9800000u, p)));
}

// The non-finite rule (a specified rule, not a hardware fact). E5M2: 0x7c = +Inf,
// 0xfc = -Inf, 0x7d = NaN, 0x3c = 1.0. E4M3: 0x7f = NaN.
TEST(NonFinite, NanOperandGivesCanonicalNaN) {
  const std::vector<std::uint8_t> a{0x38, 0x7f};
  const std::vector<std::uint8_t> b{0x38, 0x38};
  EXPECT_TRUE(same_bits(0x7fffffffu, dot(a, b, 0u, preset("ada"))));
  const std::vector<std::uint8_t> c{0x3c, 0xfd};
  EXPECT_TRUE(
      same_bits(0x7fffffffu, dot(c, c, 0u, preset("hopper"), {Format::e5m2, Format::e5m2})));
}

TEST(NonFinite, InfTimesZeroGivesCanonicalNaN) {
  const std::vector<std::uint8_t> a{0x7c};
  const std::vector<std::uint8_t> b{0x80};
  EXPECT_TRUE(same_bits(0x7fffffffu, dot(a, b, 0u, preset("ada"), {Format::e5m2, Format::e5m2})));
}

TEST(NonFinite, OppositeInfinitiesGiveCanonicalNaN) {
  const std::vector<std::uint8_t> a{0x7c, 0x7c};
  const std::vector<std::uint8_t> b{0x3c, 0xbc};
  EXPECT_TRUE(same_bits(0x7fffffffu, dot(a, b, 0u, preset("ada"), {Format::e5m2, Format::e5m2})));
  // +Inf product meeting c = -Inf.
  const std::vector<std::uint8_t> one{0x7c};
  const std::vector<std::uint8_t> pos{0x3c};
  EXPECT_TRUE(same_bits(0x7fffffffu,
                        dot(one, pos, 0xff800000u, preset("ada"), {Format::e5m2, Format::e5m2})));
}

TEST(NonFinite, InfOperandGivesInfOfProductSign) {
  const std::vector<std::uint8_t> a{0x7c, 0x3c};
  const std::vector<std::uint8_t> b{0xbc, 0x3c};
  EXPECT_TRUE(
      same_bits(0xff800000u, dot(a, b, 0u, preset("hopper"), {Format::e5m2, Format::e5m2})));
  // E4M3 x E5M2 mixed: 448 * +Inf = +Inf.
  const std::vector<std::uint8_t> x{0x7e};
  const std::vector<std::uint8_t> y{0x7c};
  EXPECT_TRUE(same_bits(0x7f800000u, dot(x, y, 0u, preset("ada"), {Format::e4m3, Format::e5m2})));
}

TEST(NonFinite, NanCGivesCanonicalNaN) {
  const std::vector<std::uint8_t> one{0x38};
  EXPECT_TRUE(same_bits(0x7fffffffu, dot(one, one, 0xffc00001u, preset("ada"))));
}

TEST(Dot, RejectsMismatchedLengthsAndNonFp8Formats) {
  const std::vector<std::uint8_t> a{0x38, 0x38};
  const std::vector<std::uint8_t> b{0x38};
  EXPECT_THROW(dot(a, b, 0u, preset("ada")), mmaemu::ValueError);
  EXPECT_THROW(dot(b, b, 0u, preset("ada"), {Format::fp16, Format::e4m3}), mmaemu::ValueError);
}

// A block result beyond the binary32 range is +-Inf, and an Inf ends the chain (block-fma.md,
// step 7 and "the chain over K"). FP8 products cannot get there (the largest, E5M2
// 57344^2 < 2^32, is far below 2^128), so only c near FLT_MAX in model::dot reaches it, and
// only with rounding to nearest: toward zero never rounds up past FLT_MAX. The expected bits
// are derived by hand:
//   c = FLT_MAX = 0x7f7fffff = (2 - 2^-23) * 2^127, preset nfma 16, frac 24, frac_out 13,
//   nearest even, min_exp -132, c in the alignment.
//   Block 1 (a[0] * b[0] = 1.0 * 1.0, the rest zero pairs): E = max(127, 0, -132) = 127.
//     c: t = floor((2 - 2^-23) * 2^(127 - 127 + 24)) = 2^25 - 2 (exact: c has 24 bits);
//     1.0: t = floor(1 * 2^(0 - 127 + 24)) = floor(2^-103) = 0.
//     S = 2^25 - 2, value S * 2^(127 - 24) = (2 - 2^-23) * 2^127 = 1.(23 ones)b * 2^127.
//     Rounded to 13 fraction bits: the 10 dropped bits are all ones, more than half an ulp,
//     so it rounds up to 2.0 * 2^127 = 2^128 > FLT_MAX: +Inf = 0x7f800000.
//   Block 2 (a[16] * b[16] = -448 * 448 = -200704, the rest zero pairs) would not change it:
//     the chain ends at the Inf.
//   With c = -FLT_MAX every sign flips: -Inf = 0xff800000.
TEST(Overflow, BlockResultBeyondBinary32IsInfAndEndsTheChain) {
  const Preset p = mmaemu::make_custom_preset("rne_wide", 16, 24, 13,
                                              mmaemu::BlockRounding::nearest_even, -132, false);
  std::vector<std::uint8_t> a(32, 0x00), b(32, 0x00);
  a[0] = b[0] = 0x38; // 1.0 (E4M3)
  a[16] = 0xfe;       // -448
  b[16] = 0x7e;       // 448
  EXPECT_TRUE(same_bits(0x7f800000u, dot(a, b, 0x7f7fffffu, p)));
  EXPECT_TRUE(same_bits(0xff800000u, dot(a, b, 0xff7fffffu, p)));
  // One block on its own gives the same Inf: the block itself overflows.
  const std::vector<std::uint8_t> one_a(a.begin(), a.begin() + 16),
      one_b(b.begin(), b.begin() + 16);
  EXPECT_TRUE(same_bits(0x7f800000u, dot(one_a, one_b, 0x7f7fffffu, p)));
  // Just inside the range: c = 0x7f7ff000 = 1.(11 ones)b * 2^127 has 11 fraction bits, so
  // rounding to 13 keeps it, and 1.0 truncates away as above: the same bits come back.
  EXPECT_TRUE(same_bits(0x7f7ff000u, dot(a, b, 0x7f7ff000u, p)));
  // Toward zero (ada's rounding) never overflows: FLT_MAX truncates to 13 fraction bits,
  // (2 - 2^-13) * 2^127 = 0x7f7ffc00, and -448 * 448 in block 2 truncates away
  // (t = floor(1.75^2 * 2^(16 - 127 + 13)) = 0).
  EXPECT_TRUE(same_bits(0x7f7ffc00u, dot(a, b, 0x7f7fffffu, preset("ada"))));
}

// The same through the late-c path (c added after the product sum, exactly, then rounded):
//   preset nfma 16, frac 13, frac_out 13, nearest even, min_exp -132, late_c.
//   Products 1.0 * 1.0: E = max(0, -132) = 0, t = floor(1 * 2^13) = 2^13, S * 2^-13 = 1.0.
//   FLT_MAX + 1.0 exactly = (2 - 2^-23) * 2^127 + 1, rounded to 13 fraction bits at
//   exponent 127: the dropped part (2^-13 - 2^-23) * 2^127 + 1 is above half an ulp
//   (2^-14 * 2^127), so it rounds up to 2^128: +Inf = 0x7f800000.
TEST(Overflow, LateCOverflowIsInf) {
  const Preset p = mmaemu::make_custom_preset("rne_late", 16, 13, 13,
                                              mmaemu::BlockRounding::nearest_even, -132, true);
  const std::vector<std::uint8_t> one{0x38};
  EXPECT_TRUE(same_bits(0x7f800000u, dot(one, one, 0x7f7fffffu, p)));
  const std::vector<std::uint8_t> minus_one{0xb8};
  EXPECT_TRUE(same_bits(0xff800000u, dot(minus_one, one, 0xff7fffffu, p)));
}

} // namespace
