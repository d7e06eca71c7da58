// SPDX-License-Identifier: BSD-2-Clause
// The GEMM level of the profiles that bitequiv measured (h100-sxm, the measured platform, and
// h200, which adopts its values): every expected output comes from a small exact reference of
// the published recipe (docs/scaled-mm-facts.md, "the bitequiv profile"), written here from
// that text with the independent chain of tests/support/ref_chain.hpp and the HOST FPU's fp32
// adds and multiplies, never from mmaemu's plan code:
//   slices:  chunk = ceil(ceil(K / 128) / S) * 128, contiguous from k = 0, the last takes what
//            remains (there may be fewer than S non-empty slices);
//   a slice: 128-long k blocks from the slice's start, each one chain from zero; the block
//            totals added in fp32 in k order, the running sum starting at the first block's
//            total (use_fast_accum=True: one chain over the slice, unmeasured, adopted);
//   merge:   the slice partials added in fp32 in slice order, starting from partial 0;
//   scales:  fp32(fp32(scale_a) * fp32(scale_b)) times the sum, once; one rounding on store.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemm_expect.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/warnings.hpp"
#include "ref_chain.hpp"

namespace {

using mmaemu::Format;
using mmaemu::SplitKRequest;
using mmaemu::Tensor;
using Codes = std::vector<std::uint8_t>;
using Range = std::pair<std::size_t, std::size_t>;

// The hopper preset's block (block-fma.md), for the independent chain.
constexpr reftest::Params kHopper{32, 13, 13, false, -133};

const reftest::Fmt& ref_fmt(Format f) {
  return f == Format::e4m3 ? reftest::kE4M3 : reftest::kE5M2;
}

struct Operands {
  Format fa = Format::e4m3, fb = Format::e4m3;
  std::int64_t M = 0, N = 0, K = 0;
  Codes A, B; // [M][K], [N][K]
};

Operands random_operands(std::mt19937& rng, Format fa, Format fb, std::int64_t M, std::int64_t N,
                         std::int64_t K) {
  Operands o{fa,
             fb,
             M,
             N,
             K,
             Codes(static_cast<std::size_t>(M * K)),
             Codes(static_cast<std::size_t>(N * K))};
  for (auto& c : o.A)
    c = rng() % 4 == 0 ? gemmx::finite_code(rng, fa) : gemmx::moderate_code(rng, fa);
  for (auto& c : o.B)
    c = rng() % 4 == 0 ? gemmx::finite_code(rng, fb) : gemmx::moderate_code(rng, fb);
  return o;
}

// The recipe's partition, at a grain (128 measured; 16 is the alternative a test must tell).
std::vector<Range> slices(std::size_t K, std::size_t S, std::size_t grain) {
  const std::size_t blocks = (K + grain - 1) / grain;     // ceil(K / grain)
  const std::size_t chunk = (blocks + S - 1) / S * grain; // ceil(blocks / S) * grain
  std::vector<Range> v;
  for (std::size_t k = 0; k < K; k += chunk) {
    if (v.size() + 1 == S) { // the last slice takes what remains
      v.emplace_back(k, K);
      break;
    }
    v.emplace_back(k, std::min(K, k + chunk));
  }
  return v;
}

std::uint32_t ref_chain(const Operands& o, std::int64_t m, std::int64_t n, Range r) {
  const auto* a = o.A.data() + m * o.K;
  const auto* b = o.B.data() + n * o.K;
  return reftest::chain(ref_fmt(o.fa), ref_fmt(o.fb), Codes(a + r.first, a + r.second),
                        Codes(b + r.first, b + r.second), 0u, kHopper);
}

struct Recipe {
  bool fast = false;
  std::size_t S = 1;
  std::size_t grain = 128;
  bool blocks = true; // slow accumulation has the 128-k block level
};

// One output of the recipe: the fp32 sum before the scales.
std::uint32_t recipe_sum(const Operands& o, const Recipe& r, std::int64_t m, std::int64_t n) {
  std::vector<std::uint32_t> partials;
  for (const Range& s : slices(static_cast<std::size_t>(o.K), r.S, r.grain)) {
    if (r.fast || !r.blocks) {
      partials.push_back(ref_chain(o, m, n, s));
      continue;
    }
    std::uint32_t sum = 0;
    bool first = true;
    for (std::size_t k = s.first; k < s.second; k += 128) {
      const std::uint32_t block = ref_chain(o, m, n, {k, std::min(s.second, k + 128)});
      sum = first ? block : gemmx::hadd(sum, block); // from the first block's total
      first = false;
    }
    partials.push_back(sum);
  }
  std::uint32_t acc = partials.at(0);
  for (std::size_t i = 1; i < partials.size(); ++i)
    acc = gemmx::hadd(acc, partials[i]);
  return acc;
}

std::vector<std::uint32_t> recipe_all(const Operands& o, const Recipe& r) {
  std::vector<std::uint32_t> v;
  for (std::int64_t m = 0; m < o.M; ++m)
    for (std::int64_t n = 0; n < o.N; ++n)
      v.push_back(recipe_sum(o, r, m, n));
  return v;
}

Tensor tensor(Format f, std::int64_t rows, std::int64_t K, const Codes& c) {
  return gemmx::fp8_tensor(f, rows, K, c);
}

Tensor run_accumulate(const Operands& o, bool fast, const std::string& profile, std::size_t S) {
  mmaemu::AccumulateOptions opt;
  opt.profile = profile;
  opt.splitk = S == 1 ? SplitKRequest::explicit_split(1)
                      : SplitKRequest::explicit_split(static_cast<int>(S), "contiguous");
  opt.threads = 1;
  return mmaemu::accumulate(tensor(o.fa, o.M, o.K, o.A), tensor(o.fb, o.N, o.K, o.B), fast, opt);
}

int count_bad(const Tensor& got, const std::vector<std::uint32_t>& want, const std::string& what) {
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::uint32_t g = got.bits_flat(static_cast<std::int64_t>(i));
    if (mmaemu::compare_bits(want[i], g, Format::fp32) != mmaemu::Mismatch::none && bad++ < 3) {
      ADD_FAILURE() << what << " element " << i << ": expected "
                    << mmaemu::decompose_bits(want[i], Format::fp32) << " got "
                    << mmaemu::decompose_bits(g, Format::fp32);
    }
  }
  return bad;
}

class Bitequiv : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    ASSERT_TRUE(gemmx::ftz_daz_off()) << "the host-FPU oracle needs FTZ/DAZ off";
    prev_ = mmaemu::set_warning_sink([](const mmaemu::Warning&) {});
  }
  void TearDown() override { mmaemu::set_warning_sink(prev_); }
  mmaemu::WarningSink prev_;
};

TEST(BitequivRecipe, TheReferencePartitionIsTheMeasuredOne) {
  // The examples of the measurement's text, by hand: K = 1920 (the Evo 2 projection), S = 2:
  // ceil(ceil(1920/128)/2)*128 = ceil(15/2)*128 = 1024, so 1024 + 896 (960 + 960 at grain 16).
  EXPECT_EQ(slices(1920, 2, 128), (std::vector<Range>{{0, 1024}, {1024, 1920}}));
  EXPECT_EQ(slices(1920, 2, 16), (std::vector<Range>{{0, 960}, {960, 1920}}));
  // K = 256, S = 4: chunk = ceil(2/4)*128 = 128, two non-empty slices.
  EXPECT_EQ(slices(256, 4, 128), (std::vector<Range>{{0, 128}, {128, 256}}));
  // K = 1040, S = 3: ceil(9/3)*128 = 384: 384 + 384 + 272.
  EXPECT_EQ(slices(1040, 3, 128), (std::vector<Range>{{0, 384}, {384, 768}, {768, 1040}}));
}

TEST_P(Bitequiv, AccumulateFollowsTheMeasuredRecipe) {
  const std::string profile = GetParam();
  std::mt19937 rng(1918);
  const std::vector<std::pair<Format, Format>> fmts = {{Format::e4m3, Format::e4m3},
                                                       {Format::e4m3, Format::e5m2}};
  int i = 0;
  int grain_told = 0, blocks_told = 0, merge_told = 0; // outputs that tell the alternatives
  for (std::int64_t K : {128, 256, 400, 1040, 1920})
    for (std::size_t S : {1u, 2u, 3u, 4u, 7u})
      for (bool fast : {false, true}) {
        const auto [fa, fb] = fmts[static_cast<std::size_t>(i++) % fmts.size()];
        const Operands o = random_operands(rng, fa, fb, 2, 5, K);
        const std::string what = profile + " K=" + std::to_string(K) + " S=" + std::to_string(S) +
                                 (fast ? " fast" : " slow");
        const Recipe r{fast, S, 128, true};
        const auto want = recipe_all(o, r);
        ASSERT_EQ(count_bad(run_accumulate(o, fast, profile, S), want, what), 0) << what;
        Recipe g16 = r;
        g16.grain = 16;
        Recipe flat = r;
        flat.blocks = false;
        const auto at16 = recipe_all(o, g16), flat_sum = recipe_all(o, flat);
        for (std::size_t j = 0; j < want.size(); ++j) {
          grain_told += want[j] != at16[j];
          blocks_told += !fast && want[j] != flat_sum[j];
        }
        if (fast && S >= 3) {
          // The partials added from the last slice back (the alternative merge).
          for (std::int64_t m = 0; m < o.M; ++m)
            for (std::int64_t n = 0; n < o.N; ++n) {
              std::vector<std::uint32_t> p;
              for (const Range& s : slices(static_cast<std::size_t>(K), S, 128))
                p.push_back(ref_chain(o, m, n, s));
              std::uint32_t rev = p.back();
              for (std::size_t q = p.size() - 1; q-- > 0;)
                rev = gemmx::hadd(rev, p[q]);
              merge_told += rev != want[static_cast<std::size_t>(m * o.N + n)];
            }
        }
      }
  EXPECT_GT(grain_told, 0) << "no output tells the 128 grain from a 16 grain";
  EXPECT_GT(blocks_told, 0) << "no output tells the 128-k blocks from a flat accumulator";
  EXPECT_GT(merge_told, 0) << "no output tells the slice order from the reverse merge";
}

TEST_P(Bitequiv, Evo2ProjectionSplitsAt1024Not960) {
  // K = 1920, S = 2, fast, one output. a[0] * b[0] = 256 * 256 = 2^16; at k = 1000 and 1010
  // (one 32-term block) a * b = 2^-4 * 2^-4 = 2^-8 each.
  //   grain 128, slices [0,1024) [1024,1920): the small terms share slice 0's chain with 2^16;
  //     their block has E = 16 and keeps multiples of 2^(16-13) = 8: they are truncated away;
  //     p0 = 2^16, p1 = +0: the sum is 2^16 = 0x47800000.
  //   grain 16, slices [0,960) [960,1920): p0 = 2^16, p1 = 2^-8 + 2^-8 = 2^-7 (exact);
  //     2^16 + 2^-7 is one ulp above 2^16: 0x47800001 (the hopper profile's answer).
  Operands o{Format::e4m3, Format::e4m3, 1, 1, 1920, Codes(1920, 0), Codes(1920, 0)};
  o.A[0] = o.B[0] = 0x78; // 256
  for (std::size_t k : {1000u, 1010u})
    o.A[k] = o.B[k] = 0x18; // 2^-4
  EXPECT_EQ(run_accumulate(o, true, GetParam(), 2).bits_at(0, 0), 0x47800000u);
  EXPECT_EQ(run_accumulate(o, true, "hopper", 2).bits_at(0, 0), 0x47800001u);
  EXPECT_EQ(recipe_sum(o, {true, 2, 128, true}, 0, 0), 0x47800000u);
  EXPECT_EQ(recipe_sum(o, {true, 2, 16, true}, 0, 0), 0x47800001u);
}

TEST_P(Bitequiv, ScaledMmFoldsTheScalesOnceAndRoundsOnce) {
  std::mt19937 rng(2026);
  // Scale pairs (fp32 bits) for which the fold and two separate multiplies differ somewhere.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> scales = {
      {0x3E99999Au, 0x3FD9999Au}, // 0.3, 1.7
      {0x3DCCCCCDu, 0x40490FDBu}, // 0.1, pi
      {0x3F800000u, 0x3F800000u}, // 1, 1
  };
  int fold_told = 0;
  for (Format out : {Format::fp32, Format::bf16, Format::fp16, Format::e4m3})
    for (bool fast : {false, true})
      for (int S : {1, 3})
        for (const auto& [sa, sb] : scales) {
          const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 3, 16, 640);
          mmaemu::ScaledMmCall c;
          c.input = tensor(o.fa, o.M, o.K, o.A);
          c.mat2 = tensor(o.fb, o.N, o.K, o.B).t();
          c.scale_a = Tensor::scalar_f32(sa);
          c.scale_b = Tensor::scalar_f32(sb);
          c.out_dtype = out;
          c.use_fast_accum = fast;
          c.profile = GetParam();
          c.splitk = S == 1 ? SplitKRequest::explicit_split(1)
                            : SplitKRequest::explicit_split(S, "contiguous");
          c.threads = 1;
          const Tensor got = mmaemu::scaled_mm(c);
          const auto sums = recipe_all(o, {fast, static_cast<std::size_t>(S), 128, true});
          const std::uint32_t alpha = gemmx::hmul(sa, sb);
          for (std::size_t j = 0; j < sums.size(); ++j) {
            const std::uint32_t want = gemmx::to_out(gemmx::hmul(alpha, sums[j]), out);
            const std::uint32_t two = gemmx::to_out(gemmx::hmul(gemmx::hmul(sums[j], sa), sb), out);
            fold_told += want != two;
            ASSERT_EQ(got.bits_flat(static_cast<std::int64_t>(j)), want)
                << GetParam() << " out=" << spec(out).name << (fast ? " fast" : " slow")
                << " S=" << S << " element " << j;
          }
        }
  EXPECT_GT(fold_told, 0) << "no output tells the fold from two multiplies";
}

TEST_P(Bitequiv, TheProfileCarriesTheMeasuredValuesAndCitesTheMeasurement) {
  const mmaemu::Profile& p = mmaemu::get_profile(GetParam());
  EXPECT_EQ(p.capability, "9.0");
  EXPECT_EQ(p.sm_count, 132);
  EXPECT_EQ(p.gemm.split_grain, 128);
  EXPECT_FALSE(p.gemm.slow_block_from_preset);
  ASSERT_TRUE(p.gemm.slow_block.has_value());
  EXPECT_EQ(*p.gemm.slow_block, 128);
  EXPECT_EQ(p.gemm.merge, mmaemu::PartialMerge::forward);
  EXPECT_EQ(p.gemm.scale_fold, mmaemu::ScaleFold::fold_once);
  EXPECT_EQ(p.gemm.evidence, "bitequiv-h100-cublaslt-13.1.1");
}

INSTANTIATE_TEST_SUITE_P(Profiles, Bitequiv, ::testing::Values("h100-sxm", "h200"));

TEST(BitequivProfiles, TheMeasuredPlatformIsH100SxmWithCublasLt1311) {
  const mmaemu::Profile& p = mmaemu::get_profile("h100-sxm");
  EXPECT_EQ(p.preset, "hopper");
  EXPECT_EQ(p.cublaslt_version, "13.1.1");
  EXPECT_EQ(p.caller, "torch._scaled_mm");
  EXPECT_EQ(p.split_schemes, (std::vector<std::string>{"contiguous"}));
}

TEST(BitequivProfiles, TheSeedPlatformsKeepTheGrainOf16) {
  for (const char* name :
       {"hopper", "hopper-te", "hopper-ws0", "hopper-experimental", "ada", "ada-te", "ada-ws0"}) {
    const mmaemu::Profile& p = mmaemu::get_profile(name);
    EXPECT_EQ(p.gemm.split_grain, 16) << name;
    EXPECT_TRUE(p.gemm.slow_block_from_preset) << name;
    EXPECT_TRUE(p.gemm.evidence.empty()) << name;
  }
}

TEST(ProfileGemmData, MalformedFieldsAreValueErrorsNamingTheField) {
  const std::string head = R"({"name": "x", "preset": "hopper", "gpu_name": "g",
    "capability": "9.0", "sm_count": 1, "cublaslt_version": "v", "caller": "c",
    "torch_version": "t", "workspace_bytes": 0, "maturity": "custom", "gemm": )";
  for (const char* gemm :
       {R"({"split_grain": 0})", R"({"slow_block": "sometimes"})", R"({"slow_block": 0})",
        R"({"merge": "sideways"})", R"({"scale_fold": "thrice"})", R"(7)"}) {
    try {
      mmaemu::parse_profile_json(head + gemm + "}");
      ADD_FAILURE() << "accepted " << gemm;
    } catch (const mmaemu::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("gemm"), std::string::npos) << e.what();
    }
  }
  const mmaemu::Profile flat = mmaemu::parse_profile_json(head + R"({"slow_block": "flat"})" + "}");
  EXPECT_FALSE(flat.gemm.slow_block_from_preset);
  EXPECT_FALSE(flat.gemm.slow_block.has_value());
  const mmaemu::Profile dflt = mmaemu::parse_profile_json(head + "{}}");
  EXPECT_EQ(dflt.gemm.split_grain, 16);
  EXPECT_TRUE(dflt.gemm.slow_block_from_preset);
}

TEST(ProfileGemmData, AFlatSlowAccumulationIsOneChainPerSlice) {
  // A profile with slow_block "flat": use_fast_accum=False gives the fast chain's bits.
  const std::string text = R"({"name": "flat", "preset": "hopper", "gpu_name": "g",
    "capability": "9.0", "sm_count": 1, "cublaslt_version": "v", "caller": "c",
    "torch_version": "t", "workspace_bytes": 0, "maturity": "custom",
    "split_schemes": ["contiguous"], "gemm": {"split_grain": 128, "slow_block": "flat"}})";
  const mmaemu::Profile p = mmaemu::parse_profile_json(text);
  std::mt19937 rng(77);
  const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 2, 3, 512);
  mmaemu::AccumulateOptions opt;
  opt.profile_ptr = &p;
  opt.splitk = SplitKRequest::explicit_split(1);
  opt.threads = 1;
  const Tensor slow =
      mmaemu::accumulate(tensor(o.fa, o.M, o.K, o.A), tensor(o.fb, o.N, o.K, o.B), false, opt);
  EXPECT_EQ(count_bad(slow, recipe_all(o, {false, 1, 128, false}), "flat slow"), 0);
}

} // namespace
