// SPDX-License-Identifier: BSD-2-Clause
// The chain of the 16-bit and tf32 presets (model::dot_codes) against the independent binary64
// derivation of ref_chain_wide.hpp: every code of one operand (exhaustive) against chosen
// partners, seeded chains across block boundaries for every shipped preset and both
// accumulators, hand-derived cases, the non-finite rule and the refusals.

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "ref_chain_wide.hpp"

using mmaemu::Format;
using mmaemu::Mismatch;
using mmaemu::Preset;
using mmaemu::model::dot_codes;
using mmaemu::model::FormatPair;
namespace ref = reftest::wide;

namespace {

const ref::Fmt& ref_fmt(Format f) {
  return f == Format::fp16 ? ref::kFP16 : (f == Format::bf16 ? ref::kBF16 : ref::kTF32);
}

Format input_format(const Preset& p) {
  switch (p.inputs) {
  case mmaemu::PresetInputs::fp16:
    return Format::fp16;
  case mmaemu::PresetInputs::bf16:
    return Format::bf16;
  default:
    return Format::tf32;
  }
}

ref::Params params_of(const Preset& p) {
  ref::Params r{p.nfma, p.frac, p.frac_out, p.rounding == mmaemu::BlockRounding::nearest_even,
                p.min_exp};
  r.half = p.half_out == mmaemu::HalfOutput::block_then_nearest
               ? ref::Params::Half::block_then_nearest
               : ref::Params::Half::sum_to_nearest;
  return r;
}

::testing::AssertionResult same_bits(std::uint32_t expected, std::uint32_t actual, Format f) {
  const Mismatch m = mmaemu::compare_bits(expected, actual, f);
  if (m == Mismatch::none)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mmaemu::mismatch_name(m) << ": expected " << mmaemu::decompose_bits(expected, f)
         << " actual " << mmaemu::decompose_bits(actual, f);
}

const char* const kHmmaPresets[] = {"volta_fp16",  "ampere_fp16", "ampere_bf16", "ampere_tf32",
                                    "ada_fp16",    "ada_bf16",    "ada_tf32",    "hopper_fp16",
                                    "hopper_bf16", "hopper_tf32"};

// A random finite code of format f; every fourth one from a narrow exponent range (to provoke
// cancellation and ties), a few zeros and subnormals.
std::uint32_t random_code(std::mt19937_64& rng, Format f, int trial) {
  const ref::Fmt& d = ref_fmt(f);
  const std::uint32_t ones = (1u << d.exp_bits) - 1u;
  for (;;) {
    std::uint32_t code = static_cast<std::uint32_t>(rng()) & ((1u << d.width) - 1u);
    const std::uint32_t sign = code & (1u << (d.width - 1));
    const std::uint32_t frac = code & ((1u << d.frac_bits) - 1u);
    switch (trial % 8) {
    case 0: // exponents near 1.0
      code = sign | (static_cast<std::uint32_t>(d.bias - 2 + rng() % 4) << d.frac_bits) | frac;
      break;
    case 1: // subnormals and zeros
      code = sign | (rng() % 4 == 0 ? 0u : frac);
      break;
    case 2: // a wide spread of exponents
      break;
    default: // moderate spread
      code = sign | (static_cast<std::uint32_t>(d.bias - 8 + rng() % 16) << d.frac_bits) | frac;
      break;
    }
    if (((code >> d.frac_bits) & ones) != ones)
      return code;
  }
}

struct ChainCase {
  const char* preset;
  std::size_t K;
  bool half;
};

void PrintTo(const ChainCase& c, std::ostream* os) {
  *os << c.preset << " K=" << c.K << (c.half ? " fp16" : " fp32");
}

class SeededCodeChains : public ::testing::TestWithParam<ChainCase> {};

} // namespace

TEST_P(SeededCodeChains, ChainMatchesIndependentDerivation) {
  const ChainCase cc = GetParam();
  const Preset& p = mmaemu::get_preset_quiet(cc.preset);
  const Format f = input_format(p);
  const Format acc = cc.half ? Format::fp16 : Format::fp32;
  const std::uint64_t seed = 0xC0DE5000u + cc.K * 7 + (cc.half ? 1 : 0);
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::uint32_t> a(cc.K), b(cc.K);
    for (std::size_t k = 0; k < cc.K; ++k) {
      a[k] = random_code(rng, f, trial);
      b[k] = random_code(rng, f, trial + static_cast<int>(k % 3));
    }
    std::uint32_t c;
    if (cc.half) {
      c = static_cast<std::uint32_t>(rng()) & 0xFFFFu;
      if (((c >> 10) & 0x1Fu) == 0x1Fu)
        c &= 0xBFFFu; // finite
    } else {
      c = static_cast<std::uint32_t>(rng());
      if (trial % 5 == 1)
        c = (c & 0x807FFFFFu) | (static_cast<std::uint32_t>(124 + trial % 6) << 23);
      if (((c >> 23) & 0xFFu) == 0xFFu)
        c &= 0xBFFFFFFFu;
    }
    if (trial % 7 == 0)
      c = 0;
    const std::uint32_t want = ref::chain(ref_fmt(f), a, b, c, cc.half, params_of(p));
    const std::uint32_t got = dot_codes(a, b, c, p, FormatPair{f, f}, acc);
    ASSERT_TRUE(same_bits(want, got, acc)) << "trial " << trial;
  }
}

namespace {

std::vector<ChainCase> chain_cases() {
  std::vector<ChainCase> v;
  for (const char* name : kHmmaPresets) {
    const Preset& p = mmaemu::get_preset_quiet(name);
    for (std::size_t K : {std::size_t{0}, std::size_t{1}, std::size_t(p.nfma - 1),
                          std::size_t(p.nfma), std::size_t(p.nfma + 1), std::size_t{64}}) {
      v.push_back({name, K, false});
      if (p.half_out != mmaemu::HalfOutput::none)
        v.push_back({name, K, true});
    }
  }
  return v;
}

} // namespace

INSTANTIATE_TEST_SUITE_P(Presets, SeededCodeChains, ::testing::ValuesIn(chain_cases()),
                         [](const auto& info) {
                           return std::string(info.param.preset) + "_K" +
                                  std::to_string(info.param.K) +
                                  (info.param.half ? "_fp16acc" : "_fp32acc");
                         });

// Every code of a (all 2^16 fp16 / bf16 codes, all 2^19 tf32 codes) times a few b values, from
// +0 and from a c that dominates, sits just above, or cancels: one product and c in a block.
TEST(DotCodes, EveryCodeOfOneOperandMatchesIndependentDerivation) {
  for (const char* name : {"volta_fp16", "ada_bf16", "hopper_tf32"}) {
    SCOPED_TRACE(name);
    const Preset& p = mmaemu::get_preset_quiet(name);
    const Format f = input_format(p);
    const ref::Fmt& d = ref_fmt(f);
    const std::uint32_t one = static_cast<std::uint32_t>(d.bias) << d.frac_bits;
    const std::uint32_t sign = 1u << (d.width - 1);
    // b: 1.0, -1.5, the largest finite value, the smallest subnormal, 1 + ulp.
    const std::uint32_t bs[] = {
        one, sign | one | (1u << (d.frac_bits - 1)),
        ((((1u << d.exp_bits) - 2u) << d.frac_bits) | ((1u << d.frac_bits) - 1u)), 1u, one | 1u};
    const std::uint32_t cs[] = {0u,          0x3F800000u, 0xBF800001u,
                                0x00000001u, 0x4B800000u, 0x80400000u};
    // tf32 has 8 times as many codes: two partners and two c values for it.
    const bool big = d.width > 16;
    const std::size_t nb = big ? 2 : std::size(bs), nc = big ? 3 : std::size(cs);
    const std::uint32_t n = 1u << d.width;
    int bad = 0;
    for (std::uint32_t code = 0; code < n && bad < 10; ++code) {
      if (ref::cls_of(d, code) == ref::Cls::inf || ref::cls_of(d, code) == ref::Cls::nan)
        continue;
      for (std::size_t ib = 0; ib < nb; ++ib) {
        const std::uint32_t bcode = bs[ib];
        for (std::size_t ic = 0; ic < nc; ++ic) {
          const std::uint32_t c = cs[ic];
          const std::vector<std::uint32_t> a{code}, b{bcode};
          const std::uint32_t want = ref::chain(d, a, b, c, false, params_of(p));
          const std::uint32_t got = dot_codes(a, b, c, p, FormatPair{f, f});
          if (!same_bits(want, got, Format::fp32)) {
            ++bad;
            ADD_FAILURE() << "a " << code << " b " << bcode << " c " << c << ": "
                          << same_bits(want, got, Format::fp32).message();
          }
        }
      }
    }
  }
}

// The same over every fp16 code with an fp16 accumulator (both rounding variants).
TEST(DotCodes, EveryFp16CodeWithFp16AccumulatorMatchesIndependentDerivation) {
  for (auto half : {mmaemu::HalfOutput::sum_to_nearest, mmaemu::HalfOutput::block_then_nearest}) {
    const Preset p =
        mmaemu::make_custom_preset("half", 8, 24, 23, mmaemu::BlockRounding::toward_zero, -160,
                                   false, std::nullopt, mmaemu::PresetInputs::fp16, half);
    SCOPED_TRACE(mmaemu::half_output_name(half));
    const std::uint32_t bs[] = {0x3C00u, 0xBE00u, 0x7BFFu, 0x3C01u};
    const std::uint32_t cs[] = {0x0000u, 0xBC01u, 0x0001u, 0x7800u};
    int bad = 0;
    for (std::uint32_t code = 0; code < 0x10000u && bad < 10; ++code) {
      if (((code >> 10) & 0x1Fu) == 0x1Fu)
        continue;
      for (std::uint32_t bcode : bs) {
        for (std::uint32_t c : cs) {
          const std::vector<std::uint32_t> a{code}, b{bcode};
          const std::uint32_t want = ref::chain(ref::kFP16, a, b, c, true, params_of(p));
          const std::uint32_t got =
              dot_codes(a, b, c, p, FormatPair{Format::fp16, Format::fp16}, Format::fp16);
          if (!same_bits(want, got, Format::fp16)) {
            ++bad;
            ADD_FAILURE() << "a " << code << " b " << bcode << " c " << c << ": "
                          << same_bits(want, got, Format::fp16).message();
          }
        }
      }
    }
  }
}

// Hand-derived (fp16 codes: 0x3C00 = 1, 0x1400 = 2^-10, 0x0C00 = 2^-12, 0x1000 = 2^-11).
TEST(DotCodes, ExtraAlignmentBitsKeepExactlyFracBitsBelowTheLargestExponent) {
  // 1*1 + 2^-12*1 + 2^-12*1 from c = 0 in one block: the two small terms lie 12 bits below
  // E = 0; with frac = 23 (Volta) and frac = 24 (Ampere) both are kept exactly.
  const std::vector<std::uint32_t> a{0x3C00u, 0x0C00u, 0x0C00u}, b{0x3C00u, 0x3C00u, 0x3C00u};
  const FormatPair fp16{Format::fp16, Format::fp16};
  EXPECT_TRUE(same_bits(0x3F801000u,
                        dot_codes(a, b, 0u, mmaemu::get_preset_quiet("volta_fp16"), fp16),
                        Format::fp32)); // only 3 products: one Volta block of 4
  // c = 2^24 sets E = 24: a product of 1 lies 24 bits below; frac 23 drops it (Volta), frac 24
  // keeps one unit (Ampere), which the binary32 result then truncates away again (frac_out 23),
  // and frac 25 (Hopper) keeps it as well.
  const std::vector<std::uint32_t> one{0x3C00u}, one_b{0x3C00u};
  const std::uint32_t c24 = 0x4B800000u; // 2^24
  for (const char* name : {"volta_fp16", "ampere_fp16", "hopper_fp16"}) {
    EXPECT_TRUE(same_bits(0x4B800000u,
                          dot_codes(one, one_b, c24, mmaemu::get_preset_quiet(name), fp16),
                          Format::fp32))
        << name;
  }
  // -1 with c = 2^24: Volta drops the term (2^24), Ampere keeps -1 and truncates
  // 2^24 - 1 toward zero to 2^24 - 1 (exactly representable: 24 bits), Hopper the same.
  const std::vector<std::uint32_t> m1{0xBC00u};
  EXPECT_TRUE(same_bits(0x4B800000u,
                        dot_codes(m1, one_b, c24, mmaemu::get_preset_quiet("volta_fp16"), fp16),
                        Format::fp32));
  EXPECT_TRUE(same_bits(0x4B7FFFFFu,
                        dot_codes(m1, one_b, c24, mmaemu::get_preset_quiet("ampere_fp16"), fp16),
                        Format::fp32));
}

TEST(DotCodes, BlocksChainThroughCAndTheFp16AccumulatorRoundsEachBlock) {
  const Preset& v = mmaemu::get_preset_quiet("volta_fp16"); // nfma 4
  const FormatPair fp16{Format::fp16, Format::fp16};
  // Five products of 1 + 2^-10 (0x3C01) x 1: the first block sums 4 (1 + 2^-10) = 4 + 2^-8
  // exactly; the fifth product is a block of its own.
  const std::vector<std::uint32_t> a(5, 0x3C01u), b(5, 0x3C00u);
  // fp32: 5 + 5 * 2^-10, exact in both blocks.
  EXPECT_TRUE(same_bits(0x40A02800u, dot_codes(a, b, 0u, v, fp16), Format::fp32));
  // fp16 accumulator: block 1 gives 4 + 2^-8 -> fp16 (ulp 2^-8 at 4): 4 + 2^-8 exactly; block 2
  // adds 1 + 2^-10: 5 + 2^-8 + 2^-10 -> nearest fp16 (ulp 2^-8): 5 + 2^-8 (0x4501).
  EXPECT_TRUE(same_bits(0x4501u, dot_codes(a, b, 0u, v, fp16, Format::fp16), Format::fp16));
}

TEST(DotCodes, LateCAddsCExactlyAfterTheTruncatedProductSum) {
  // -(1 + 2^-10) with c = 2^24 on ampere_fp16's fields (frac 24). In the block: E = 24, the
  // product truncated to -1, 2^24 - 1 exactly. Late c: E = 0, the product kept whole,
  // 2^24 - 1 - 2^-10 truncated toward zero at exponent 23: 2^24 - 2.
  const Preset& p = mmaemu::get_preset_quiet("ampere_fp16");
  Preset late = p;
  late.late_c = true;
  const std::vector<std::uint32_t> a{0xBC01u}, b{0x3C00u};
  const FormatPair fp16{Format::fp16, Format::fp16};
  EXPECT_TRUE(same_bits(0x4B7FFFFFu, dot_codes(a, b, 0x4B800000u, p, fp16), Format::fp32));
  EXPECT_TRUE(same_bits(0x4B7FFFFEu, dot_codes(a, b, 0x4B800000u, late, fp16), Format::fp32));
  // With an fp16 accumulator: c = 2048 (0x6800), product -(1 + 2^-10): in the block E = 11,
  // the product truncated to a multiple of 2^-13: -(1 + 2^-10), then 2047 - 2^-10 to nearest
  // fp16 (ulp 1 at 1024..2048): 2047 (0x67FF) either way; late c the same sum: 2047.
  EXPECT_TRUE(same_bits(0x67FFu, dot_codes(a, b, 0x6800u, late, fp16, Format::fp16), Format::fp16));
}

TEST(DotCodes, ZeroSumIsPlusZeroAndEmptyChainReturnsC) {
  const Preset& p = mmaemu::get_preset_quiet("ada_bf16");
  const FormatPair bf{Format::bf16, Format::bf16};
  const std::vector<std::uint32_t> a{0x3F80u, 0xBF80u}, b{0x3F80u, 0x3F80u};
  EXPECT_TRUE(same_bits(0u, dot_codes(a, b, 0u, p, bf), Format::fp32));
  EXPECT_TRUE(same_bits(0u, dot_codes(a, b, 0x80000000u, p, bf), Format::fp32));
  EXPECT_TRUE(same_bits(0xC0490FDBu, dot_codes({}, {}, 0xC0490FDBu, p, bf), Format::fp32));
}

TEST(DotCodes, NonFiniteRuleOverTheWholeChain) {
  const Preset& p = mmaemu::get_preset_quiet("ampere_fp16");
  const FormatPair fp16{Format::fp16, Format::fp16};
  const std::uint32_t inf = 0x7C00u, ninf = 0xFC00u, nan = 0x7E01u, one = 0x3C00u;
  auto d = [&](std::vector<std::uint32_t> a, std::vector<std::uint32_t> b, std::uint32_t c,
               Format acc) { return dot_codes(a, b, c, p, fp16, acc); };
  // fp32 accumulator: canonical NaN 0x7FFFFFFF, Infs of the product's sign.
  EXPECT_TRUE(same_bits(0x7FFFFFFFu, d({nan, one}, {one, one}, 0u, Format::fp32), Format::fp32));
  EXPECT_TRUE(same_bits(0x7FFFFFFFu, d({inf}, {0u}, 0u, Format::fp32), Format::fp32));
  EXPECT_TRUE(same_bits(0x7FFFFFFFu, d({inf, ninf}, {one, one}, 0u, Format::fp32), Format::fp32));
  EXPECT_TRUE(same_bits(0xFF800000u, d({inf}, {0xBC00u}, 0x3F800000u, Format::fp32), Format::fp32));
  EXPECT_TRUE(same_bits(0x7FFFFFFFu, d({one}, {one}, 0x7FC00000u, Format::fp32), Format::fp32));
  // A non-finite code in a later block than the first.
  std::vector<std::uint32_t> a(9, one), b(9, one);
  a[8] = inf;
  EXPECT_TRUE(same_bits(0x7F800000u, d(a, b, 0u, Format::fp32), Format::fp32));
  // fp16 accumulator: canonical NaN 0x7FFF, Inf 0x7C00.
  EXPECT_TRUE(same_bits(0x7FFFu, d({nan}, {one}, 0u, Format::fp16), Format::fp16));
  EXPECT_TRUE(same_bits(0x7C00u, d({one}, {one}, 0x7C00u, Format::fp16), Format::fp16));
  // An fp16 block that overflows: 2 * 65504 -> Inf, and the chain ends there.
  EXPECT_TRUE(
      same_bits(0x7C00u, d({0x7BFFu, 0x7BFFu}, {one, one}, 0u, Format::fp16), Format::fp16));
}

TEST(DotCodes, RefusesFormatsAndAccumulatorsThePresetDoesNotTake) {
  const FormatPair fp16{Format::fp16, Format::fp16};
  const std::vector<std::uint32_t> a{0x3C00u}, b{0x3C00u};
  auto refused = [](auto f) {
    try {
      f();
    } catch (const mmaemu::ValueError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // A bf16 preset with fp16 codes, an FP8 preset, an fp16 accumulator on bf16, FP8 codes.
  EXPECT_NE(refused([&] {
              dot_codes(a, b, 0u, mmaemu::get_preset_quiet("ada_bf16"), fp16);
            }).find("'ada_bf16' takes bf16 x bf16"),
            std::string::npos);
  EXPECT_NE(refused([&] {
              dot_codes(a, b, 0u, mmaemu::get_preset_quiet("ada"), fp16);
            }).find("'ada' takes e4m3 or e5m2"),
            std::string::npos);
  EXPECT_NE(refused([&] {
              dot_codes(a, b, 0u, mmaemu::get_preset_quiet("ada_bf16"),
                        FormatPair{Format::bf16, Format::bf16}, Format::fp16);
            }).find("accumulator fp16"),
            std::string::npos);
  EXPECT_NE(refused([&] {
              dot_codes(a, b, 0u, mmaemu::get_preset_quiet("ada"),
                        FormatPair{Format::e4m3, Format::e4m3});
            }).find("model::dot"),
            std::string::npos);
  EXPECT_NE(refused([&] {
              dot_codes(a, std::vector<std::uint32_t>{}, 0u, mmaemu::get_preset_quiet("ada_fp16"),
                        fp16);
            }).find("1 elements but b has 0"),
            std::string::npos);
  // The FP8 chain refuses a 16-bit preset.
  const std::vector<std::uint8_t> a8{0x38}, b8{0x38};
  EXPECT_NE(refused([&] {
              mmaemu::model::dot(a8, b8, 0u, mmaemu::get_preset_quiet("ada_fp16"),
                                 FormatPair{Format::e4m3, Format::e4m3});
            }).find("'ada_fp16' takes fp16 x fp16"),
            std::string::npos);
}
