// SPDX-License-Identifier: BSD-2-Clause
// The epilogue: alpha = fp32(scale_a * scale_b) first, then D = fp32(alpha * acc); for FP8
// outputs D = fp32(D * scale_result) (ignored for bf16 / fp16 / fp32 outputs); then rounding
// to the output dtype, to nearest even, fp16 / bf16 overflow to Inf, FP8 outputs saturated to
// +-max finite (satfinite, Inf included), canonical NaNs, signed zeros kept.
// Expected bits: host FPU multiplies (volatile float) and the conversions of gemm_expect.hpp
// (integer RNE for bf16, _Float16 for fp16, binary64 nearbyint + code scan for FP8), and
// hand-derived tables.

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <span>
#include <vector>

#include "gemm_expect.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace {

using gemmx::hmul;
using mmaemu::Format;
using mmaemu::Tensor;

constexpr std::uint32_t kOne = 0x3F800000u;
const Format kOuts[] = {Format::fp32, Format::bf16, Format::fp16, Format::e4m3, Format::e5m2};

std::uint32_t ep(std::uint32_t acc, Format out, std::uint32_t sa = kOne, std::uint32_t sb = kOne,
                 std::optional<std::uint32_t> sr = std::nullopt) {
  return mmaemu::epilogue(acc, sa, sb, sr, out, false);
}

// The specified epilogue on the host FPU.
std::uint32_t oracle(std::uint32_t acc, std::uint32_t sa, std::uint32_t sb,
                     std::optional<std::uint32_t> sr, Format out) {
  std::uint32_t d = hmul(hmul(sa, sb), acc);
  if (mmaemu::is_fp8(out) && sr)
    d = hmul(d, *sr);
  return gemmx::to_out(d, out);
}

class Epilogue : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(gemmx::ftz_daz_off()) << "the host-FPU oracle needs FTZ/DAZ off";
  }
};

std::uint32_t random_float(std::mt19937& rng, int emin, int emax) {
  const std::uint32_t e =
      static_cast<std::uint32_t>(127 + emin + static_cast<int>(rng() % (emax - emin + 1)));
  return (rng() & 0x80000000u) | (e << 23) | (rng() & 0x7FFFFFu);
}

TEST_F(Epilogue, AlphaIsScaleATimesScaleBThenAlphaTimesAcc) {
  // Search for operands where fp32 (acc * sa) * sb differs from (sa * sb) * acc; the epilogue
  // must give the latter.
  std::mt19937 rng(31337);
  int found = 0;
  for (int i = 0; i < 100000 && found < 200; ++i) {
    const std::uint32_t acc = random_float(rng, -20, 20), sa = random_float(rng, -10, 10),
                        sb = random_float(rng, -10, 10);
    const std::uint32_t alpha_first = hmul(hmul(sa, sb), acc);
    const std::uint32_t acc_first = hmul(hmul(acc, sa), sb);
    if (alpha_first == acc_first)
      continue;
    ++found;
    EXPECT_EQ(ep(acc, Format::fp32, sa, sb), alpha_first)
        << std::hex << acc << " " << sa << " " << sb;
    EXPECT_EQ(mmaemu::epilogue(acc, sa, sb, std::nullopt, Format::fp32, true), acc)
        << "scaled_already skips it";
  }
  EXPECT_GE(found, 200);
}

TEST_F(Epilogue, ScaledMmAppliesAlphaFirstToTheAccumulator) {
  // acc = one exact FP8 product (K = 16 with one nonzero pair); search codes and scales where
  // the two orders differ and check scaled_mm's fp32 output.
  std::mt19937 rng(4242);
  const auto& hopper = mmaemu::get_preset_quiet("hopper");
  int checked = 0;
  for (int i = 0; i < 20000 && checked < 20; ++i) {
    const std::uint8_t ca = gemmx::finite_code(rng, Format::e4m3),
                       cb = gemmx::finite_code(rng, Format::e4m3);
    const std::uint32_t sa = random_float(rng, -8, 8), sb = random_float(rng, -8, 8);
    std::vector<std::uint8_t> a(16, 0), b(16, 0);
    a[0] = ca;
    b[0] = cb;
    const std::uint32_t acc = mmaemu::model::dot(a, b, 0u, hopper);
    if (acc == 0u)
      continue;
    const std::uint32_t want = hmul(hmul(sa, sb), acc);
    if (want == hmul(hmul(acc, sa), sb))
      continue;
    ++checked;
    mmaemu::ScaledMmCall c;
    c.input = gemmx::fp8_tensor(Format::e4m3, 1, 16, a);
    c.mat2 = Tensor::zeros(Format::e4m3, {16, 16}).t();
    c.mat2.set_bits_at(0, 0, cb);
    c.scale_a = Tensor::scalar_f32(sa);
    c.scale_b = Tensor::scalar_f32(sb, true);
    c.out_dtype = Format::fp32;
    c.use_fast_accum = true;
    c.profile = "hopper";
    c.splitk = mmaemu::SplitKRequest::explicit_split(1);
    EXPECT_EQ(mmaemu::scaled_mm(c).bits_at(0, 0), want) << std::hex << int(ca) << " " << int(cb);
  }
  EXPECT_EQ(checked, 20);
}

TEST_F(Epilogue, RandomValuesMatchTheHostOracleForEveryOutputDtype) {
  std::mt19937 rng(2718);
  auto pick = [&](int emin, int emax) -> std::uint32_t {
    switch (rng() % 16) {
    case 0:
      return rng() & 0x807FFFFFu; // subnormal or zero
    case 1:
      return (rng() & 0x80000000u) | 0x7F800000u; // Inf
    case 2:
      return (rng() & 0x80000000u) | 0x7FC00000u | (rng() & 0x3FFFFFu); // NaN
    case 3:
      return random_float(rng, 100, 127); // huge
    case 4:
      return rng() & 0x80000000u; // +-0
    default:
      return random_float(rng, emin, emax);
    }
  };
  for (int i = 0; i < 40000; ++i) {
    const std::uint32_t acc = pick(-30, 30), sa = pick(-20, 20), sb = pick(-20, 20);
    const std::optional<std::uint32_t> sr =
        rng() % 2 ? std::optional<std::uint32_t>(pick(-8, 8)) : std::nullopt;
    for (Format out : kOuts) {
      const std::uint32_t want = oracle(acc, sa, sb, sr, out);
      const std::uint32_t got = ep(acc, out, sa, sb, sr);
      ASSERT_EQ(mmaemu::compare_bits(want, got, out), mmaemu::Mismatch::none)
          << spec(out).name << std::hex << " acc=" << acc << " sa=" << sa << " sb=" << sb
          << " sr=" << (sr ? *sr : 0u) << " want=" << want << " got=" << got;
    }
  }
}

TEST_F(Epilogue, ScaleResultMultipliesFp8OutputsOnly) {
  const std::uint32_t two = 0x40000000u;
  EXPECT_EQ(ep(kOne, Format::e4m3, kOne, kOne, two), 0x40u); // 2.0
  EXPECT_EQ(ep(kOne, Format::e5m2, kOne, kOne, two), 0x40u); // 2.0
  EXPECT_EQ(ep(kOne, Format::e4m3), 0x38u);                  // 1.0 without scale_result
  EXPECT_EQ(ep(kOne, Format::bf16, kOne, kOne, two), 0x3F80u);
  EXPECT_EQ(ep(kOne, Format::fp16, kOne, kOne, two), 0x3C00u);
  EXPECT_EQ(ep(kOne, Format::fp32, kOne, kOne, two), kOne);
  // After the scales: 3 * (0.5 * 0.5) * 4 = 3 (e4m3 0x44); a scale_result of 1000 saturates.
  EXPECT_EQ(ep(0x40400000u, Format::e4m3, 0x3F000000u, 0x3F000000u, 0x40800000u), 0x44u);
  EXPECT_EQ(ep(kOne, Format::e4m3, kOne, kOne, 0x447A0000u), 0x7Eu);
  EXPECT_EQ(ep(kOne, Format::bf16, kOne, kOne, 0x447A0000u), 0x3F80u);
  // A NaN scale_result poisons only FP8 outputs.
  EXPECT_EQ(ep(kOne, Format::e5m2, kOne, kOne, 0x7FC00000u), 0x7Fu);
  EXPECT_EQ(ep(kOne, Format::fp16, kOne, kOne, 0x7FC00000u), 0x3C00u);
}

struct Conv {
  std::uint32_t in;
  std::uint32_t out;
  const char* why;
};

void check_table(Format f, const std::vector<Conv>& t) {
  for (const auto& c : t) {
    EXPECT_EQ(ep(c.in, f), c.out) << spec(f).name << ": " << c.why;
    EXPECT_EQ(gemmx::to_out(c.in, f), c.out)
        << "oracle self-check " << spec(f).name << ": " << c.why;
  }
}

TEST_F(Epilogue, Bf16RoundsToNearestEvenAndOverflowsToInf) {
  check_table(Format::bf16, {
                                {0x3F808000u, 0x3F80u, "1 + 2^-8: tie, even stays"},
                                {0x3F818000u, 0x3F82u, "tie above an odd code rounds up"},
                                {0x3F808001u, 0x3F81u, "just above the tie"},
                                {0x3F80FFFFu, 0x3F81u, "below the next tie"},
                                {0x7F7F7FFFu, 0x7F7Fu, "max bf16 region, below the tie"},
                                {0x7F7F8000u, 0x7F80u, "tie at the top rounds to Inf"},
                                {0x7F7FFFFFu, 0x7F80u, "FLT_MAX overflows to Inf"},
                                {0xFF7FFFFFu, 0xFF80u, "-FLT_MAX overflows to -Inf"},
                                {0x00008000u, 0x0000u, "subnormal tie to even zero"},
                                {0x00018000u, 0x0002u, "subnormal tie up"},
                                {0x7F800000u, 0x7F80u, "Inf"},
                                {0x80000000u, 0x8000u, "-0"},
                            });
}

TEST_F(Epilogue, Fp16RoundsToNearestEvenAndOverflowsToInf) {
  check_table(Format::fp16, {
                                {0x3F801000u, 0x3C00u, "1 + 2^-11: tie, even stays"},
                                {0x3F803000u, 0x3C02u, "tie above an odd code rounds up"},
                                {0x3F801001u, 0x3C01u, "just above the tie"},
                                {0x477FE000u, 0x7BFFu, "65504 = max"},
                                {0x477FEFFFu, 0x7BFFu, "just below the overflow tie"},
                                {0x477FF000u, 0x7C00u, "65520: tie above odd max rounds to Inf"},
                                {0xC77FF000u, 0xFC00u, "-65520 -> -Inf"},
                                {0x33800000u, 0x0001u, "2^-24 = min subnormal"},
                                {0x33000000u, 0x0000u, "2^-25: tie to even zero"},
                                {0x33400000u, 0x0001u, "1.5 * 2^-25 rounds up to min subnormal"},
                                {0xB3000000u, 0x8000u, "-2^-25 -> -0"},
                                {0x7F800000u, 0x7C00u, "Inf"},
                            });
}

TEST_F(Epilogue, E4m3RoundsToNearestEvenAndSaturates) {
  check_table(Format::e4m3, {
                                {0x3F880000u, 0x38u, "1.0625: tie, even stays at 1.0"},
                                {0x3F980000u, 0x3Au, "1.1875: tie above odd 1.125 rounds to 1.25"},
                                {0x3F880001u, 0x39u, "just above the tie"},
                                {0x43E00000u, 0x7Eu, "448 = max"},
                                {0x43E80000u, 0x7Eu, "464 (tie 448/480) saturates to 448"},
                                {0x43F00000u, 0x7Eu, "480 saturates (0x7F is NaN)"},
                                {0x447A0000u, 0x7Eu, "1000 saturates"},
                                {0xC47A0000u, 0xFEu, "-1000 saturates to -448"},
                                {0x7F7FFFFFu, 0x7Eu, "FLT_MAX saturates"},
                                {0x7F800000u, 0x7Eu, "+Inf saturates (satfinite)"},
                                {0xFF800000u, 0xFEu, "-Inf saturates"},
                                {0x3B000000u, 0x01u, "2^-9 = min subnormal"},
                                {0x3A800000u, 0x00u, "2^-10: tie to even zero"},
                                {0x3AC00000u, 0x01u, "1.5 * 2^-10 rounds up"},
                                {0xBA800000u, 0x80u, "-2^-10 -> -0 (0x80)"},
                                {0x7FC00000u, 0x7Fu, "NaN"},
                                {0xFFFFFFFFu, 0x7Fu, "negative NaN -> canonical 0x7F"},
                            });
}

TEST_F(Epilogue, E5m2RoundsToNearestEvenAndSaturates) {
  check_table(Format::e5m2, {
                                {0x3F900000u, 0x3Cu, "1.125: tie, even stays at 1.0"},
                                {0x3FB00000u, 0x3Eu, "1.375: tie above odd 1.25 rounds to 1.5"},
                                {0x47600000u, 0x7Bu, "57344 = max"},
                                {0x47700000u, 0x7Bu, "61440 (tie up to 65536) saturates"},
                                {0x4E6E6B28u, 0x7Bu, "1e9 saturates"},
                                {0x7F800000u, 0x7Bu, "+Inf saturates (satfinite)"},
                                {0xFF800000u, 0xFBu, "-Inf saturates"},
                                {0x37800000u, 0x01u, "2^-16 = min subnormal"},
                                {0x37000000u, 0x00u, "2^-17: tie to even zero"},
                                {0xB7000000u, 0x80u, "-2^-17 -> -0"},
                                {0x7FC00001u, 0x7Fu, "NaN"},
                            });
}

TEST_F(Epilogue, NaNsAreCanonicalInEveryOutputDtype) {
  const std::uint32_t canon[] = {0x7FFFFFFFu, 0x7FFFu, 0x7FFFu, 0x7Fu, 0x7Fu};
  for (int i = 0; i < 5; ++i) {
    const Format out = kOuts[i];
    EXPECT_EQ(ep(0x7FC00001u, out), canon[i]) << spec(out).name << " NaN acc";
    EXPECT_EQ(ep(0xFFFFFFFFu, out), canon[i]) << spec(out).name << " negative NaN acc";
    EXPECT_EQ(ep(kOne, out, 0x7FA00000u), canon[i]) << spec(out).name << " signalling NaN scale_a";
    EXPECT_EQ(ep(0x7F800000u, out, 0u), canon[i]) << spec(out).name << " Inf acc * 0 scale";
    EXPECT_EQ(ep(kOne, out, 0x7F800000u, 0u), canon[i]) << spec(out).name << " alpha = Inf * 0";
  }
}

TEST_F(Epilogue, ZeroSignFollowsTheScales) {
  const std::uint32_t neg_zero[] = {0x80000000u, 0x8000u, 0x8000u, 0x80u, 0x80u};
  const std::uint32_t minus_one = 0xBF800000u;
  for (int i = 0; i < 5; ++i) {
    const Format out = kOuts[i];
    EXPECT_EQ(ep(0u, out, minus_one), neg_zero[i]) << spec(out).name << ": +0 * -1 = -0";
    EXPECT_EQ(ep(0u, out, kOne, minus_one), neg_zero[i]) << spec(out).name;
    EXPECT_EQ(ep(0u, out, minus_one, minus_one), 0u) << spec(out).name << ": +0 * (-1 * -1) = +0";
    EXPECT_EQ(ep(0x80000000u, out), neg_zero[i]) << spec(out).name << ": -0 * 1 = -0";
    EXPECT_EQ(ep(0u, out), 0u) << spec(out).name;
  }
  // A product that underflows in fp32 keeps its sign: 2^-100 * -2^-100 -> -0.
  EXPECT_EQ(ep(0x0D800000u, Format::fp32, 0x8D800000u), 0x80000000u);
}

TEST_F(Epilogue, ScaledMmMatchesTheOracleForEveryOutputDtype) {
  mmaemu::WarningSink prev = mmaemu::set_warning_sink([](const mmaemu::Warning&) {});
  std::mt19937 rng(99);
  for (const char* profile : {"ada", "hopper"}) {
    const auto& preset = mmaemu::get_preset_quiet(mmaemu::get_profile(profile).preset);
    const std::int64_t M = 3, N = 16, K = 64;
    std::vector<std::uint8_t> A(M * K), B(N * K);
    for (auto& c : A)
      c = gemmx::moderate_code(rng, Format::e4m3);
    for (auto& c : B)
      c = gemmx::moderate_code(rng, Format::e4m3);
    const Tensor a = gemmx::fp8_tensor(Format::e4m3, M, K, A);
    const Tensor b = gemmx::fp8_tensor(Format::e4m3, N, K, B);
    for (Format out : kOuts) {
      if (out == Format::e5m2)
        continue; // e4m3 x e4m3 -> e5m2 is rejected by cuBLASLt
      for (int trial = 0; trial < 4; ++trial) {
        const std::uint32_t sa = random_float(rng, -3, 3), sb = random_float(rng, -3, 3);
        const std::optional<std::uint32_t> sr =
            trial % 2 ? std::optional<std::uint32_t>(random_float(rng, -4, 4)) : std::nullopt;
        mmaemu::ScaledMmCall c;
        c.input = a;
        c.mat2 = b.t();
        c.scale_a = Tensor::scalar_f32(sa);
        c.scale_b = Tensor::scalar_f32(sb);
        if (sr)
          c.scale_result = Tensor::scalar_f32(*sr);
        c.out_dtype = out;
        c.use_fast_accum = true;
        c.profile = profile;
        c.splitk = mmaemu::SplitKRequest::explicit_split(1);
        const Tensor r = mmaemu::scaled_mm(c);
        ASSERT_EQ(r.dtype(), out);
        for (std::int64_t m = 0; m < M; ++m)
          for (std::int64_t n = 0; n < N; ++n) {
            const std::uint32_t acc = mmaemu::model::dot(
                std::span(A.data() + m * K, K), std::span(B.data() + n * K, K), 0u, preset);
            ASSERT_EQ(r.bits_at(m, n), oracle(acc, sa, sb, sr, out))
                << profile << " " << spec(out).name << " m=" << m << " n=" << n;
          }
        if (sr && !mmaemu::is_fp8(out)) {
          mmaemu::ScaledMmCall no_sr = c;
          no_sr.scale_result.reset();
          EXPECT_EQ(mmaemu::scaled_mm(no_sr).to_bits(), r.to_bits())
              << "scale_result ignored for " << spec(out).name;
        }
      }
    }
  }
  mmaemu::set_warning_sink(prev);
}

TEST_F(Epilogue, DefaultOutputDtypeIsTheInputDtypeAndOutIsOverwritten) {
  mmaemu::ScaledMmCall c;
  c.input = gemmx::fp8_tensor(
      Format::e5m2, 1, 16,
      std::vector<std::uint8_t>{0x3C, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); // e5m2 1.0
  c.mat2 = Tensor::zeros(Format::e4m3, {16, 16}).t();
  for (int n = 0; n < 16; ++n)
    c.mat2.set_bits_at(0, n, 0x38);            // 1.0
  c.scale_a = Tensor::scalar_f32(0x40400000u); // 3
  c.scale_b = Tensor::scalar_f32(0x40A00000u); // 5
  c.profile = "ada";
  c.splitk = mmaemu::SplitKRequest::explicit_split(1);
  const Tensor r = mmaemu::scaled_mm(c);
  ASSERT_EQ(r.dtype(), Format::e5m2); // out_dtype defaults to input's dtype
  // alpha * acc = 15 = 1.875 * 2^3: halfway between e5m2 14 (0x4B, odd) and 16 (0x4C, even).
  for (int n = 0; n < 16; ++n)
    EXPECT_EQ(r.bits_at(0, n), 0x4Cu);
  // out= of the right shape and dtype: written in place, previous contents irrelevant.
  Tensor out = Tensor::zeros(Format::bf16, {1, 16});
  for (int n = 0; n < 16; ++n)
    out.set_bits_at(0, n, 0xFFFF);
  c.out_dtype = Format::bf16;
  c.out = &out;
  const Tensor r2 = mmaemu::scaled_mm(c);
  for (int n = 0; n < 16; ++n)
    EXPECT_EQ(out.bits_at(0, n), 0x4170u); // 15 in bf16
  EXPECT_EQ(r2.to_bits(), out.to_bits());
  // out= of another shape is resized to (M, N).
  Tensor small = Tensor::zeros(Format::bf16, {2});
  c.out = &small;
  mmaemu::scaled_mm(c);
  EXPECT_EQ(small.shape(), (std::vector<std::int64_t>{1, 16}));
  EXPECT_EQ(small.bits_at(0, 3), 0x4170u);
}

} // namespace
