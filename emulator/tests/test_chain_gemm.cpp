// SPDX-License-Identifier: BSD-2-Clause
// chain_gemm against chain_gemm_simple (model::dot per output), bit for bit, kernel by kernel:
// the AVX-512 16-bit kernel, the lanes kernel for AVX-512, AVX2 and the baseline, the exact
// path and automatic dispatch. A kernel this CPU cannot run is SKIPPED with the instruction
// set it lacks, never passed silently; and the kernel that automatic dispatch picks on this
// machine must be one whose tests run here unskipped.

#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../src/chain_gemm_internal.hpp"
#include "../src/chain_gemm_kernels.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/f32_arith.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/tensor.hpp"
#include "mmaemu/emulator/warnings.hpp"

using mmaemu::BlockRounding;
using mmaemu::Format;
using mmaemu::Preset;
using mmaemu::model::FormatPair;
using mmaemu::model::GemmOperands;
using mmaemu::model::detail::ChainKernel;

namespace {

constexpr std::uint32_t kSentinel = 0xDEADBEEFu;

const Preset& shipped(const char* name) {
  mmaemu::set_warning_sink([](const mmaemu::Warning&) {});
  return mmaemu::get_preset(name);
}

// Custom presets that reach what the shipped ones do not: an odd block size with rounding to
// nearest and a min_exp above most product exponents; a negative s0 (frac below the operands'
// fraction bits); 16-bit terms with rounding to nearest; 32-bit lanes with 64 terms; late_c;
// and for the binary32 kernel (toward zero) an odd block size with a high min_exp and few
// result bits, and a frac below the operands' fraction bits with frac_out above it.
const std::vector<Preset>& custom_presets() {
  static const std::vector<Preset> v = {
      mmaemu::make_custom_preset("odd_rne", 7, 9, 5, BlockRounding::nearest_even, -20),
      mmaemu::make_custom_preset("narrow", 16, 4, 10, BlockRounding::nearest_even, 5),
      mmaemu::make_custom_preset("i16_rne", 32, 13, 10, BlockRounding::nearest_even, -133),
      mmaemu::make_custom_preset("wide32", 64, 20, 23, BlockRounding::toward_zero, -150),
      mmaemu::make_custom_preset("late", 16, 13, 13, BlockRounding::toward_zero, -132, true),
      mmaemu::make_custom_preset("odd_rz", 7, 9, 5, BlockRounding::toward_zero, -20),
      mmaemu::make_custom_preset("narrow_rz", 16, 4, 10, BlockRounding::toward_zero, 5),
  };
  return v;
}

std::vector<const Preset*> all_presets() {
  std::vector<const Preset*> v = {&shipped("ada"), &shipped("hopper"), &shipped("b200_mma_sync")};
  for (const Preset& p : custom_presets())
    v.push_back(&p);
  return v;
}

const FormatPair kPairs[] = {
    {Format::e4m3, Format::e4m3}, {Format::e5m2, Format::e5m2}, {Format::e4m3, Format::e5m2}};

bool finite(Format f, std::uint8_t c) {
  if (f == Format::e4m3)
    return (c & 0x7Fu) != 0x7Fu;
  return (c & 0x7Cu) != 0x7Cu;
}

std::uint8_t max_code(Format f) {
  return f == Format::e4m3 ? 0x7E : 0x7B;
}

// Code generators: (format, rng, index in the row) -> a finite code.
using Gen = std::function<std::uint8_t(Format, std::mt19937&, std::size_t)>;

std::uint8_t any_finite(Format f, std::mt19937& rng) {
  for (;;) {
    const auto c = static_cast<std::uint8_t>(rng());
    if (finite(f, c))
      return c;
  }
}

struct NamedGen {
  const char* name;
  Gen gen;
};

const std::vector<NamedGen>& generators() {
  static const std::vector<NamedGen> v = {
      {"uniform", [](Format f, std::mt19937& r, std::size_t) { return any_finite(f, r); }},
      // One exponent, random significands and signs: heavy cancellation.
      {"same_exp",
       [](Format f, std::mt19937& r, std::size_t) {
         const int fb = f == Format::e4m3 ? 3 : 2;
         return static_cast<std::uint8_t>((r() & 0x80u) | (8u << fb) | (r() & ((1u << fb) - 1)));
       }},
      // Subnormals, zeros of both signs and the largest values.
      {"extremes",
       [](Format f, std::mt19937& r, std::size_t) {
         const int fb = f == Format::e4m3 ? 3 : 2;
         const std::uint8_t s = static_cast<std::uint8_t>(r() & 0x80u);
         switch (r() % 4) {
         case 0:
           return static_cast<std::uint8_t>(s | (r() & ((1u << fb) - 1))); // subnormal or 0
         case 1:
           return s; // +-0
         case 2:
           return static_cast<std::uint8_t>(s | max_code(f));
         default:
           return any_finite(f, r);
         }
       }},
      // Exact cancellation: x, -x, x, -x, ... with an occasional tiny term in between.
      {"cancel",
       [](Format f, std::mt19937& r, std::size_t k) {
         if (r() % 8 == 0)
           return static_cast<std::uint8_t>(r() & 0x81u);
         return static_cast<std::uint8_t>((k % 2 ? 0x80u : 0u) | (max_code(f) - (k / 2) % 3));
       }},
      // Huge and tiny terms in one block: wide exponent spread.
      {"spread",
       [](Format f, std::mt19937& r, std::size_t) {
         const std::uint8_t s = static_cast<std::uint8_t>(r() & 0x80u);
         return static_cast<std::uint8_t>(s | (r() % 2 ? max_code(f) : 1u + (r() & 3u)));
       }},
  };
  return v;
}

struct Problem {
  std::size_t M, N, K, lda, ldb, ldo, k0, k1;
  FormatPair fmt;
  std::vector<std::uint8_t> a, b;

  GemmOperands operands() const {
    GemmOperands op;
    op.a = a.data();
    op.lda = lda;
    op.b = b.data();
    op.ldb = ldb;
    op.M = M;
    op.N = N;
    op.K = K;
    op.fmt = fmt;
    return op;
  }
};

// Rows padded beyond K (lda, ldb > K) with codes that must never be read into a chain.
Problem make_problem(std::size_t M, std::size_t N, std::size_t K, std::size_t k0, std::size_t k1,
                     FormatPair fmt, const Gen& ga, const Gen& gb, std::uint32_t seed) {
  Problem p{M, N, K, K + 3, K + 5, N + 2, k0, k1, fmt, {}, {}};
  std::mt19937 rng(seed);
  p.a.assign(M * p.lda, 0x7F);
  p.b.assign(N * p.ldb, 0x7F);
  for (std::size_t m = 0; m < M; ++m) {
    for (std::size_t k = 0; k < K; ++k)
      p.a[m * p.lda + k] = ga(fmt.a, rng, k);
  }
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t k = 0; k < K; ++k)
      p.b[n * p.ldb + k] = gb(fmt.b, rng, k);
  }
  return p;
}

std::vector<std::uint32_t> run_simple(const Problem& pr, const Preset& p) {
  std::vector<std::uint32_t> out(pr.M * pr.ldo, kSentinel);
  mmaemu::model::chain_gemm_simple(pr.operands(), pr.k0, pr.k1, p, out.data(), pr.ldo);
  return out;
}

std::vector<std::uint32_t> run_fast(const Problem& pr, const Preset& p, unsigned threads) {
  std::vector<std::uint32_t> out(pr.M * pr.ldo, kSentinel);
  mmaemu::model::chain_gemm(pr.operands(), pr.k0, pr.k1, p, out.data(), pr.ldo, threads);
  return out;
}

// Counts the outputs that differ (the padding between rows included), reporting the first.
int mismatches(const std::vector<std::uint32_t>& want, const std::vector<std::uint32_t>& got,
               const std::string& what) {
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (mmaemu::compare_bits(want[i], got[i], Format::fp32) != mmaemu::Mismatch::none) {
      if (bad == 0) {
        ADD_FAILURE() << what << ": first mismatch at index " << i << ": expected "
                      << mmaemu::decompose_bits(want[i], Format::fp32) << " got "
                      << mmaemu::decompose_bits(got[i], Format::fp32);
      }
      ++bad;
    }
  }
  return bad;
}

// Every kernel, automatic dispatch included. The parameterised tests below run once per
// entry.
const ChainKernel kKernels[] = {ChainKernel::automatic,       ChainKernel::avx512_i16,
                                ChainKernel::avx512_i16_vnni, ChainKernel::lanes_avx512,
                                ChainKernel::lanes_avx2,      ChainKernel::lanes_base,
                                ChainKernel::f32_avx2,        ChainKernel::exact};

// The instruction set a kernel needs that this CPU lacks ("" if none), stated here from the
// kernels' documentation (chain_gemm_internal.hpp) rather than asked from chain_gemm, so that
// a dispatcher that picks a kernel the CPU cannot run, or a kernel refused on a CPU that can
// run it, shows up as a failure.
std::string lacking(ChainKernel k) {
  switch (k) {
  case ChainKernel::avx512_i16_vnni:
    if (!lacking(ChainKernel::avx512_i16).empty())
      return lacking(ChainKernel::avx512_i16);
    return __builtin_cpu_supports("avx512vnni") ? "" : "AVX-512 VNNI";
  case ChainKernel::avx512_i16:
  case ChainKernel::lanes_avx512:
    if (!__builtin_cpu_supports("avx512f"))
      return "AVX-512F";
    if (!__builtin_cpu_supports("avx512bw"))
      return "AVX-512BW";
    if (!__builtin_cpu_supports("avx512cd"))
      return "AVX-512CD";
    if (!__builtin_cpu_supports("avx512dq"))
      return "AVX-512DQ";
    if (!__builtin_cpu_supports("avx512vl"))
      return "AVX-512VL";
    return "";
  case ChainKernel::lanes_avx2:
    return __builtin_cpu_supports("avx2") ? "" : "AVX2";
  case ChainKernel::f32_avx2:
    if (!__builtin_cpu_supports("avx2"))
      return "AVX2";
    return __builtin_cpu_supports("fma") ? "" : "FMA";
  default:
    return "";
  }
}

// Forces a kernel for one scope.
class ForcedKernel {
public:
  explicit ForcedKernel(ChainKernel k) : ok_(mmaemu::model::detail::force_chain_kernel(k)) {}
  ~ForcedKernel() { mmaemu::model::detail::force_chain_kernel(ChainKernel::automatic); }
  ForcedKernel(const ForcedKernel&) = delete;
  ForcedKernel& operator=(const ForcedKernel&) = delete;
  bool ok() const { return ok_; }

private:
  bool ok_;
};

std::string describe(const Problem& pr, const Preset& p, const char* gen) {
  return std::string(p.name) + " " + mmaemu::format_name(pr.fmt.a) + "x" +
         mmaemu::format_name(pr.fmt.b) + " " + gen + " M=" + std::to_string(pr.M) +
         " N=" + std::to_string(pr.N) + " K=" + std::to_string(pr.K) + " k=[" +
         std::to_string(pr.k0) + "," + std::to_string(pr.k1) + ")";
}

// One kernel's tests: SKIPPED naming the missing instruction set on a CPU that lacks it;
// FAILED if the CPU has it and chain_gemm still refuses the kernel.
class ChainGemmKernel : public testing::TestWithParam<ChainKernel> {
protected:
  void SetUp() override {
    const std::string lacks = lacking(GetParam());
    if (!lacks.empty())
      GTEST_SKIP() << "CPU lacks " << lacks;
    forced_.emplace(GetParam());
    ASSERT_TRUE(forced_->ok()) << "this CPU has what "
                               << mmaemu::model::detail::chain_kernel_name(GetParam())
                               << " needs, but chain_gemm refuses to run it";
  }
  void TearDown() override { forced_.reset(); }

  // The kernel in force, with 1 and 2 threads, against the simple path.
  int check(const Problem& pr, const Preset& p, const char* gen, int& runs) {
    const std::vector<std::uint32_t> want = run_simple(pr, p);
    int bad = 0;
    for (unsigned threads : {1u, 2u}) {
      const std::string what = describe(pr, p, gen) +
                               " kernel=" + mmaemu::model::detail::chain_kernel_name(GetParam()) +
                               " threads=" + std::to_string(threads);
      bad += mismatches(want, run_fast(pr, p, threads), what);
      ++runs;
    }
    return bad;
  }

private:
  std::optional<ForcedKernel> forced_;
};

struct Shape {
  std::size_t M, N;
};
const Shape kShapes[] = {{1, 1}, {7, 33}, {33, 65}, {65, 7}, {1, 65}, {33, 1}};
const std::size_t kKs[] = {1, 15, 16, 17, 31, 32, 33, 100, 128, 1000};

TEST_P(ChainGemmKernel, RandomCodesEveryPresetFormatAndK) {
  int runs = 0;
  std::uint32_t seed = 1;
  std::size_t shape = 0;
  for (const Preset* p : all_presets()) {
    for (const FormatPair& fmt : kPairs) {
      for (std::size_t K : kKs) {
        // Long chains on the small shapes only, to keep the simple path quick.
        const Shape s = K >= 1000 ? kShapes[shape % 2 + 4] : kShapes[shape % 6];
        ++shape;
        const NamedGen& g = generators()[0];
        const Problem pr = make_problem(s.M, s.N, K, 0, K, fmt, g.gen, g.gen, seed++);
        ASSERT_EQ(check(pr, *p, g.name, runs), 0);
      }
    }
  }
  EXPECT_GT(runs, 200);
}

TEST_P(ChainGemmKernel, SubRangesOfK) {
  int runs = 0;
  std::uint32_t seed = 100;
  const std::size_t ranges[][3] = {{40, 1, 40},   {40, 7, 23},    {100, 33, 100},
                                   {100, 50, 50}, {300, 17, 290}, {65, 64, 65}};
  for (const Preset* p : all_presets()) {
    for (const FormatPair& fmt : kPairs) {
      for (const auto& rg : ranges) {
        const NamedGen& g = generators()[seed % generators().size()];
        const Problem pr = make_problem(7, 33, rg[0], rg[1], rg[2], fmt, g.gen, g.gen, seed++);
        ASSERT_EQ(check(pr, *p, g.name, runs), 0);
      }
    }
  }
}

TEST_P(ChainGemmKernel, AdversarialCodes) {
  int runs = 0;
  std::uint32_t seed = 1000;
  const std::size_t Ks[] = {16, 33, 128, 257};
  for (const Preset* p : all_presets()) {
    for (const FormatPair& fmt : kPairs) {
      for (const NamedGen& ga : generators()) {
        for (const NamedGen& gb : generators()) {
          const std::size_t K = Ks[seed % 4];
          const Problem pr = make_problem(9, 17, K, 0, K, fmt, ga.gen, gb.gen, seed++);
          const std::string name = std::string(ga.name) + "/" + gb.name;
          ASSERT_EQ(check(pr, *p, name.c_str(), runs), 0);
        }
      }
    }
  }
}

// Tiny slabs: many slabs of rows (b decoded again for each) and of single-panel columns.
TEST_P(ChainGemmKernel, SlabsDoNotChangeBits) {
  struct SmallSlabs {
    SmallSlabs() { mmaemu::model::detail::force_chain_slab_bytes(1); }
    ~SmallSlabs() { mmaemu::model::detail::force_chain_slab_bytes(0); }
  } small;
  int runs = 0;
  std::uint32_t seed = 300;
  for (const char* name : {"ada", "b200_mma_sync"}) {
    const NamedGen& g = generators()[0];
    const Problem pr = make_problem(150, 300, 64, 3, 61, kPairs[2], g.gen, g.gen, seed++);
    ASSERT_EQ(check(pr, shipped(name), "slabs", runs), 0);
  }
}

// Not the kernels' contract (the plan sanitises), but a non-finite code must not change any
// other output, and its own outputs follow dot's rule.
TEST_P(ChainGemmKernel, NonFiniteCodesFollowDot) {
  int runs = 0;
  for (const FormatPair& fmt : kPairs) {
    const NamedGen& g = generators()[0];
    Problem pr = make_problem(9, 20, 40, 0, 40, fmt, g.gen, g.gen, 5);
    pr.a[3 * pr.lda + 17] = 0x7F;                                // NaN (e4m3) / NaN (e5m2)
    pr.b[11 * pr.ldb + 2] = fmt.b == Format::e4m3 ? 0xFF : 0xFC; // NaN / -Inf
    pr.a[5 * pr.lda + 39] = 0x7F;
    ASSERT_EQ(check(pr, shipped("ada"), "nonfinite", runs), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, ChainGemmKernel, testing::ValuesIn(kKernels),
                         [](const testing::TestParamInfo<ChainKernel>& info) {
                           return std::string(mmaemu::model::detail::chain_kernel_name(info.param));
                         });

// `make test` must not pass on a machine whose chosen kernel went untested: the kernel that
// automatic dispatch picks here, for every shipped and custom preset and format pair, is one
// of the kernels above, and its tests run unskipped on this CPU (ctest runs every test in its
// own process, so "unskipped" is the tests' own skip rule, `lacking`, applied here).
TEST(ChainGemm, TheKernelDispatchPicksHereIsTestedUnskipped) {
  using mmaemu::model::detail::chain_kernel_for;
  using mmaemu::model::detail::chain_kernel_name;
  const ForcedKernel automatic(ChainKernel::automatic);
  std::string picked;
  for (const Preset* p : all_presets()) {
    for (const FormatPair& fmt : kPairs) {
      const ChainKernel k = chain_kernel_for(*p, fmt);
      const std::string where = p->name + " " + mmaemu::format_name(fmt.a) + "x" +
                                mmaemu::format_name(fmt.b) + ": " + chain_kernel_name(k);
      EXPECT_NE(k, ChainKernel::automatic) << where;
      EXPECT_NE(std::find(std::begin(kKernels), std::end(kKernels), k), std::end(kKernels))
          << where << " has no tests";
      EXPECT_EQ(lacking(k), "") << where << ": dispatch picks it, but its tests skip here";
      if (picked.find(chain_kernel_name(k)) == std::string::npos)
        picked += std::string(picked.empty() ? "" : ", ") + chain_kernel_name(k);
    }
  }
  RecordProperty("kernels_picked", picked);
  // And the automatic choice computes the same bits as the simple path.
  int bad = 0;
  std::uint32_t seed = 4242;
  for (const Preset* p : all_presets()) {
    const NamedGen& g = generators()[seed % generators().size()];
    const Problem pr = make_problem(9, 33, 100, 0, 100, kPairs[seed % 3], g.gen, g.gen, seed);
    ++seed;
    bad += mismatches(run_simple(pr, *p), run_fast(pr, *p, 2),
                      describe(pr, *p, g.name) + " kernel=automatic");
  }
  EXPECT_EQ(bad, 0);
}

// The AVX-512 row decoder (decode_pair_run_avx512) is what every FP8 format's rows take on an
// AVX-512 host (pair_codes16 accepts their tables), and it writes the same PairA entries as the
// table decoder: every code at every position, runs of 1 to 40 pairs (the masked last step),
// ada's 16-code and hopper's 32-code blocks, a short last block, two segments.
TEST(ChainGemm, TheVectorRowDecoderWritesWhatTheTableDecoderWrites) {
  namespace cg = mmaemu::model::cg;
  if (!mmaemu::model::detail::force_chain_kernel(ChainKernel::avx512_i16))
    GTEST_SKIP() << "this CPU has no AVX-512 BW";
  mmaemu::model::detail::force_chain_kernel(ChainKernel::automatic);
  std::mt19937 rng(2026);
  for (const char* name : {"ada", "hopper"}) {
    const Preset& p = mmaemu::get_preset_quiet(name);
    for (Format f : {Format::e4m3, Format::e5m2}) {
      const auto tab = cg::row_codes(mmaemu::model::fp8_operand_table(f).data(), f, 6, 6);
      cg::PairCodes16 t16;
      ASSERT_TRUE(cg::pair_codes16(tab.data(), t16)) << name << " " << mmaemu::format_name(f);
      for (std::int64_t L : {2, 16, 30, 32, 33, 64, 95, 160, 1280, 1281}) {
        std::vector<std::uint8_t> codes(static_cast<std::size_t>(2 * L + 7));
        for (std::size_t i = 0; i < codes.size(); ++i)
          codes[i] = static_cast<std::uint8_t>(i < 256 ? i : rng());
        std::shuffle(codes.begin(), codes.end(), rng);
        cg::Plan pl{};
        pl.nfma = p.nfma;
        pl.row_tab = tab.data();
        const std::int64_t nb = (L + p.nfma - 1) / p.nfma;
        const std::int64_t ppb = p.nfma / 2;
        pl.segs = {{0, L, nb, 0},
                   {static_cast<std::size_t>(L + 3), L, nb, static_cast<std::size_t>(nb * ppb)}};
        const std::size_t pairs = static_cast<std::size_t>(2 * nb * ppb);
        std::vector<cg::PairA> want(pairs, cg::PairA{7, 7, 7}), got(pairs, cg::PairA{9, 9, 9});
        const bool want_special = cg::decode_pair_row(pl, codes.data(), want.data());
        pl.row16 = &t16;
        const bool got_special = cg::decode_pair_row(pl, codes.data(), got.data());
        EXPECT_EQ(got_special, want_special) << name << " L=" << L;
        for (std::size_t i = 0; i < pairs; ++i) {
          ASSERT_EQ(got[i].mag, want[i].mag) << name << " L=" << L << " pair " << i;
          ASSERT_EQ(got[i].exp, want[i].exp) << name << " L=" << L << " pair " << i;
          ASSERT_EQ(got[i].sgn, want[i].sgn) << name << " L=" << L << " pair " << i;
        }
      }
    }
  }
}

// The binary32 carry of the AVX-512 kernel takes ada and hopper, every format pair, up to
// chains far longer than any K (it checks no lane, so its bounds must hold), and a preset
// rounding toward zero with another frac_out (odd_rz); it leaves rounding to nearest (i16_rne),
// a negative s0 (narrow_rz), and a chain long enough to leave its window.
TEST(ChainGemm, TheBinary32CarryTakesWhatItCanRepresent) {
  namespace cg = mmaemu::model::cg;
  for (const char* name : {"ada", "hopper"}) {
    for (const FormatPair& fmt : kPairs) {
      EXPECT_TRUE(cg::i16_carry32_fits(shipped(name), fmt, std::int64_t{1} << 40)) << name;
      EXPECT_FALSE(cg::i16_carry32_fits(shipped(name), fmt, std::int64_t{1} << 62)) << name;
    }
  }
  const std::vector<Preset>& custom = custom_presets();
  EXPECT_TRUE(cg::i16_carry32_fits(custom[5], kPairs[0], 8192));  // odd_rz
  EXPECT_FALSE(cg::i16_carry32_fits(custom[2], kPairs[0], 8192)); // i16_rne
  EXPECT_FALSE(cg::i16_carry32_fits(custom[6], kPairs[0], 8192)); // narrow_rz
}

// The AVX-512 panel decoder (decode_panel_run_avx512) writes the same PairB entries and
// special columns as the table decoder: every code in every column, runs of 1 to 40 pairs (the
// masked last step), ada's and hopper's blocks, a short last block, two segments, the binary32
// carry's exponent offset, a full panel and a partial one (which the table decoder takes).
TEST(ChainGemm, TheVectorPanelDecoderWritesWhatTheTableDecoderWrites) {
  namespace cg = mmaemu::model::cg;
  if (!mmaemu::model::detail::force_chain_kernel(ChainKernel::avx512_i16))
    GTEST_SKIP() << "this CPU has no AVX-512 BW";
  mmaemu::model::detail::force_chain_kernel(ChainKernel::automatic);
  std::mt19937 rng(2027);
  for (const char* name : {"ada", "hopper"}) {
    const Preset& p = mmaemu::get_preset_quiet(name);
    for (Format f : {Format::e4m3, Format::e5m2}) {
      const auto& tab = mmaemu::model::fp8_operand_table(f);
      for (int offset : {0, -13}) {
        cg::PairCodes16 t16;
        ASSERT_TRUE(cg::panel_codes16(tab.data(), offset, t16)) << name;
        for (std::int64_t L : {2, 16, 30, 32, 33, 64, 95, 160, 1280, 1281}) {
          for (std::size_t N : {std::size_t{16}, std::size_t{21}}) {
            const std::size_t ldb = static_cast<std::size_t>(2 * L + 7);
            std::vector<std::uint8_t> b(N * ldb);
            for (std::size_t i = 0; i < b.size(); ++i)
              b[i] = static_cast<std::uint8_t>(i < 256 ? i : rng());
            std::shuffle(b.begin(), b.end(), rng);
            GemmOperands op{};
            op.b = b.data();
            op.ldb = ldb;
            op.N = N;
            op.K = ldb;
            cg::Plan pl{};
            pl.op = &op;
            pl.nfma = p.nfma;
            pl.panel_tab = tab.data();
            pl.b_exp_offset = offset;
            const std::int64_t nb = (L + p.nfma - 1) / p.nfma;
            const std::int64_t ppb = p.nfma / 2;
            pl.segs = {
                {0, L, nb, 0},
                {static_cast<std::size_t>(L + 3), L, nb, static_cast<std::size_t>(nb * ppb)}};
            pl.pair_stride = static_cast<std::size_t>(2 * nb * ppb);
            for (std::size_t n0 = 0; n0 < N; n0 += 16) {
              std::vector<cg::PairB> want(pl.pair_stride), got(pl.pair_stride);
              std::memset(want.data(), 0x5A, want.size() * sizeof(cg::PairB));
              std::memset(got.data(), 0xA5, got.size() * sizeof(cg::PairB));
              std::vector<std::uint8_t> want_special(N, 7), got_special(N, 9);
              pl.panel16 = nullptr;
              cg::decode_pair_panel(pl, n0, want.data(), want_special.data());
              pl.panel16 = &t16;
              cg::decode_pair_panel(pl, n0, got.data(), got_special.data());
              const std::string where = std::string(name) + " " + mmaemu::format_name(f) +
                                        " offset " + std::to_string(offset) +
                                        " L=" + std::to_string(L) + " N=" + std::to_string(N) +
                                        " n0=" + std::to_string(n0);
              for (std::size_t n = n0; n < std::min(N, n0 + 16); ++n)
                ASSERT_EQ(got_special[n], want_special[n]) << where << " column " << n;
              ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(cg::PairB)), 0)
                  << where;
            }
          }
        }
      }
    }
  }
}

// Enough rows, panels and MACs that several threads share the tiles.
TEST(ChainGemm, ThreadCountDoesNotChangeBits) {
  std::uint32_t seed = 77;
  for (const Preset* p : all_presets()) {
    for (const FormatPair& fmt : kPairs) {
      const NamedGen& g = generators()[seed % generators().size()];
      const Problem pr = make_problem(150, 300, 96, 0, 96, fmt, g.gen, g.gen, seed++);
      const std::vector<std::uint32_t> want = run_simple(pr, *p);
      for (unsigned threads : {1u, 2u, 3u, 0u}) {
        ASSERT_EQ(mismatches(want, run_fast(pr, *p, threads),
                             describe(pr, *p, g.name) + " threads=" + std::to_string(threads)),
                  0);
      }
    }
  }
}

TEST(ChainGemm, EmptyRangeIsPositiveZero) {
  const NamedGen& g = generators()[0];
  const Problem pr = make_problem(3, 5, 10, 4, 4, kPairs[0], g.gen, g.gen, 9);
  const std::vector<std::uint32_t> got = run_fast(pr, shipped("ada"), 1);
  for (std::size_t m = 0; m < pr.M; ++m) {
    for (std::size_t n = 0; n < pr.N; ++n)
      EXPECT_EQ(got[m * pr.ldo + n], 0u);
  }
}

TEST(ChainGemm, RejectsARangeOutsideK) {
  const NamedGen& g = generators()[0];
  const Problem pr = make_problem(2, 2, 10, 0, 10, kPairs[0], g.gen, g.gen, 9);
  std::vector<std::uint32_t> out(pr.M * pr.ldo);
  EXPECT_THROW(mmaemu::model::chain_gemm(pr.operands(), 0, 11, shipped("ada"), out.data(), pr.ldo),
               mmaemu::ValueError);
  EXPECT_THROW(mmaemu::model::chain_gemm(pr.operands(), 5, 4, shipped("ada"), out.data(), pr.ldo),
               mmaemu::ValueError);
}

// The fast kernels are really the ones taken, so that the tests above cover each of them.
TEST(ChainGemm, KernelChoice) {
  using mmaemu::model::detail::chain_kernel_for;
  const ForcedKernel automatic(ChainKernel::automatic);
  const std::vector<Preset>& custom = custom_presets();
  EXPECT_NE(chain_kernel_for(shipped("ada"), kPairs[0]), ChainKernel::exact);
  EXPECT_EQ(chain_kernel_for(custom[4], kPairs[0]), ChainKernel::exact); // late_c
  const std::string lacks = lacking(ChainKernel::avx512_i16);
  if (!lacks.empty() && lacking(ChainKernel::f32_avx2).empty()) {
    // AVX2 and FMA without AVX-512: the binary32 kernel where its bounds hold (toward-zero
    // rounding, sums below 2^24 units, frac <= 21), the 32- or 64-bit lanes otherwise.
    for (const FormatPair& fmt : kPairs) {
      EXPECT_EQ(chain_kernel_for(shipped("ada"), fmt), ChainKernel::f32_avx2);
      EXPECT_EQ(chain_kernel_for(shipped("hopper"), fmt), ChainKernel::f32_avx2);
      EXPECT_EQ(chain_kernel_for(shipped("b200_mma_sync"), fmt), ChainKernel::lanes_avx2);
      EXPECT_EQ(chain_kernel_for(custom[0], fmt), ChainKernel::lanes_avx2); // odd_rne
      EXPECT_EQ(chain_kernel_for(custom[3], fmt), ChainKernel::lanes_avx2); // wide32: 2^28
      EXPECT_EQ(chain_kernel_for(custom[5], fmt), ChainKernel::f32_avx2);   // odd_rz
      EXPECT_EQ(chain_kernel_for(custom[6], fmt), ChainKernel::f32_avx2);   // narrow_rz
    }
    GTEST_SKIP() << "CPU lacks " << lacks << ": the AVX-512 choices are not checked here";
  }
  if (!lacks.empty())
    GTEST_SKIP() << "CPU lacks " << lacks << ": the AVX-512 choices are not checked here";
  // The 16-bit kernel with VNNI where the CPU has it.
  const ChainKernel i16 = lacking(ChainKernel::avx512_i16_vnni).empty()
                              ? ChainKernel::avx512_i16_vnni
                              : ChainKernel::avx512_i16;
  for (const FormatPair& fmt : kPairs) {
    EXPECT_EQ(chain_kernel_for(shipped("ada"), fmt), i16);
    EXPECT_EQ(chain_kernel_for(shipped("hopper"), fmt), i16);
    EXPECT_EQ(chain_kernel_for(shipped("b200_mma_sync"), fmt), ChainKernel::lanes_avx512);
    EXPECT_EQ(chain_kernel_for(custom[0], fmt), i16);                       // odd_rne
    EXPECT_EQ(chain_kernel_for(custom[1], fmt), i16);                       // narrow
    EXPECT_EQ(chain_kernel_for(custom[2], fmt), i16);                       // i16_rne
    EXPECT_EQ(chain_kernel_for(custom[3], fmt), ChainKernel::lanes_avx512); // wide32
  }
}

// ---------------------------------------------------------------------------------------
// Whole plans (chain_gemm_plan): split-K parts and slow-accumulation chunks in one pass,
// against chain_gemm_plan_simple (model::dot per chunk, the promotion called value by value).

// The shipped promotion behind another function pointer: chain_gemm_plan then calls it value
// by value instead of using the CPU's add, so both ways are checked against each other.
std::uint32_t promote_called(std::uint32_t acc, std::uint32_t chunk) {
  return mmaemu::model::promote_fp32_add(acc, chunk);
}

// The shipped reduction behind another function pointer, called value by value like
// promote_called.
std::uint32_t reduce_called(const std::uint32_t* partials, int S, const std::string& scheme) {
  return mmaemu::model::reduce_fp32_by_scheme(partials, S, scheme);
}

using ReduceFn = std::uint32_t (*)(const std::uint32_t*, int, const std::string&);

// The split reductions a plan is checked with: none (every part an output), the shipped one
// (the CPU's adds) and the called one, serial and pairwise.
struct Reduction {
  ReduceFn fn;
  const char* scheme;
};
const Reduction kReductions[] = {{nullptr, ""},
                                 {&mmaemu::model::reduce_fp32_by_scheme, "contiguous"},
                                 {&mmaemu::model::reduce_fp32_by_scheme, "pairwise"},
                                 {&reduce_called, "serial"},
                                 {&reduce_called, "pairwise"}};

std::string describe(const Reduction& r) {
  if (!r.fn)
    return "";
  return std::string(" reduce=") + r.scheme + (r.fn == &reduce_called ? " (called)" : "");
}

// S parts as the shipped split layout makes them (at the hopper profiles' grain of 16); slow:
// chunks of `chunk` from each part's start, promoted with `promote`; fast (promote == nullptr): one
// chunk per part; the parts reduced by `red` when it has a function.
mmaemu::model::ChainPlan make_plan(const Problem& pr, const Preset& /*p*/, int S, int chunk,
                                   std::uint32_t (*promote)(std::uint32_t, std::uint32_t),
                                   const Reduction& red = kReductions[0]) {
  mmaemu::model::ChainPlan plan;
  plan.promote = promote;
  plan.reduce = red.fn;
  plan.scheme = red.scheme;
  for (const mmaemu::model::KRange& part : mmaemu::model::split_layout_contiguous(pr.K, S, 16)) {
    auto& chunks = plan.parts.emplace_back();
    if (part.first >= part.second)
      continue;
    if (!promote)
      chunks.push_back(part);
    else
      chunks = mmaemu::model::slow_chunks_from_part_start(part, chunk);
  }
  return plan;
}

std::vector<std::uint32_t> run_plan(const Problem& pr, const mmaemu::model::ChainPlan& plan,
                                    const Preset& p, std::optional<unsigned> threads) {
  const std::size_t S = plan.reduce ? 1 : plan.parts.size();
  std::vector<std::uint32_t> out(S * pr.M * pr.ldo, kSentinel);
  std::vector<std::uint32_t*> outs(S);
  for (std::size_t s = 0; s < S; ++s)
    outs[s] = out.data() + s * pr.M * pr.ldo;
  if (threads) {
    mmaemu::model::chain_gemm_plan(pr.operands(), plan, p, outs.data(), pr.ldo, *threads);
  } else {
    mmaemu::model::chain_gemm_plan_simple(pr.operands(), plan, p, outs.data(), pr.ldo);
  }
  return out;
}

// Every plan: fast and slow (the CPU's add and the called promotion), S = 1, 2, 3 and 5, K
// multiples of 16 and 128 and not, chunks of 128 and of 48; split parts kept apart or reduced
// (the CPU's adds, serial and as a pairwise tree of an odd and an even S, and the called
// reduction); with 1 and 2 threads; both orientations (few rows of a run transposed) and the
// streamed and slab arrangements.
TEST_P(ChainGemmKernel, PlansAgreeWithTheSimplePath) {
  int runs = 0;
  std::uint32_t seed = 5000;
  struct Case {
    std::size_t M, N, K;
    int S, chunk;
  };
  const Case cases[] = {{9, 40, 300, 1, 128},  {40, 9, 300, 2, 128}, {5, 70, 517, 3, 128},
                        {33, 20, 256, 5, 48},  {70, 3, 100, 2, 48},  {1, 33, 1000, 1, 128},
                        {17, 17, 128, 3, 128}, {2, 90, 700, 2, 128}};
  using PromoteFn = std::uint32_t (*)(std::uint32_t, std::uint32_t);
  const PromoteFn promotions[] = {nullptr, &mmaemu::model::promote_fp32_add, &promote_called};
  for (const Preset* p : all_presets()) {
    for (const Case& c : cases) {
      const FormatPair& fmt = kPairs[seed % 3];
      const NamedGen& ga = generators()[seed % generators().size()];
      const NamedGen& gb = generators()[(seed / 5) % generators().size()];
      const Problem pr = make_problem(c.M, c.N, c.K, 0, c.K, fmt, ga.gen, gb.gen, seed++);
      for (PromoteFn promote : promotions) {
        for (const Reduction& red : kReductions) {
          if (red.fn && c.S == 1)
            continue;
          const mmaemu::model::ChainPlan plan = make_plan(pr, *p, c.S, c.chunk, promote, red);
          const std::vector<std::uint32_t> want = run_plan(pr, plan, *p, std::nullopt);
          for (unsigned threads : {1u, 2u}) {
            const std::string what =
                describe(pr, *p, ga.name) + " S=" + std::to_string(c.S) +
                (promote ? " slow chunk=" + std::to_string(c.chunk) : std::string(" fast")) +
                (promote == &promote_called ? " (called)" : "") + describe(red) +
                " kernel=" + mmaemu::model::detail::chain_kernel_name(GetParam()) +
                " threads=" + std::to_string(threads);
            ASSERT_EQ(mismatches(want, run_plan(pr, plan, *p, threads), what), 0);
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 1200);
}

// accumulate (the plan built from plan_decisions, the split reduction, the non-finite patch)
// with the kernel in force against the same call on the exact kernel (model::dot per chunk):
// fast and slow, every split scheme the profiles allow, S = 1 to 4, K not a multiple of 16 or
// 128, NaN and Inf codes, 1 and 2 threads, both orientations.
TEST_P(ChainGemmKernel, AccumulateAgreesWithTheExactKernelOnEveryPlan) {
  struct Split {
    const char* profile;
    int S;
    const char* scheme;
  };
  const Split splits[] = {{"ada", 1, "none"},          {"ada", 3, "serial"},
                          {"ada", 4, "pairwise"},      {"hopper", 1, "none"},
                          {"hopper", 2, "contiguous"}, {"hopper", 3, "contiguous"}};
  struct Shape3 {
    std::int64_t M, N, K;
  };
  const Shape3 shapes[] = {{9, 40, 300}, {40, 9, 517}, {3, 70, 100}};
  std::mt19937 rng(31337);
  int runs = 0;
  for (const Shape3& sh : shapes) {
    for (const bool special : {false, true}) {
      std::vector<std::uint32_t> ab(static_cast<std::size_t>(sh.M * sh.K)),
          bb(static_cast<std::size_t>(sh.N * sh.K));
      for (auto& c : ab)
        c = any_finite(Format::e4m3, rng);
      for (auto& c : bb)
        c = any_finite(Format::e5m2, rng);
      if (special) {
        ab[static_cast<std::size_t>(1 * sh.K + 7)] = 0x7F;          // NaN in a's row 1
        bb[static_cast<std::size_t>(2 * sh.K + sh.K - 1)] = 0xFC;   // -Inf in b's row 2
        bb[static_cast<std::size_t>((sh.N - 1) * sh.K + 3)] = 0x7C; // +Inf in b's last row
      }
      const auto a = mmaemu::Tensor::from_bits(Format::e4m3, {sh.M, sh.K}, ab);
      const auto b = mmaemu::Tensor::from_bits(Format::e5m2, {sh.N, sh.K}, bb);
      for (const Split& sp : splits) {
        for (const bool fast : {true, false}) {
          mmaemu::AccumulateOptions opt;
          opt.profile = sp.profile;
          opt.splitk = mmaemu::SplitKRequest::explicit_split(sp.S, sp.scheme);
          opt.threads = 1;
          mmaemu::model::detail::force_chain_kernel(ChainKernel::exact);
          const std::vector<std::uint32_t> want = mmaemu::accumulate(a, b, fast, opt).to_bits();
          mmaemu::model::detail::force_chain_kernel(GetParam());
          for (unsigned threads : {1u, 2u}) {
            opt.threads = threads;
            const std::string what =
                std::string(sp.profile) + " S=" + std::to_string(sp.S) + "," + sp.scheme +
                (fast ? " fast" : " slow") + " M=" + std::to_string(sh.M) +
                " N=" + std::to_string(sh.N) + " K=" + std::to_string(sh.K) +
                (special ? " with NaN/Inf" : "") + " threads=" + std::to_string(threads);
            ASSERT_EQ(mismatches(want, mmaemu::accumulate(a, b, fast, opt).to_bits(), what), 0);
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 144);
}

// Under automatic dispatch, a single row or column of outputs goes through model::dot (its
// binary32 chain where that applies), split along the other dimension over the threads: every
// plan, fast, slow and split with a reduction, is the simple path's.
TEST(ChainGemmPlan, OneRowOrColumnAgreesWithTheSimplePath) {
  const ForcedKernel automatic(ChainKernel::automatic);
  std::uint32_t seed = 7000;
  for (const Preset* p : all_presets()) {
    for (const auto& [M, N] :
         {std::pair<std::size_t, std::size_t>{1, 300}, {300, 1}, {1, 1}, {1, 70}}) {
      const NamedGen& g = generators()[seed % generators().size()];
      const Problem pr = make_problem(M, N, 260, 0, 260, kPairs[seed % 3], g.gen, g.gen, seed);
      ++seed;
      for (auto promote : {static_cast<std::uint32_t (*)(std::uint32_t, std::uint32_t)>(nullptr),
                           &mmaemu::model::promote_fp32_add}) {
        for (const Reduction& red : {kReductions[0], kReductions[2], kReductions[3]}) {
          const auto plan = make_plan(pr, *p, red.fn ? 3 : 1, 128, promote, red);
          for (unsigned threads : {1u, 2u}) {
            ASSERT_EQ(mismatches(
                          run_plan(pr, plan, *p, std::nullopt), run_plan(pr, plan, *p, threads),
                          describe(pr, *p, g.name) + describe(red) + (promote ? " slow" : " fast") +
                              " threads=" + std::to_string(threads)),
                      0);
          }
        }
      }
    }
  }
}

// Tiny slabs with a plan, in both orientations.
TEST_P(ChainGemmKernel, PlansInSlabs) {
  struct SmallSlabs {
    SmallSlabs() { mmaemu::model::detail::force_chain_slab_bytes(1); }
    ~SmallSlabs() { mmaemu::model::detail::force_chain_slab_bytes(0); }
  } small;
  std::uint32_t seed = 6000;
  for (const auto& [M, N] : {std::pair<std::size_t, std::size_t>{150, 70}, {20, 150}}) {
    const NamedGen& g = generators()[seed % generators().size()];
    const Problem pr = make_problem(M, N, 400, 0, 400, kPairs[seed % 3], g.gen, g.gen, seed);
    ++seed;
    const Preset& p = shipped("hopper");
    const auto plan = make_plan(pr, p, 3, 128, &mmaemu::model::promote_fp32_add);
    ASSERT_EQ(mismatches(run_plan(pr, plan, p, std::nullopt), run_plan(pr, plan, p, 2u),
                         describe(pr, p, g.name) + " slabs"),
              0);
  }
}

// NaN and Inf codes (outside chain_gemm's contract, as above) inside a slow plan: their chunks
// give +-Inf or NaN, and +Inf promoted with -Inf is the canonical NaN on both paths.
TEST_P(ChainGemmKernel, PlansWithNonFiniteCodes) {
  const FormatPair fmt{Format::e5m2, Format::e5m2};
  const NamedGen& g = generators()[0];
  Problem pr = make_problem(6, 40, 300, 0, 300, fmt, g.gen, g.gen, 17);
  // Output (1, 7); part 0 is [0, 160) in chunks [0, 128) and [128, 160), part 1 [160, 300).
  pr.a[1 * pr.lda + 5] = 0x7C; // +Inf x +1: chunk [0, 128) is +Inf
  pr.b[7 * pr.ldb + 5] = 0x3C;
  pr.a[1 * pr.lda + 140] = 0x3C; // +1 x -Inf: chunk [128, 160) is -Inf
  pr.b[7 * pr.ldb + 140] = 0xFC;
  pr.a[1 * pr.lda + 200] = 0x7C; // +Inf x +1: part 1 is +Inf
  pr.b[7 * pr.ldb + 200] = 0x3C;
  pr.b[9 * pr.ldb + 299] = 0x7F; // NaN
  const Preset& p = shipped("hopper");
  for (auto promote : {&mmaemu::model::promote_fp32_add, &promote_called}) {
    const auto plan = make_plan(pr, p, 2, 128, promote);
    ASSERT_EQ(plan.parts[0].size(), 2u);
    const std::vector<std::uint32_t> want = run_plan(pr, plan, p, std::nullopt);
    ASSERT_EQ(mismatches(want, run_plan(pr, plan, p, 2u), "nonfinite plan"), 0);
    EXPECT_EQ(want[1 * pr.ldo + 7], mmaemu::kF32CanonicalNaN);
    EXPECT_EQ(want[pr.M * pr.ldo + 1 * pr.ldo + 7], 0x7F800000u);
  }
}

// Parts that are +Inf and -Inf reduce to the canonical NaN on both paths, serially and as a
// tree, by the CPU's adds and called value by value; a NaN part stays NaN.
TEST_P(ChainGemmKernel, ReducedPlansWithNonFiniteParts) {
  const FormatPair fmt{Format::e5m2, Format::e5m2};
  const NamedGen& g = generators()[0];
  Problem pr = make_problem(6, 40, 300, 0, 300, fmt, g.gen, g.gen, 19);
  // S = 2: parts [0, 160) and [160, 300). Output (2, 11): part 0 is +Inf, part 1 is -Inf.
  pr.a[2 * pr.lda + 5] = 0x7C;
  pr.b[11 * pr.ldb + 5] = 0x3C;
  pr.a[2 * pr.lda + 200] = 0xFC;
  pr.b[11 * pr.ldb + 200] = 0x3C;
  pr.b[9 * pr.ldb + 20] = 0x7F; // NaN: every output of column 9
  const Preset& p = shipped("hopper");
  for (auto promote : {static_cast<std::uint32_t (*)(std::uint32_t, std::uint32_t)>(nullptr),
                       &mmaemu::model::promote_fp32_add}) {
    for (const Reduction& red : kReductions) {
      if (!red.fn)
        continue;
      const auto plan = make_plan(pr, p, 2, 128, promote, red);
      const std::vector<std::uint32_t> want = run_plan(pr, plan, p, std::nullopt);
      ASSERT_EQ(mismatches(want, run_plan(pr, plan, p, 2u), "nonfinite parts" + describe(red)), 0);
      EXPECT_EQ(want[2 * pr.ldo + 11], mmaemu::kF32CanonicalNaN) << describe(red);
      EXPECT_EQ(want[4 * pr.ldo + 9], mmaemu::kF32CanonicalNaN) << describe(red);
    }
  }
}

// The CPU's add is used only in the default SSE environment: with rounding toward zero,
// flush-to-zero and denormals-are-zero set, the promotion is called value by value and the
// bits do not change (chunk sums of wide-spread values are inexact, so the CPU's add in
// that mode would round some of them differently).
TEST(ChainGemmPlan, SseEnvironmentIsRespected) {
  const NamedGen& g = generators()[0];
  const Problem pr = make_problem(20, 40, 300, 0, 300, kPairs[0], g.gen, g.gen, 23);
  const Preset& p = shipped("ada");
  const auto plan = make_plan(pr, p, 1, 128, &mmaemu::model::promote_fp32_add);
  const std::vector<std::uint32_t> want = run_plan(pr, plan, p, std::nullopt);
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0xE040u); // round toward zero, FTZ and DAZ
  const std::vector<std::uint32_t> got = run_plan(pr, plan, p, 1u);
  _mm_setcsr(saved);
  EXPECT_EQ(mismatches(want, got, "FTZ/DAZ"), 0);
  // The same for the split reduction, serial and pairwise (S = 5 partials of wide-spread
  // values: their sums are inexact).
  for (const Reduction& red : {kReductions[1], kReductions[2]}) {
    const auto split = make_plan(pr, p, 5, 128, nullptr, red);
    const std::vector<std::uint32_t> want_split = run_plan(pr, split, p, std::nullopt);
    _mm_setcsr(saved | 0xE040u);
    const std::vector<std::uint32_t> got_split = run_plan(pr, split, p, 1u);
    _mm_setcsr(saved);
    EXPECT_EQ(mismatches(want_split, got_split, "FTZ/DAZ" + describe(red)), 0);
  }
}

TEST(ChainGemmPlan, RejectsBadPlans) {
  const NamedGen& g = generators()[0];
  const Problem pr = make_problem(2, 2, 10, 0, 10, kPairs[0], g.gen, g.gen, 9);
  std::vector<std::uint32_t> out(pr.M * pr.ldo);
  std::uint32_t* outs[] = {out.data()};
  mmaemu::model::ChainPlan two_chunks_fast;
  two_chunks_fast.parts.push_back({{0, 5}, {5, 10}});
  mmaemu::model::ChainPlan outside;
  outside.parts.push_back({{0, 11}});
  outside.promote = &mmaemu::model::promote_fp32_add;
  mmaemu::model::ChainPlan reduce_nothing;
  reduce_nothing.reduce = &mmaemu::model::reduce_fp32_by_scheme;
  for (const auto* plan : {&two_chunks_fast, &outside, &reduce_nothing}) {
    EXPECT_THROW(mmaemu::model::chain_gemm_plan(pr.operands(), *plan, shipped("ada"), outs, pr.ldo),
                 mmaemu::ValueError);
    EXPECT_THROW(
        mmaemu::model::chain_gemm_plan_simple(pr.operands(), *plan, shipped("ada"), outs, pr.ldo),
        mmaemu::ValueError);
  }
}

} // namespace
