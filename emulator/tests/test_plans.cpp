// SPDX-License-Identifier: BSD-2-Clause
// The GEMM plans of accumulate and scaled_mm on small seeded shapes: every expected output
// is built from model::dot over sub-ranges of K (the validated chain) and the HOST FPU's fp32
// adds (volatile float, SSE, round to nearest even), never from mmaemu's soft-float.
//   fast, S = 1:   one chain over K from +0
//   slow, S = 1:   chains of 128 from k = 0, each from +0, added left to right into +0
//   split S:       contiguous parts of ceil(K/S) rounded up to 16 (the last takes the rest),
//                  partials reduced in part order (serial, contiguous) or as a pairwise tree;
//                  under slow accumulation the 128-chunks restart at each part's start.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gemm_expect.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace {

using mmaemu::Format;
using mmaemu::SplitKRequest;
using mmaemu::Tensor;
using Codes = std::vector<std::uint8_t>;

constexpr std::uint32_t kNaN = 0x7FFFFFFFu;
constexpr std::uint32_t kPosInf = 0x7F800000u;
constexpr std::uint32_t kNegInf = 0xFF800000u;
constexpr std::uint32_t kOne = 0x3F800000u;

struct Operands {
  Format fa = Format::e4m3, fb = Format::e4m3;
  std::int64_t M = 0, N = 0, K = 0;
  Codes A, B; // [M][K], [N][K]
  Tensor a() const { return gemmx::fp8_tensor(fa, M, K, A); }
  Tensor b() const { return gemmx::fp8_tensor(fb, N, K, B); }
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
  auto draw = [&](Format f) {
    return rng() % 4 == 0 ? gemmx::finite_code(rng, f) : gemmx::moderate_code(rng, f);
  };
  for (auto& c : o.A)
    c = draw(fa);
  for (auto& c : o.B)
    c = draw(fb);
  return o;
}

// ---- the independent expectation ---------------------------------------------------------

struct Plan {
  const mmaemu::Preset* preset;
  bool fast;
  int S;
  std::string scheme; // "none", "contiguous", "serial", "pairwise"
};

std::uint32_t chain(const Operands& o, const mmaemu::Preset& p, std::int64_t m, std::int64_t n,
                    std::size_t k0, std::size_t k1) {
  const std::uint8_t* a = o.A.data() + m * o.K;
  const std::uint8_t* b = o.B.data() + n * o.K;
  return mmaemu::model::dot(std::span(a + k0, k1 - k0), std::span(b + k0, k1 - k0), 0u, p,
                            {o.fa, o.fb});
}

std::vector<std::pair<std::size_t, std::size_t>> parts_of(std::size_t K, int S) {
  std::size_t per = (K + static_cast<std::size_t>(S) - 1) / static_cast<std::size_t>(S);
  if (per % 16)
    per += 16 - per % 16;
  std::vector<std::pair<std::size_t, std::size_t>> v;
  for (int s = 0; s < S; ++s) {
    const std::size_t k0 = std::min(K, per * static_cast<std::size_t>(s));
    const std::size_t k1 = s == S - 1 ? K : std::min(K, k0 + per);
    v.emplace_back(k0, k1);
  }
  return v;
}

std::uint32_t reduce(const std::vector<std::uint32_t>& p, const std::string& scheme) {
  using gemmx::hadd;
  if (p.size() == 1)
    return p[0];
  if (scheme == "pairwise") {
    if (p.size() == 2)
      return hadd(p[0], p[1]);
    if (p.size() == 3)
      return hadd(hadd(p[0], p[1]), p[2]);
    if (p.size() == 4)
      return hadd(hadd(p[0], p[1]), hadd(p[2], p[3]));
    ADD_FAILURE() << "pairwise expectation written for S <= 4";
    return 0;
  }
  std::uint32_t acc = p[0];
  for (std::size_t s = 1; s < p.size(); ++s)
    acc = hadd(acc, p[s]);
  return acc;
}

std::uint32_t expected(const Operands& o, const Plan& plan, std::int64_t m, std::int64_t n) {
  std::vector<std::uint32_t> partials;
  for (const auto& [k0, k1] : parts_of(static_cast<std::size_t>(o.K), plan.S)) {
    if (plan.fast) {
      partials.push_back(chain(o, *plan.preset, m, n, k0, k1));
    } else {
      std::uint32_t acc = 0u; // +0
      for (std::size_t k = k0; k < k1; k += 128)
        acc = gemmx::hadd(acc, chain(o, *plan.preset, m, n, k, std::min(k1, k + 128)));
      partials.push_back(acc);
    }
  }
  return reduce(partials, plan.scheme);
}

// ---- running mmaemu ----------------------------------------------------------------------

Tensor run_accumulate(const Tensor& a, const Tensor& b, bool fast, const std::string& profile,
                      SplitKRequest sk, mmaemu::SplitDecision* d = nullptr) {
  mmaemu::AccumulateOptions opt;
  opt.profile = profile;
  opt.splitk = sk;
  opt.threads = 1;
  return mmaemu::accumulate(a, b, fast, opt, d);
}

void expect_bits(const Tensor& got, const std::vector<std::uint32_t>& want,
                 const std::string& what) {
  ASSERT_EQ(got.dtype(), Format::fp32);
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::uint32_t g = got.bits_flat(static_cast<std::int64_t>(i));
    if (mmaemu::compare_bits(want[i], g, Format::fp32) != mmaemu::Mismatch::none && bad++ < 5) {
      ADD_FAILURE() << what << " element " << i << ": expected "
                    << mmaemu::decompose_bits(want[i], Format::fp32) << " got "
                    << mmaemu::decompose_bits(g, Format::fp32);
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

std::vector<std::uint32_t> expected_all(const Operands& o, const Plan& plan) {
  std::vector<std::uint32_t> v;
  for (std::int64_t m = 0; m < o.M; ++m)
    for (std::int64_t n = 0; n < o.N; ++n)
      v.push_back(expected(o, plan, m, n));
  return v;
}

class Plans : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(gemmx::ftz_daz_off()) << "the host-FPU oracle needs FTZ/DAZ off";
    prev_ = mmaemu::set_warning_sink([this](const mmaemu::Warning& w) { seen_.push_back(w); });
  }
  void TearDown() override { mmaemu::set_warning_sink(prev_); }
  mmaemu::WarningSink prev_;
  std::vector<mmaemu::Warning> seen_;
};

const std::vector<std::int64_t> kMN = {1, 3, 16};
const std::vector<std::int64_t> kKs = {16, 32, 48, 128, 256, 384, 400};

struct SplitCase {
  std::string profile;
  int S;
  std::string scheme;
};

void sweep(const std::vector<SplitCase>& cases, std::uint32_t seed,
           std::vector<bool> fasts = {true, false}) {
  std::mt19937 rng(seed);
  const std::vector<std::pair<Format, Format>> fmts = {
      {Format::e4m3, Format::e4m3}, {Format::e5m2, Format::e4m3}, {Format::e4m3, Format::e5m2}};
  int i = 0;
  for (const auto& sc : cases) {
    const mmaemu::Preset& preset = mmaemu::get_preset_quiet(mmaemu::get_profile(sc.profile).preset);
    int distinguishing = 0; // outputs where the nearest alternative plan gives other bits
    for (std::int64_t M : kMN)
      for (std::int64_t N : kMN)
        for (std::int64_t K : kKs)
          for (bool fast : fasts) {
            if (sc.S > K)
              continue;
            const auto [fa, fb] = fmts[static_cast<std::size_t>(i++) % fmts.size()];
            const Operands o = random_operands(rng, fa, fb, M, N, K);
            const Plan plan{&preset, fast, sc.S, sc.S == 1 ? "none" : sc.scheme};
            const std::string what = sc.profile + " S=" + std::to_string(sc.S) + "," + sc.scheme +
                                     (fast ? " fast" : " slow") + " M=" + std::to_string(M) +
                                     " N=" + std::to_string(N) + " K=" + std::to_string(K) + " " +
                                     spec(fa).name + "x" + spec(fb).name;
            mmaemu::SplitDecision d;
            const Tensor got = run_accumulate(o.a(), o.b(), fast, sc.profile,
                                              SplitKRequest::explicit_split(sc.S, plan.scheme), &d);
            EXPECT_EQ(d.S, sc.S) << what;
            EXPECT_EQ(d.scheme, plan.scheme) << what;
            EXPECT_EQ(d.source, "explicit") << what;
            const auto want = expected_all(o, plan);
            expect_bits(got, want, what);
            if (::testing::Test::HasFailure())
              return;
            // The nearest alternative: pairwise (S >= 4; for S <= 3 the tree is the serial order)
            // -> serial, another split -> unsplit, slow -> fast.
            Plan alt = plan;
            if (plan.scheme == "pairwise" && plan.S >= 4) {
              alt.scheme = "serial";
            } else if (plan.S > 1) {
              alt.S = 1;
              alt.scheme = "none";
            } else {
              alt.fast = !plan.fast;
            }
            const auto other = expected_all(o, alt);
            for (std::size_t j = 0; j < want.size(); ++j)
              distinguishing += want[j] != other[j];
          }
    if (!(sc.S == 1 && fasts == std::vector<bool>{true})) {
      EXPECT_GT(distinguishing, 0) << sc.profile << " S=" << sc.S << "," << sc.scheme
                                   << ": no output tells this plan from its nearest alternative";
    }
  }
}

// ---- accumulate numerics -------------------------------------------------------------------

TEST_F(Plans, FastUnsplitIsOneChainOverKFromPositiveZero) {
  sweep({{"ada", 1, "none"}, {"hopper", 1, "none"}}, 101, {true});
}

TEST_F(Plans, SlowUnsplitAdds128ChunksLeftToRightIntoPositiveZero) {
  sweep({{"ada", 1, "none"}, {"hopper", 1, "none"}}, 202, {false});
}

TEST_F(Plans, ContiguousSplitOnHopperReducesPartsInOrder) {
  sweep({{"hopper", 2, "contiguous"}, {"hopper", 3, "contiguous"}}, 303);
}

TEST_F(Plans, SerialSplitOnAdaReducesPartsInOrder) {
  sweep({{"ada", 2, "serial"}, {"ada", 3, "serial"}}, 404);
}

TEST_F(Plans, PairwiseSplitOnAdaReducesAsABinaryTree) {
  sweep({{"ada", 3, "pairwise"}, {"ada", 4, "pairwise"}}, 505);
}

// ada, K = 64, split in 4 parts of 16: partials p0 = 2^16, p1 = 0, p2 = p3 = 2^-8 (each part's
// one product; the tests assert them from model::dot before they use them).
Operands four_partials_operands() {
  Operands o{Format::e4m3, Format::e4m3, 1, 1, 64, Codes(64, 0), Codes(64, 0)};
  o.A[0] = o.B[0] = 0x78;   // 256 * 256
  o.A[32] = o.B[32] = 0x18; // 2^-4 * 2^-4
  o.A[48] = o.B[48] = 0x18;
  return o;
}

std::vector<std::uint32_t> partials_of_four(const Operands& o, const mmaemu::Preset& p) {
  std::vector<std::uint32_t> parts;
  for (const auto& [k0, k1] : parts_of(64, 4))
    parts.push_back(chain(o, p, 0, 0, k0, k1));
  return parts;
}

TEST_F(Plans, PairwiseTreeOfFourDiffersFromTheSerialOrder) {
  // ada, K = 64, (4, "pairwise"): parts of 16. Partials p0 = 2^16, p1 = 0, p2 = p3 = 2^-8:
  //   tree:   (p0 + p1) + (p2 + p3) = 2^16 + 2^-7 (exact)
  //   serial: ((p0 + p1) + p2) + p3 = 2^16 (two ties to even)
  const Operands o = four_partials_operands();
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("ada");
  const std::vector<std::uint32_t> parts = partials_of_four(o, p);
  ASSERT_EQ(parts, (std::vector<std::uint32_t>{0x47800000u, 0u, 0x3B800000u, 0x3B800000u}));
  ASSERT_EQ(reduce(parts, "pairwise"), 0x47800001u);
  ASSERT_EQ(reduce(parts, "serial"), 0x47800000u);
  EXPECT_EQ(run_accumulate(o.a(), o.b(), true, "ada", SplitKRequest::explicit_split(4, "pairwise"))
                .bits_at(0, 0),
            0x47800001u);
  EXPECT_EQ(run_accumulate(o.a(), o.b(), true, "ada", SplitKRequest::explicit_split(4, "serial"))
                .bits_at(0, 0),
            0x47800000u);
  // Slow accumulation (one chunk per part here) reduces the same way.
  EXPECT_EQ(run_accumulate(o.a(), o.b(), false, "ada", SplitKRequest::explicit_split(4, "pairwise"))
                .bits_at(0, 0),
            0x47800001u);
  // Unsplit, the one chain truncates the small terms away: 2^16.
  EXPECT_EQ(
      run_accumulate(o.a(), o.b(), true, "ada", SplitKRequest::explicit_split(1)).bits_at(0, 0),
      chain(o, p, 0, 0, 0, 64));
}

// A profile whose merge is "reverse" (none shipped: a custom one) sums the serial partials from
// the last slice back, on every path; a "forward" profile sums them in slice order, also on the
// software path that scales each partial first (alpha_before_reduction, unit scales here).
// ada, K = 64, (4, "serial"): partials p0 = 2^16, p1 = 0, p2 = p3 = 2^-8 (as above):
//   reverse: ((p3 + p2) + p1) + p0 = 2^16 + 2^-7 (exact); forward: 2^16 (two ties to even).
TEST_F(Plans, AReverseMergeSumsThePartialsFromTheLastSliceBackAndForwardInOrder) {
  const Operands o = four_partials_operands();
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("ada");
  const std::vector<std::uint32_t> parts = partials_of_four(o, p);
  ASSERT_EQ(parts, (std::vector<std::uint32_t>{0x47800000u, 0u, 0x3B800000u, 0x3B800000u}));
  const std::vector<std::uint32_t> back(parts.rbegin(), parts.rend());
  const std::uint32_t forward = reduce(parts, "serial"), reverse = reduce(back, "serial");
  ASSERT_EQ(forward, 0x47800000u);
  ASSERT_EQ(reverse, 0x47800001u);

  mmaemu::Profile rev = mmaemu::get_profile("ada");
  rev.name = "ada-merge-reverse";
  rev.maturity = mmaemu::Maturity::custom;
  rev.gemm.merge = mmaemu::PartialMerge::reverse;
  for (bool fast : {true, false}) {
    mmaemu::AccumulateOptions opt;
    opt.profile_ptr = &rev;
    opt.splitk = SplitKRequest::explicit_split(4, "serial");
    opt.threads = 1;
    EXPECT_EQ(mmaemu::accumulate(o.a(), o.b(), fast, opt).bits_at(0, 0), reverse)
        << (fast ? "fast" : "slow");
  }
  // The forward profile on the path that scales each partial before the reduction.
  mmaemu::model::PlanDecisions d = mmaemu::model::default_decisions();
  d.alpha_before_reduction = true;
  mmaemu::model::ScopedDecisions swap(d);
  for (const mmaemu::Profile* prof :
       {&mmaemu::get_profile("ada"), &static_cast<const mmaemu::Profile&>(rev)}) {
    mmaemu::AccumulateOptions opt;
    opt.profile_ptr = prof;
    opt.splitk = SplitKRequest::explicit_split(4, "serial");
    opt.threads = 1;
    opt.scales_before_reduction = std::make_pair(kOne, kOne);
    EXPECT_EQ(mmaemu::accumulate(o.a(), o.b(), true, opt).bits_at(0, 0),
              prof == &rev ? reverse : forward)
        << prof->name << ", partials scaled first";
  }
}

TEST_F(Plans, SlowChunksRestartAtEachPartStart) {
  // K = 400, S = 2: parts [0, 208) and [208, 400); slow chunks are [0,128) [128,208) and
  // [208,336) [336,400), not the global 128-grid [0,128) [128,256) [256,384) [384,400).
  std::mt19937 rng(606);
  const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 3, 16, 400);
  const auto parts = parts_of(400, 2);
  ASSERT_EQ(parts[0], (std::pair<std::size_t, std::size_t>{0, 208}));
  ASSERT_EQ(parts[1], (std::pair<std::size_t, std::size_t>{208, 400}));
  const Plan plan{&mmaemu::get_preset_quiet("hopper"), false, 2, "contiguous"};
  const Tensor got =
      run_accumulate(o.a(), o.b(), false, "hopper", SplitKRequest::explicit_split(2, "contiguous"));
  expect_bits(got, expected_all(o, plan), "hopper slow split 2");
  // The alternative grid gives other bits somewhere (so the test can tell them apart).
  bool differs = false;
  for (std::int64_t m = 0; m < o.M; ++m)
    for (std::int64_t n = 0; n < o.N; ++n) {
      const auto& p = *plan.preset;
      auto c = [&](std::size_t k0, std::size_t k1) { return chain(o, p, m, n, k0, k1); };
      using gemmx::hadd;
      const std::uint32_t p0 = hadd(hadd(0u, c(0, 128)), c(128, 208));
      const std::uint32_t p1 = hadd(hadd(hadd(0u, c(208, 256)), c(256, 384)), c(384, 400));
      if (hadd(p0, p1) != got.bits_at(m, n))
        differs = true;
    }
  EXPECT_TRUE(differs) << "operands do not distinguish the chunk grids; change the seed";
}

TEST_F(Plans, SplitOfOneEqualsTheFastChainAndAutoOnWorkspace0IsUnsplit) {
  std::mt19937 rng(707);
  for (const char* profile : {"hopper-ws0", "ada-ws0"}) {
    const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 3, 16, 384);
    const mmaemu::Preset& p = mmaemu::get_preset_quiet(mmaemu::get_profile(profile).preset);
    mmaemu::SplitDecision d;
    const Tensor got = run_accumulate(o.a(), o.b(), true, profile, SplitKRequest::automatic(), &d);
    EXPECT_EQ(d.source, "workspace0") << profile;
    EXPECT_EQ(d.S, 1) << profile;
    expect_bits(got, expected_all(o, {&p, true, 1, "none"}), profile);
    // Explicit S = 1 gives the same bits.
    const Tensor one =
        run_accumulate(o.a(), o.b(), true, profile, SplitKRequest::explicit_split(1));
    EXPECT_EQ(one.to_bits(), got.to_bits()) << profile;
  }
}

TEST_F(Plans, ExplicitSplitWarnsUnverifiedSplit) {
  mmaemu::reset_warnings_once();
  std::mt19937 rng(708);
  const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 1, 1, 64);
  run_accumulate(o.a(), o.b(), true, "ada", SplitKRequest::explicit_split(2, "serial"));
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].cls, mmaemu::WarningClass::unverified_split);
}

// ---- scaled_mm numerics --------------------------------------------------------------------

TEST_F(Plans, ScaledMmWithUnitScalesAndFp32OutputIsTheAccumulator) {
  std::mt19937 rng(808);
  for (const char* profile : {"ada", "hopper"}) {
    const mmaemu::Preset& p = mmaemu::get_preset_quiet(mmaemu::get_profile(profile).preset);
    const std::string scheme = std::string(profile) == "ada" ? "pairwise" : "contiguous";
    for (std::int64_t M : kMN)
      for (std::int64_t K : kKs)
        for (bool fast : {true, false})
          for (int S : {1, 3}) {
            const Operands o = random_operands(rng, Format::e4m3, Format::e5m2, M, 16, K);
            const std::string sch = S == 1 ? "none" : scheme;
            mmaemu::ScaledMmCall c;
            c.input = o.a();
            c.mat2 = o.b().t();
            c.scale_a = Tensor::scalar_f32(kOne);
            c.scale_b = Tensor::scalar_f32(kOne, true);
            c.out_dtype = Format::fp32;
            c.use_fast_accum = fast;
            c.profile = profile;
            c.splitk = SplitKRequest::explicit_split(S, sch);
            c.threads = 1;
            const Tensor got = mmaemu::scaled_mm(c);
            ASSERT_EQ(got.shape(), (std::vector<std::int64_t>{M, 16}));
            expect_bits(got, expected_all(o, {&p, fast, S, sch}),
                        std::string(profile) + " scaled_mm K=" + std::to_string(K) +
                            (fast ? " fast" : " slow") + " S=" + std::to_string(S));
            if (HasFailure())
              return;
          }
  }
}

// ---- non-finite inputs ---------------------------------------------------------------------

TEST_F(Plans, NaNInARowOfAMakesThatRowCanonicalNaNAndLeavesOtherRows) {
  std::mt19937 rng(909);
  for (const char* profile : {"ada", "hopper"}) {
    const mmaemu::Preset& p = mmaemu::get_preset_quiet(mmaemu::get_profile(profile).preset);
    const std::string scheme = std::string(profile) == "ada" ? "serial" : "contiguous";
    for (bool fast : {true, false})
      for (int S : {1, 2}) {
        Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 3, 16, 256);
        const Operands clean = o;
        o.A[1 * 256 + 200] = 0x7F; // E4M3 NaN in row 1
        o.A[2 * 256 + 5] = 0xFF;   // negative NaN code in row 2
        const std::string sch = S == 1 ? "none" : scheme;
        const Tensor got =
            run_accumulate(o.a(), o.b(), fast, profile, SplitKRequest::explicit_split(S, sch));
        for (std::int64_t n = 0; n < 16; ++n) {
          EXPECT_EQ(got.bits_at(1, n), kNaN) << profile << " n=" << n;
          EXPECT_EQ(got.bits_at(2, n), kNaN) << profile << " n=" << n;
          EXPECT_EQ(got.bits_at(0, n), expected(clean, {&p, fast, S, sch}, 0, n))
              << profile << " n=" << n;
        }
      }
  }
}

TEST_F(Plans, NaNInARowOfBMakesThatColumnCanonicalNaN) {
  std::mt19937 rng(910);
  Operands o = random_operands(rng, Format::e5m2, Format::e4m3, 3, 4, 64);
  const Operands clean = o;
  o.B[2 * 64 + 63] = 0x7F;
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("hopper");
  const Tensor got =
      run_accumulate(o.a(), o.b(), true, "hopper", SplitKRequest::explicit_split(2, "contiguous"));
  for (std::int64_t m = 0; m < 3; ++m)
    for (std::int64_t n = 0; n < 4; ++n) {
      const std::uint32_t want = n == 2 ? kNaN : expected(clean, {&p, true, 2, "contiguous"}, m, n);
      EXPECT_EQ(got.bits_at(m, n), want) << m << "," << n;
    }
}

TEST_F(Plans, E5m2InfinityGivesInfOfTheProductSignOrNaNWithZero) {
  // a: E5M2 [2, 64]; b: E4M3 [4, 64]. Column k = 7 of b: +1.0 (0x38), -1.0 (0xB8), 0 (0x00),
  // +448 (0x7E). a[0][7] = +Inf (0x7C), a[1][7] = -Inf (0xFC); everything else finite.
  std::mt19937 rng(911);
  for (const char* profile : {"ada", "hopper"})
    for (bool fast : {true, false}) {
      Operands o = random_operands(rng, Format::e5m2, Format::e4m3, 2, 4, 256);
      const std::uint8_t col[4] = {0x38, 0xB8, 0x00, 0x7E};
      for (int n = 0; n < 4; ++n)
        o.B[static_cast<std::size_t>(n * 256 + 7)] = col[n];
      o.A[7] = 0x7C;
      o.A[256 + 7] = 0xFC;
      const Tensor got =
          run_accumulate(o.a(), o.b(), fast, profile, SplitKRequest::explicit_split(1));
      const std::uint32_t want[2][4] = {{kPosInf, kNegInf, kNaN, kPosInf},
                                        {kNegInf, kPosInf, kNaN, kNegInf}};
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 4; ++n)
          EXPECT_EQ(got.bits_at(m, n), want[m][n])
              << profile << (fast ? " fast " : " slow ") << m << "," << n;
    }
}

TEST_F(Plans, PlusAndMinusInfinityInOneChainGiveNaNAcrossChunksAndParts) {
  // +Inf at k = 3 and -Inf at k = 300 of row 0 (different 128-chunks and different split
  // parts); b positive there. Row 1 has +Inf twice: +Inf.
  std::mt19937 rng(912);
  for (bool fast : {true, false})
    for (int S : {1, 2}) {
      Operands o = random_operands(rng, Format::e5m2, Format::e4m3, 2, 3, 384);
      for (int n = 0; n < 3; ++n) {
        o.B[static_cast<std::size_t>(n * 384 + 3)] = 0x40;   // 2.0
        o.B[static_cast<std::size_t>(n * 384 + 300)] = 0x30; // 0.5
      }
      o.A[3] = 0x7C;
      o.A[300] = 0xFC;
      o.A[384 + 3] = 0x7C;
      o.A[384 + 300] = 0x7C;
      const std::string sch = S == 1 ? "none" : "contiguous";
      const Tensor got =
          run_accumulate(o.a(), o.b(), fast, "hopper", SplitKRequest::explicit_split(S, sch));
      for (int n = 0; n < 3; ++n) {
        EXPECT_EQ(got.bits_at(0, n), kNaN) << n;
        EXPECT_EQ(got.bits_at(1, n), kPosInf) << n;
      }
    }
}

// ---- layouts -------------------------------------------------------------------------------

Tensor relayout(const Tensor& t, int kind) {
  const std::int64_t R = t.size(0), K = t.size(1);
  Tensor v;
  switch (kind) {
  case 0:
    return t;
  case 1:
    v = Tensor::strided(t.dtype(), {R, K}, {K + 7, 1}, 5, 5 + (R - 1) * (K + 7) + K);
    break; // padded + offset
  case 2:
    v = Tensor::zeros(t.dtype(), {K, R}).t();
    break; // column-major
  case 3:
    v = Tensor::strided(t.dtype(), {R, K}, {1, R + 3}, 2, 2 + (K - 1) * (R + 3) + R);
    break; // padded col + offset
  default:
    v = Tensor::strided(t.dtype(), {R, K}, {2 * K, 2}, 1, 1 + (R - 1) * 2 * K + 2 * (K - 1) + 1);
    break;
  }
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t k = 0; k < K; ++k)
      v.set_bits_at(r, k, t.bits_at(r, k));
  return v;
}

TEST_F(Plans, AccumulateGivesTheSameBitsForEveryLayout) {
  std::mt19937 rng(1001);
  const Operands o = random_operands(rng, Format::e4m3, Format::e5m2, 3, 5, 160);
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("ada");
  for (bool fast : {true, false}) {
    const Plan plan{&p, fast, 2, "pairwise"};
    const auto want = expected_all(o, plan);
    for (int ka = 0; ka < 5; ++ka)
      for (int kb = 0; kb < 5; ++kb) {
        const Tensor a = relayout(o.a(), ka), b = relayout(o.b(), kb);
        const Tensor got =
            run_accumulate(a, b, fast, "ada", SplitKRequest::explicit_split(2, "pairwise"));
        expect_bits(got, want, "layout a" + std::to_string(ka) + " b" + std::to_string(kb));
        EXPECT_TRUE(got.is_contiguous());
      }
  }
}

TEST_F(Plans, AccumulateAcceptsAnyKNotOnlyMultiplesOf16) {
  std::mt19937 rng(1002);
  for (std::int64_t K : {1, 7, 17, 129, 200}) {
    const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 2, 3, K);
    const mmaemu::Preset& p = mmaemu::get_preset_quiet("hopper");
    for (bool fast : {true, false}) {
      const Tensor got =
          run_accumulate(o.a(), o.b(), fast, "hopper", SplitKRequest::explicit_split(1));
      expect_bits(got, expected_all(o, {&p, fast, 1, "none"}), "K=" + std::to_string(K));
    }
  }
}

// ---- empty shapes --------------------------------------------------------------------------

TEST_F(Plans, KZeroZeroFillsAndEmptyMOrNGiveEmptyResults) {
  const SplitKRequest one = SplitKRequest::explicit_split(1);
  const Tensor acc = run_accumulate(Tensor::zeros(Format::e4m3, {3, 0}),
                                    Tensor::zeros(Format::e4m3, {4, 0}), false, "ada", one);
  ASSERT_EQ(acc.shape(), (std::vector<std::int64_t>{3, 4}));
  for (auto b : acc.to_bits())
    EXPECT_EQ(b, 0u);
  EXPECT_EQ(run_accumulate(Tensor::zeros(Format::e4m3, {0, 32}),
                           Tensor::zeros(Format::e4m3, {4, 32}), true, "ada", one)
                .shape(),
            (std::vector<std::int64_t>{0, 4}));
  EXPECT_EQ(run_accumulate(Tensor::zeros(Format::e4m3, {3, 32}),
                           Tensor::zeros(Format::e4m3, {0, 32}), true, "ada", one)
                .shape(),
            (std::vector<std::int64_t>{3, 0}));

  // scaled_mm with K = 0: torch zero-fills out (+0 of the out dtype, whatever the scales).
  // mat1 [3, 0] with strides {0, 1} (contiguous for every reading), and [1, 0].
  for (Format out : {Format::fp32, Format::bf16, Format::fp16, Format::e4m3}) {
    for (std::int64_t M : {1, 3}) {
      mmaemu::ScaledMmCall c;
      c.input = Tensor::strided(Format::e4m3, {M, 0}, {0, 1}, 0, 0);
      c.mat2 = Tensor::zeros(Format::e4m3, {16, 0}).t();
      c.scale_a = Tensor::scalar_f32(0xC0000000u); // -2: would give -0 if it were applied
      c.scale_b = Tensor::scalar_f32(kOne);
      c.scale_result = Tensor::scalar_f32(0xC0400000u);
      c.out_dtype = out;
      c.profile = "hopper";
      c.splitk = one;
      const Tensor r = mmaemu::scaled_mm(c);
      ASSERT_EQ(r.dtype(), out);
      ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{M, 16}));
      for (auto b : r.to_bits())
        EXPECT_EQ(b, 0u) << spec(out).name;
    }
  }
  // M = 0 and N = 0: empty results of the right shape and dtype.
  mmaemu::ScaledMmCall m0;
  m0.input = Tensor::zeros(Format::e4m3, {0, 32});
  m0.mat2 = Tensor::zeros(Format::e4m3, {16, 32}).t();
  m0.scale_a = m0.scale_b = Tensor::scalar_f32(kOne);
  m0.out_dtype = Format::bf16;
  m0.profile = "ada";
  m0.splitk = one;
  const Tensor r0 = mmaemu::scaled_mm(m0);
  EXPECT_EQ(r0.shape(), (std::vector<std::int64_t>{0, 16}));
  EXPECT_EQ(r0.dtype(), Format::bf16);
  mmaemu::ScaledMmCall n0 = m0;
  n0.input = Tensor::zeros(Format::e4m3, {3, 32});
  n0.mat2 = Tensor::zeros(Format::e4m3, {0, 32}).t();
  EXPECT_EQ(mmaemu::scaled_mm(n0).shape(), (std::vector<std::int64_t>{3, 0}));
}

// ---- the decisions are used ----------------------------------------------------------------

std::uint32_t reduce_reversed(const std::uint32_t* p, int S, const std::string&) {
  std::uint32_t acc = p[S - 1];
  for (int s = S - 2; s >= 0; --s)
    acc = gemmx::hadd(acc, p[s]);
  return acc;
}

TEST_F(Plans, SwappingTheReductionDecisionChangesASplitResultAndIsRestored) {
  // ada, K = 48, (3, "serial"): parts [0,16) [16,32) [32,48). Row 0 / column 0 are chosen so
  // that p0 = 256 * 256 = 2^16 and p1 = p2 = 2^-4 * 2^-4 = 2^-8 (half an ulp of 2^16 in fp32):
  //   in order:  (2^16 + 2^-8) + 2^-8 = 2^16 (two ties to even)
  //   reversed:  (2^-8 + 2^-8) + 2^16 = 2^16 + 2^-7 (exact)
  Operands o{Format::e4m3, Format::e4m3, 1, 2, 48, Codes(48, 0), Codes(96, 0)};
  o.A[0] = 0x78;  // 256
  o.A[16] = 0x18; // 2^-4
  o.A[32] = 0x18;
  o.B[0] = 0x78;
  o.B[16] = 0x18;
  o.B[32] = 0x18;
  o.B[48 + 0] = 0x38; // column 1: 1.0 * 256 only (order does not matter)
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("ada");
  const std::uint32_t p0 = chain(o, p, 0, 0, 0, 16), p1 = chain(o, p, 0, 0, 16, 32),
                      p2 = chain(o, p, 0, 0, 32, 48);
  ASSERT_EQ(p0, 0x47800000u);
  ASSERT_EQ(p1, 0x3B800000u);
  ASSERT_EQ(p2, 0x3B800000u);
  const std::uint32_t in_order = gemmx::hadd(gemmx::hadd(p0, p1), p2);
  const std::uint32_t reversed = gemmx::hadd(gemmx::hadd(p2, p1), p0);
  ASSERT_EQ(in_order, 0x47800000u);
  ASSERT_EQ(reversed, 0x47800001u);

  const SplitKRequest s3 = SplitKRequest::explicit_split(3, "serial");
  EXPECT_EQ(run_accumulate(o.a(), o.b(), true, "ada", s3).bits_at(0, 0), in_order);
  {
    mmaemu::model::PlanDecisions d = mmaemu::model::default_decisions();
    d.reduce = reduce_reversed;
    mmaemu::model::ScopedDecisions swap(d);
    EXPECT_EQ(mmaemu::model::decisions().reduce, &reduce_reversed);
    const Tensor r = run_accumulate(o.a(), o.b(), true, "ada", s3);
    EXPECT_EQ(r.bits_at(0, 0), reversed);
    EXPECT_EQ(r.bits_at(0, 1), 0x43800000u); // 256
    // scaled_mm goes through the same decision.
    mmaemu::ScaledMmCall c;
    c.input = o.a();
    c.mat2 = Tensor::zeros(Format::e4m3, {16, 48}).t();
    for (int k = 0; k < 48; ++k)
      c.mat2.set_bits_at(k, 0, o.B[static_cast<std::size_t>(k)]);
    c.scale_a = c.scale_b = Tensor::scalar_f32(kOne);
    c.out_dtype = Format::fp32;
    c.profile = "ada";
    c.splitk = s3;
    EXPECT_EQ(mmaemu::scaled_mm(c).bits_at(0, 0), reversed);
  }
  EXPECT_EQ(mmaemu::model::decisions().reduce, &mmaemu::model::reduce_fp32_by_scheme);
  EXPECT_EQ(run_accumulate(o.a(), o.b(), true, "ada", s3).bits_at(0, 0), in_order);
}

std::vector<mmaemu::model::KRange> one_part_layout(std::size_t K, int S, int /*grain*/) {
  std::vector<mmaemu::model::KRange> v(static_cast<std::size_t>(S), {K, K});
  v[0] = {0, K};
  return v;
}

TEST_F(Plans, SwappingTheSplitLayoutDecisionIsUsed) {
  // A layout that puts all of K in part 0 makes a split equal the unsplit chain.
  std::mt19937 rng(1003);
  const Operands o = random_operands(rng, Format::e4m3, Format::e4m3, 3, 4, 256);
  const mmaemu::Preset& p = mmaemu::get_preset_quiet("hopper");
  const SplitKRequest s2 = SplitKRequest::explicit_split(2, "contiguous");
  const auto split = expected_all(o, {&p, true, 2, "contiguous"});
  const auto whole = expected_all(o, {&p, true, 1, "none"});
  ASSERT_NE(split, whole) << "operands do not distinguish the layouts; change the seed";
  {
    mmaemu::model::PlanDecisions d = mmaemu::model::default_decisions();
    d.split_layout = one_part_layout;
    mmaemu::model::ScopedDecisions swap(d);
    expect_bits(run_accumulate(o.a(), o.b(), true, "hopper", s2), whole, "one-part layout");
  }
  expect_bits(run_accumulate(o.a(), o.b(), true, "hopper", s2), split, "restored layout");
}

TEST_F(Plans, SlowAccumulationOnAPresetWithoutSlowChunkIsUnsupported) {
  const Tensor a = Tensor::zeros(Format::e4m3, {1, 32}), b = Tensor::zeros(Format::e4m3, {1, 32});
  EXPECT_THROW(
      run_accumulate(a, b, false, "b200-mma-sync-experimental", SplitKRequest::automatic()),
      mmaemu::UnsupportedFeatureError);
  EXPECT_NO_THROW(
      run_accumulate(a, b, true, "b200-mma-sync-experimental", SplitKRequest::automatic()));
}

TEST_F(Plans, AccumulateRejectsBadOperandsWithValueError) {
  const SplitKRequest one = SplitKRequest::explicit_split(1);
  EXPECT_THROW(run_accumulate(Tensor::zeros(Format::e4m3, {2, 32}),
                              Tensor::zeros(Format::e4m3, {2, 16}), true, "ada", one),
               mmaemu::ValueError);
  EXPECT_THROW(run_accumulate(Tensor::zeros(Format::fp16, {2, 32}),
                              Tensor::zeros(Format::e4m3, {2, 32}), true, "ada", one),
               mmaemu::ValueError);
  EXPECT_THROW(run_accumulate(Tensor::zeros(Format::e4m3, {32}),
                              Tensor::zeros(Format::e4m3, {2, 32}), true, "ada", one),
               mmaemu::ValueError);
}

// plan.alpha_before_reduction = true scales each split-K partial before the reduction. A
// split of K = 32 into two parts of 16 (hopper, "2,contiguous", fast) whose partials in
// output (0, 0) are
// P0 = 1.0 (E4M3 1.0 * E5M2 1.0 at k = 0) and P1 = 2^-24 (E4M3 2^-9 * E5M2 2^-15 at k = 16,
// one exact power-of-two term: t = 2^9 at E = -6 - 14 = -20, times 2^(E - 13) = 2^-33), with
// alpha = scale_a * scale_b = 3.0 * 1.0 = 3.0 and an fp32 output. By hand, in binary32:
//   after the reduction (the shipped decision): P0 + P1 = 1 + 2^-24 is a tie halfway between
//     1 and 1 + 2^-23 and rounds to the even 1.0; 3.0 * 1.0 = 3.0 = 0x40400000;
//   before: 3 * P0 = 3.0 and 3 * P1 = 3 * 2^-24 = 1.5 * 2^-23 (exact); their sum
//     3 + 0.75 * 2^-22 lies within [2, 4), where the ulp is 2^-22: 0.75 ulp rounds up to
//     3 + 2^-22 = 0x40400001.
// The host FPU (gemm_expect.hpp) gives the same two numbers.
TEST_F(Plans, AlphaBeforeReductionScalesEachPartialFirst) {
  // N = 16 (torch wants mat2's dimensions divisible by 16): column 0 holds the case, the other
  // columns are zero codes (output +0).
  Operands o{Format::e4m3, Format::e5m2, 1, 16, 32, Codes(32, 0), Codes(16 * 32, 0)};
  o.A[0] = 0x38;  // E4M3 1.0
  o.B[0] = 0x3c;  // E5M2 1.0
  o.A[16] = 0x01; // E4M3 2^-9 (subnormal)
  o.B[16] = 0x02; // E5M2 2^-15 (subnormal)
  const std::uint32_t three = 0x40400000u;
  const std::uint32_t p0 = 0x3F800000u, p1 = 0x33800000u; // 1.0 and 2^-24
  const std::uint32_t after = 0x40400000u, before = 0x40400001u;
  ASSERT_EQ(gemmx::hmul(gemmx::hmul(three, kOne), gemmx::hadd(p0, p1)), after);
  ASSERT_EQ(gemmx::hadd(gemmx::hmul(three, p0), gemmx::hmul(three, p1)), before);

  mmaemu::ScaledMmCall c;
  c.input = o.a();
  c.mat2 = o.b().t();
  c.scale_a = Tensor::scalar_f32(three);
  c.scale_b = Tensor::scalar_f32(kOne);
  c.out_dtype = Format::fp32;
  c.use_fast_accum = true;
  c.profile = "hopper";
  c.splitk = SplitKRequest::explicit_split(2, "contiguous");
  c.threads = 1;
  // The partials are what the derivation assumes.
  const Tensor acc = run_accumulate(o.a(), o.b(), true, "hopper", SplitKRequest::explicit_split(1));
  ASSERT_EQ(acc.bits_at(0, 0), 0x3F800000u) << "1 + 2^-24 as one chain truncates to 1.0";
  EXPECT_EQ(mmaemu::scaled_mm(c).bits_at(0, 0), after);
  {
    mmaemu::model::PlanDecisions d = mmaemu::model::default_decisions();
    d.alpha_before_reduction = true;
    mmaemu::model::ScopedDecisions swap(d);
    EXPECT_EQ(mmaemu::scaled_mm(c).bits_at(0, 0), before);
    // Unsplit, there is no reduction: the same bits either way (alpha * one chain).
    mmaemu::ScaledMmCall one = c;
    one.splitk = SplitKRequest::explicit_split(1);
    EXPECT_EQ(mmaemu::scaled_mm(one).bits_at(0, 0), after);
  }
  EXPECT_EQ(mmaemu::scaled_mm(c).bits_at(0, 0), after);
}

} // namespace
