// SPDX-License-Identifier: BSD-2-Clause
// The block-FMA chain (block-fma.md) against an independent binary64 derivation
// (ref_chain.hpp) and against hand-derived bit patterns.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "../src/dot_f32.hpp"
#include "mmaemu/emulator/block_fma.hpp"
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

// The compiled variants of block_fma (BlockKernel) against the independent derivation and
// against each other. dot uses the fastest one the CPU has; these tests also run the others,
// so that a variant this machine does not pick by itself is still checked.

using mmaemu::model::BlockContext;
using mmaemu::model::BlockKernel;

std::vector<BlockKernel> kernels() {
  std::vector<BlockKernel> v{BlockKernel::baseline, BlockKernel::wide};
  if (mmaemu::model::block_kernel_supported(BlockKernel::avx2))
    v.push_back(BlockKernel::avx2);
  return v;
}

const char* kernel_name(BlockKernel k) {
  switch (k) {
  case BlockKernel::baseline:
    return "baseline";
  case BlockKernel::wide:
    return "wide";
  case BlockKernel::avx2:
    return "avx2";
  default:
    return "automatic";
  }
}

// The chain of block-fma.md over one kernel variant, without the non-finite rule: NaN and Inf
// codes count as zeros and set `nonfinite`.
std::uint32_t chain_with(BlockKernel k, const Preset& p, FormatPair fmt,
                         const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                         std::uint32_t c, bool& nonfinite) {
  const BlockContext ctx(fmt.a, fmt.b, p);
  for (std::size_t k0 = 0; k0 < a.size(); k0 += static_cast<std::size_t>(p.nfma)) {
    const int n = static_cast<int>(std::min<std::size_t>(p.nfma, a.size() - k0));
    c = mmaemu::model::block_fma(k, ctx, a.data() + k0, b.data() + k0, n, c, nonfinite);
  }
  return c;
}

// Codes that provoke the edge cases of a format: +-0, the smallest and largest subnormals,
// the smallest normal, +-1, the largest finite magnitude (448 or 57344).
std::vector<std::uint8_t> edge_codes(Format f) {
  if (f == Format::e5m2)
    return {0x00, 0x80, 0x01, 0x81, 0x03, 0x83, 0x04, 0x84, 0x3c, 0xbc, 0x7b, 0xfb, 0x3d, 0x42};
  return {0x00, 0x80, 0x01, 0x81, 0x07, 0x87, 0x08, 0x88, 0x38, 0xb8, 0x7e, 0xfe, 0x39, 0x47};
}

std::vector<std::uint8_t> nonfinite_codes(Format f) {
  if (f == Format::e5m2)
    return {0x7c, 0xfc, 0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}; // +-Inf and NaNs
  return {0x7f, 0xff};                                       // E4M3 (fn): NaNs only
}

std::uint8_t random_finite(std::mt19937_64& rng, Format f) {
  std::uint8_t v;
  do
    v = static_cast<std::uint8_t>(rng());
  while (!finite_code(f, v));
  return v;
}

// One random chain of K pairs in one of several shapes (mode).
void make_chain(std::mt19937_64& rng, FormatPair fmt, std::size_t K, int mode,
                std::vector<std::uint8_t>& a, std::vector<std::uint8_t>& b) {
  a.assign(K, 0);
  b.assign(K, 0);
  const auto ea = edge_codes(fmt.a);
  const auto eb = edge_codes(fmt.b);
  for (std::size_t k = 0; k < K; ++k) {
    switch (mode) {
    case 0: // uniform finite codes
      a[k] = random_finite(rng, fmt.a);
      b[k] = random_finite(rng, fmt.b);
      break;
    case 1: // edge codes only
      a[k] = ea[rng() % ea.size()];
      b[k] = eb[rng() % eb.size()];
      break;
    case 2: // subnormal operands (codes with a zero exponent field), some zero
      a[k] = static_cast<std::uint8_t>(rng() & (fmt.a == Format::e5m2 ? 0x83u : 0x87u));
      b[k] = static_cast<std::uint8_t>(rng() & (fmt.b == Format::e5m2 ? 0x83u : 0x87u));
      break;
    default: // pairs that cancel exactly: x*y then x*(-y)
      if (k % 2 == 0) {
        a[k] = random_finite(rng, fmt.a);
        b[k] = random_finite(rng, fmt.b);
      } else {
        a[k] = a[k - 1];
        b[k] = static_cast<std::uint8_t>(b[k - 1] ^ 0x80u);
      }
      break;
    }
  }
}

// c values for chains compared with the reference: +-0, +-1, random finite values whose
// exponent is at least -80 (a block holding only zero pairs and a c below about 2^-85 is
// where the emulator and the reference differ on purpose: see the report in dot-speed's
// history), values near the top of the binary32 range.
std::uint32_t random_c(std::mt19937_64& rng) {
  switch (rng() % 6) {
  case 0:
    return 0u;
  case 1:
    return 0x80000000u;
  case 2:
    return (rng() & 1) ? 0x3f800000u : 0xbf800000u;
  case 3:
    return static_cast<std::uint32_t>(rng() & 0x807FFFFFu) | 0x7f000000u; // 2^127 binade
  default: {
    const auto exp = static_cast<std::uint32_t>(47 + rng() % 200); // unbiased -80 .. 119
    return static_cast<std::uint32_t>(rng() & 0x807FFFFFu) | (exp << 23);
  }
  }
}

struct KernelCase {
  const char* preset;
  Format fa, fb;
};

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> v;
  for (const char* pr :
       {"ada", "hopper", "b200_mma_sync", "narrow_rne", "frac20", "frac21", "frac0", "nfma256"}) {
    v.push_back({pr, Format::e4m3, Format::e4m3});
    v.push_back({pr, Format::e5m2, Format::e5m2});
    v.push_back({pr, Format::e4m3, Format::e5m2});
    v.push_back({pr, Format::e5m2, Format::e4m3});
  }
  return v;
}

// The presets of kernel_cases: the built-in ones and custom ones at the edges of the 32-bit
// kernels (frac 20 is the widest 32-bit case, 21 the narrowest 64-bit one), rounding to
// nearest with few output bits (so that FLT_MAX rounds up to Inf), and the largest block.
const Preset& kernel_preset(const std::string& name) {
  using mmaemu::BlockRounding;
  static const Preset narrow_rne =
      mmaemu::make_custom_preset("narrow_rne", 16, 13, 10, BlockRounding::nearest_even, -132);
  static const Preset frac20 =
      mmaemu::make_custom_preset("frac20", 32, 20, 23, BlockRounding::toward_zero, -133);
  static const Preset frac21 =
      mmaemu::make_custom_preset("frac21", 32, 21, 23, BlockRounding::nearest_even, -133);
  static const Preset frac0 =
      mmaemu::make_custom_preset("frac0", 8, 0, 5, BlockRounding::toward_zero, -160);
  static const Preset nfma256 =
      mmaemu::make_custom_preset("nfma256", 256, 20, 23, BlockRounding::nearest_even, -133);
  if (name == "narrow_rne")
    return narrow_rne;
  if (name == "frac20")
    return frac20;
  if (name == "frac21")
    return frac21;
  if (name == "frac0")
    return frac0;
  if (name == "nfma256")
    return nfma256;
  return preset(name.c_str());
}

class KernelVariants : public ::testing::TestWithParam<KernelCase> {};

// Random and adversarial finite chains (K not a multiple of the block too): every kernel
// variant gives the reference's bits.
TEST_P(KernelVariants, EveryVariantMatchesIndependentFormula) {
  const KernelCase kc = GetParam();
  const Preset& p = kernel_preset(kc.preset);
  const FormatPair fmt{kc.fa, kc.fb};
  const std::uint64_t seed = 0xB10C0000u + static_cast<std::uint64_t>(p.nfma) * 7 + p.frac;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> a, b;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t Ks[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 257};
    const std::size_t K = Ks[static_cast<std::size_t>(trial) % std::size(Ks)];
    make_chain(rng, fmt, K, trial % 4, a, b);
    const std::uint32_t c = random_c(rng);
    const std::uint32_t want =
        reftest::chain(ref_fmt(kc.fa), ref_fmt(kc.fb), a, b, c, params_of(p));
    for (BlockKernel k : kernels()) {
      bool nonfinite = false;
      const std::uint32_t got = chain_with(k, p, fmt, a, b, c, nonfinite);
      ASSERT_TRUE(same_bits(want, got))
          << kernel_name(k) << " trial " << trial << " K " << K << " c=0x" << std::hex << c;
      ASSERT_FALSE(nonfinite) << kernel_name(k) << " trial " << trial;
    }
  }
}

// Late c (not in the reference) and the tiny c values left out above: the variants agree
// with the 64-bit kernel, which is the arithmetic of block-fma.md without any narrowing.
TEST_P(KernelVariants, EveryVariantMatchesWideKernelWithLateCAndTinyC) {
  const KernelCase kc = GetParam();
  const Preset& base = kernel_preset(kc.preset);
  const Preset late = mmaemu::make_custom_preset("late", base.nfma, base.frac, base.frac_out,
                                                 base.rounding, base.min_exp, true);
  const FormatPair fmt{kc.fa, kc.fb};
  std::mt19937_64 rng(0x7A7E0000u + static_cast<std::uint64_t>(base.frac));
  std::vector<std::uint8_t> a, b;
  for (int trial = 0; trial < 200; ++trial) {
    const Preset& p = trial % 2 ? late : base;
    make_chain(rng, fmt, 1 + rng() % 70, trial % 4, a, b);
    std::uint32_t c = random_c(rng);
    if (trial % 3 == 0)
      c = static_cast<std::uint32_t>(rng() & 0x80FFFFFFu); // subnormal or tiny normal
    bool nf_wide = false;
    const std::uint32_t want = chain_with(BlockKernel::wide, p, fmt, a, b, c, nf_wide);
    for (BlockKernel k : kernels()) {
      bool nonfinite = false;
      ASSERT_TRUE(same_bits(want, chain_with(k, p, fmt, a, b, c, nonfinite)))
          << kernel_name(k) << " trial " << trial << " late_c " << p.late_c;
    }
  }
}

// NaN and Inf codes anywhere in a block count as zeros in every variant and are reported.
TEST_P(KernelVariants, NonFiniteCodesCountAsZerosAndAreReported) {
  const KernelCase kc = GetParam();
  const Preset& p = kernel_preset(kc.preset);
  const FormatPair fmt{kc.fa, kc.fb};
  std::mt19937_64 rng(0x4A4E0000u + static_cast<std::uint64_t>(p.nfma));
  const auto na = nonfinite_codes(kc.fa);
  const auto nb = nonfinite_codes(kc.fb);
  std::vector<std::uint8_t> a, b;
  for (int trial = 0; trial < 100; ++trial) {
    make_chain(rng, fmt, 1 + rng() % 40, trial % 4, a, b);
    std::vector<std::uint8_t> a2 = a, b2 = b;
    const std::size_t at = rng() % a.size();
    // The zero code of the same operand: its table entry has the same (zero) term.
    if (rng() & 1) {
      a2[at] = na[rng() % na.size()];
      a[at] = 0x00;
    } else {
      b2[at] = nb[rng() % nb.size()];
      b[at] = 0x00;
    }
    const std::uint32_t c = random_c(rng);
    bool nf_zero = false;
    const std::uint32_t want = chain_with(BlockKernel::wide, p, fmt, a, b, c, nf_zero);
    ASSERT_FALSE(nf_zero);
    for (BlockKernel k : kernels()) {
      bool nonfinite = false;
      ASSERT_TRUE(same_bits(want, chain_with(k, p, fmt, a2, b2, c, nonfinite)))
          << kernel_name(k) << " trial " << trial;
      ASSERT_TRUE(nonfinite) << kernel_name(k) << " trial " << trial;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, KernelVariants, ::testing::ValuesIn(kernel_cases()),
                         [](const auto& info) {
                           return std::string(info.param.preset) + "_" +
                                  mmaemu::format_name(info.param.fa) + "_" +
                                  mmaemu::format_name(info.param.fb);
                         });

// model::dot's binary32 chain (dot_f32.cpp) against the same chains block by block through
// block_fma (which the tests above bind to the independent formula), one chain at a time and
// two rows at a time (dot_rows): the shipped presets and custom ones that the binary32 chain
// takes at its edges (odd and large blocks, so the general block loop and padding; a min_exp
// that truncates every product; frac 0), c zero, -0, tiny, subnormal, huge (a block exponent
// above 100 goes to block_fma), codes uniform, at the edges, subnormal and cancelling.
TEST(DotChainF32, AgreesWithTheBlockChain) {
  using mmaemu::BlockRounding;
  using mmaemu::model::detail::chain_f32_applies;
  using mmaemu::model::detail::use_chain_f32;
  const std::vector<Preset> custom = {
      mmaemu::make_custom_preset("odd7", 7, 9, 5, BlockRounding::toward_zero, -20),
      mmaemu::make_custom_preset("nfma48", 48, 13, 13, BlockRounding::toward_zero, -133),
      mmaemu::make_custom_preset("nfma256", 256, 10, 10, BlockRounding::toward_zero, -139),
      mmaemu::make_custom_preset("high_min", 32, 13, 13, BlockRounding::toward_zero, 90),
      mmaemu::make_custom_preset("frac0", 8, 0, 3, BlockRounding::toward_zero, -149),
  };
  std::vector<const Preset*> presets = {&preset("ada"), &preset("hopper")};
  for (const Preset& p : custom)
    presets.push_back(&p);
  const FormatPair pairs[] = {{Format::e4m3, Format::e4m3},
                              {Format::e5m2, Format::e5m2},
                              {Format::e4m3, Format::e5m2},
                              {Format::e5m2, Format::e4m3}};
  if (!chain_f32_applies(preset("hopper"), pairs[0]))
    GTEST_SKIP() << "the binary32 chain does not apply on this CPU (AVX2, FMA and the MXCSR "
                    "rounding mode are needed)";
  std::mt19937_64 rng(0xF32D0000u);
  std::vector<std::uint8_t> a, b;
  int checked = 0;
  for (const Preset* p : presets) {
    for (const FormatPair& fmt : pairs) {
      ASSERT_TRUE(chain_f32_applies(*p, fmt)) << p->name;
      for (int trial = 0; trial < 120; ++trial) {
        const std::size_t Ks[] = {1, 7, 8, 16, 17, 31, 32, 33, 100, 300};
        const std::size_t K = Ks[static_cast<std::size_t>(trial) % std::size(Ks)];
        // Two rows, so that dot_rows takes its two-at-a-time path.
        std::vector<std::uint8_t> rows_a, rows_b;
        std::uint32_t c[2];
        for (int r = 0; r < 2; ++r) {
          make_chain(rng, fmt, K, (trial + r) % 4, a, b);
          rows_a.insert(rows_a.end(), a.begin(), a.end());
          rows_b.insert(rows_b.end(), b.begin(), b.end());
          c[r] = random_c(rng);
          if (trial % 5 == 1)
            c[r] = static_cast<std::uint32_t>(rng() & 0x80FFFFFFu); // subnormal or tiny
          if (trial % 7 == 3)
            c[r] = static_cast<std::uint32_t>(rng() & 0x807FFFFFu) | 0x79000000u; // 2^115
        }
        std::uint32_t fast[2], slow[2];
        use_chain_f32(false);
        mmaemu::model::dot_rows(rows_a.data(), rows_b.data(), c, 2, K, *p, fmt, slow);
        use_chain_f32(true);
        mmaemu::model::dot_rows(rows_a.data(), rows_b.data(), c, 2, K, *p, fmt, fast);
        for (int r = 0; r < 2; ++r) {
          const std::span<const std::uint8_t> ra(rows_a.data() + r * K, K);
          const std::span<const std::uint8_t> rb(rows_b.data() + r * K, K);
          const std::uint32_t one = dot(ra, rb, c[r], *p, fmt);
          ASSERT_TRUE(same_bits(slow[r], fast[r]))
              << p->name << " rows trial " << trial << " K " << K << " c=0x" << std::hex << c[r];
          ASSERT_TRUE(same_bits(slow[r], one))
              << p->name << " trial " << trial << " K " << K << " c=0x" << std::hex << c[r];
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1500);
}

// Every single pair of codes from three c values, for every variant against the 64-bit one.
TEST(BlockFmaKernels, AllCodePairsAgreeAcrossVariants) {
  for (const char* pr : {"ada", "hopper", "narrow_rne"}) {
    const Preset& p = kernel_preset(pr);
    for (const FormatPair fmt :
         {FormatPair{Format::e4m3, Format::e4m3}, FormatPair{Format::e5m2, Format::e4m3}}) {
      const BlockContext ctx(fmt.a, fmt.b, p);
      for (std::uint32_t c : {0x00000000u, 0x3f800000u, 0x80000001u}) {
        for (int x = 0; x < 256; ++x) {
          for (int y = 0; y < 256; ++y) {
            const std::uint8_t a[1] = {static_cast<std::uint8_t>(x)};
            const std::uint8_t b[1] = {static_cast<std::uint8_t>(y)};
            bool nf_wide = false;
            const std::uint32_t want =
                mmaemu::model::block_fma(BlockKernel::wide, ctx, a, b, 1, c, nf_wide);
            for (BlockKernel k : kernels()) {
              bool nf = false;
              const std::uint32_t got = mmaemu::model::block_fma(k, ctx, a, b, 1, c, nf);
              ASSERT_TRUE(same_bits(want, got))
                  << pr << " " << kernel_name(k) << " a=0x" << std::hex << x << " b=0x" << y;
              ASSERT_EQ(nf_wide, nf) << kernel_name(k);
            }
          }
        }
      }
    }
  }
}

// The largest 32-bit sums: a full 256-term block of the largest products, with a same-sign c
// that sets E, at frac 20 (the widest 32-bit case).
TEST(BlockFmaKernels, LargestNarrowSumIsExact) {
  const Preset& p = kernel_preset("nfma256");
  for (std::uint8_t sign : {0x00, 0x80}) {
    const std::vector<std::uint8_t> a(256, static_cast<std::uint8_t>(0x7e | sign)); // +-448
    const std::vector<std::uint8_t> b(256, 0x7e);
    for (std::uint32_t c : {0u, 0x41000000u /*8*/, 0x48000000u /*2^17*/}) {
      const std::uint32_t cc = c | (static_cast<std::uint32_t>(sign) << 24);
      const std::uint32_t want =
          reftest::chain(reftest::kE4M3, reftest::kE4M3, a, b, cc, params_of(p));
      for (BlockKernel k : kernels()) {
        bool nf = false;
        EXPECT_TRUE(same_bits(want, chain_with(k, p, {}, a, b, cc, nf))) << kernel_name(k);
      }
    }
  }
}

// The non-finite rule of block-fma.md, derived here from the codes' values: a NaN operand,
// Inf * 0 or +Inf meeting -Inf give 0x7FFFFFFF, another Inf gives an Inf of its sign.
// Returns false when every operand and c are finite.
bool rule_of(FormatPair fmt, const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
             std::uint32_t c, std::uint32_t& out) {
  bool nan = false, pos = false, neg = false;
  const float cf = reftest::from_bits(c);
  if (std::isnan(cf))
    nan = true;
  else if (std::isinf(cf))
    (cf < 0 ? neg : pos) = true;
  // reftest::value gives NaN for every non-finite code: an E5M2 Inf has a zero fraction field.
  auto value_of = [](Format f, std::uint8_t code) -> double {
    bool fin = true;
    const double v = reftest::value(ref_fmt(f), code, &fin);
    if (fin || f != Format::e5m2 || (code & 0x03u) != 0)
      return v;
    return (code & 0x80u) ? -INFINITY : INFINITY;
  };
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double x = value_of(fmt.a, a[k]);
    const double y = value_of(fmt.b, b[k]);
    if (std::isnan(x) || std::isnan(y) ||
        ((std::isinf(x) || std::isinf(y)) && (x == 0.0 || y == 0.0))) // value tests, not bits
      nan = true;
    else if (std::isinf(x) || std::isinf(y))
      (std::signbit(x) != std::signbit(y) ? neg : pos) = true;
  }
  if (!nan && !pos && !neg)
    return false;
  out = (nan || (pos && neg)) ? 0x7fffffffu : pos ? 0x7f800000u : 0xff800000u;
  return true;
}

// dot finds NaN and Inf codes in its block pass; the result follows the rule wherever they
// are (first, last, past a block boundary, several of them, in c).
TEST(NonFinite, CodesAnywhereInTheChainFollowTheRule) {
  std::mt19937_64 rng(0xF1F1u);
  for (const char* pr : {"ada", "hopper", "b200_mma_sync"}) {
    const Preset& p = preset(pr);
    for (const FormatPair fmt :
         {FormatPair{Format::e5m2, Format::e5m2}, FormatPair{Format::e4m3, Format::e5m2},
          FormatPair{Format::e4m3, Format::e4m3}}) {
      const auto na = nonfinite_codes(fmt.a);
      const auto nb = nonfinite_codes(fmt.b);
      std::vector<std::uint8_t> a, b;
      for (int trial = 0; trial < 300; ++trial) {
        make_chain(rng, fmt, 1 + rng() % 100, trial % 4, a, b);
        const int specials = static_cast<int>(rng() % 3);
        for (int s = 0; s < specials; ++s) {
          const std::size_t at = trial % 5 == 0 ? a.size() - 1 : rng() % a.size();
          if (rng() & 1)
            a[at] = na[rng() % na.size()];
          else
            b[at] = nb[rng() % nb.size()];
        }
        std::uint32_t c = random_c(rng);
        if (trial % 7 == 0)
          c = std::array<std::uint32_t, 3>{0x7f800000u, 0xff800000u, 0x7fc00001u}[rng() % 3];
        std::uint32_t want;
        if (!rule_of(fmt, a, b, c, want))
          want = reftest::chain(ref_fmt(fmt.a), ref_fmt(fmt.b), a, b, c, params_of(p));
        ASSERT_TRUE(same_bits(want, dot(a, b, c, p, fmt)))
            << pr << " trial " << trial << " c=0x" << std::hex << c;
      }
    }
  }
}

// A NaN or Inf code in a block after the one that overflowed to Inf still decides the result
// (the block pass never reaches it; the rule must).
TEST(NonFinite, CodesAfterAnOverflowStillFollowTheRule) {
  const Preset& p = kernel_preset("narrow_rne"); // FLT_MAX rounds up to Inf at 10 bits
  std::vector<std::uint8_t> a(40, 0x00), b(40, 0x00);
  a[0] = b[0] = 0x3c; // 1.0 in E5M2
  const FormatPair fmt{Format::e5m2, Format::e5m2};
  // Without a special code the chain overflows in block 1 and stays +Inf (by hand: FLT_MAX
  // keeps 23 fraction bits, 10 are kept and the dropped ones are more than half an ulp).
  EXPECT_TRUE(same_bits(0x7f800000u, dot(a, b, 0x7f7fffffu, p, fmt)));
  a[20] = 0x7d; // NaN in block 2
  EXPECT_TRUE(same_bits(0x7fffffffu, dot(a, b, 0x7f7fffffu, p, fmt)));
  a[20] = 0xfc; // -Inf * 0 (b[20] is +0) in block 2: NaN
  EXPECT_TRUE(same_bits(0x7fffffffu, dot(a, b, 0x7f7fffffu, p, fmt)));
  b[39] = 0x3c; // -Inf * 0 still at 20; and at 39: (+0) * 1 is finite
  a[20] = 0x00;
  a[39] = 0xfc; // -Inf * 1 in block 3 meets the +Inf block result: only -Inf is an operand
  EXPECT_TRUE(same_bits(0xff800000u, dot(a, b, 0x7f7fffffu, p, fmt)));
}

// round_block_result against a derivation with 128-bit integers and ldexp: magnitudes below
// and above 2^64, results normal, subnormal, zero and beyond the binary32 range.
TEST(BlockFma, RoundBlockResultMatchesIndependentRounding) {
  using u128 = unsigned __int128;
  std::mt19937_64 rng(0x80D0u);
  for (int trial = 0; trial < 200000; ++trial) {
    const int frac_out = std::array<int, 6>{0, 1, 10, 13, 22, 23}[trial % 6];
    const auto rounding =
        (trial / 6) % 2 ? mmaemu::BlockRounding::nearest_even : mmaemu::BlockRounding::toward_zero;
    const Preset p = mmaemu::make_custom_preset("r", 16, 13, frac_out, rounding, -132);
    const int bits = 1 + static_cast<int>(rng() % 128);
    u128 mag = (static_cast<u128>(rng()) << 64) | rng();
    mag >>= 128 - bits;
    if (trial % 5 == 0)
      mag |= static_cast<u128>(1) << (bits - 1); // also powers of two and round carries
    if (trial % 11 == 0)
      mag = (static_cast<u128>(1) << (bits - 1)) * 3 / 2; // halfway patterns
    if (mag == 0)
      mag = 1;
    int lsb = -330 + static_cast<int>(rng() % 460);
    if (trial % 13 == 0) {
      // All below the smallest subnormal's last place, 64 and 128 bits below it included.
      mag = (static_cast<u128>(rng()) << 64) | rng() | (static_cast<u128>(1) << 127);
      lsb = -149 - 128 + static_cast<int>(rng() % 3) - 1 + (trial % 2 ? 64 : 0);
    }
    const bool neg = rng() & 1;
    // Derivation: value in [2^e, 2^(e+1)), last place q, m = the value in units of 2^q.
    int top = 127;
    while (!((mag >> top) & 1))
      --top;
    const int e = lsb + top;
    const int q = std::max(e - frac_out, -149);
    u128 m;
    if (q <= lsb) {
      m = mag << (lsb - q);
    } else if (q - lsb >= 128) {
      // The value is below one unit of 2^q; to nearest it is one unit above half of it.
      const bool above_half = q - lsb == 128 && mag > (static_cast<u128>(1) << 127);
      m = rounding == mmaemu::BlockRounding::nearest_even && above_half ? 1 : 0;
    } else {
      const int r = q - lsb;
      m = mag >> r;
      if (rounding == mmaemu::BlockRounding::nearest_even) {
        const u128 rem = mag - (m << r);
        const u128 half = static_cast<u128>(1) << (r - 1);
        if (rem > half || (rem == half && (m & 1)))
          ++m;
      }
    }
    const float r = std::ldexp(static_cast<float>(static_cast<std::uint32_t>(m)), q);
    const std::uint32_t want =
        m == 0 && !neg ? 0u : reftest::to_bits(neg ? -r : r); // ldexp overflow gives Inf
    ASSERT_TRUE(same_bits(want, mmaemu::model::round_block_result(neg, mag, lsb, p)))
        << "trial " << trial << " bits " << bits << " lsb " << lsb << " frac_out " << frac_out;
  }
}

} // namespace
