// SPDX-License-Identifier: BSD-2-Clause
// The GEMM-level replay judges every class of mismatch, the result's shape and the expected
// errors as strictly as the mma replay: a +0/-0 difference and a NaN with another payload are
// failures (counted in their class), a result of another shape fails however its elements
// compare, an expected error passes only with its own class, and a call's letter is the worst
// of its outputs. The expected results are small sums worked out by hand (32 products of 1.0
// are 32.0; products with +0 sum to +0), never taken from the code under test.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmaemu/harness/replay.hpp"

namespace mmaemu::harness {
namespace {

using nlohmann::json;

constexpr std::uint8_t kOne = 0x38;  // e4m3 1.0
constexpr std::uint8_t kZero = 0x00; // e4m3 +0
constexpr std::uint8_t kNan = 0x7F;  // e4m3 NaN
constexpr std::uint32_t kF32PlusZero = 0x00000000u, kF32MinusZero = 0x80000000u;
constexpr std::uint32_t kF32ThirtyTwo = 0x42000000u; // 32.0 = 2^5: exponent 127 + 5

// One scaled_mm case of M = 2, N = 16, K = 32 with unit scales and an fp32 result.
recordings::GemmCase gemm_case(std::uint8_t a_code, std::uint8_t b_code,
                               std::uint32_t expect_bits) {
  recordings::GemmCase c;
  c.id = "g/0";
  c.profile = "hopper";
  c.out_dtype = Format::fp32;
  c.M = 2;
  c.N = 16;
  c.K = 32;
  c.a.assign(c.M * c.K, a_code);
  c.b.assign(c.N * c.K, b_code);
  c.expect.assign(c.M * c.N, expect_bits);
  return c;
}

SetResult replay_one(const recordings::GemmCase& c, recordings::Attributes set_attrs = {}) {
  return replay_gemm_set(recordings::GemmBatch{"g", {c}, std::move(set_attrs)}, "g.h5");
}

TEST(ReplayMismatchClasses, ReplayGemmZeroSignDifferenceIsAFailure) {
  // +0 * 1.0 summed 32 times from +0 is +0 in every output.
  const auto same = replay_one(gemm_case(kZero, kOne, kF32PlusZero));
  EXPECT_EQ(same.passed, 1u);
  auto c = gemm_case(kZero, kOne, kF32PlusZero);
  c.expect[5] = kF32MinusZero; // the recording says -0 where the result is +0
  const auto s = replay_one(c);
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, Outcome::fail);
  EXPECT_EQ(s.results[0].why, Mismatch::zero_sign);
  EXPECT_EQ(s.results[0].expected, kF32MinusZero);
  EXPECT_EQ(s.results[0].actual, kF32PlusZero);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.mismatches.zero_sign, 1u);
  EXPECT_EQ(s.letters, "F");
}

TEST(ReplayMismatchClasses, ReplayGemmNanPayloadDifferenceIsAFailure) {
  // A NaN operand makes every output NaN. Two recordings with different NaN payloads cannot
  // both hold the model's bits: at most one passes, and a failing one fails as a NaN payload.
  std::size_t passed = 0;
  for (const std::uint32_t nan : {0x7FC00001u, 0x7FC00002u}) {
    const auto s = replay_one(gemm_case(kNan, kOne, nan));
    ASSERT_EQ(s.results.size(), 1u);
    if (s.results[0].outcome == Outcome::pass) {
      ++passed;
      continue;
    }
    EXPECT_EQ(s.results[0].outcome, Outcome::fail);
    EXPECT_EQ(s.results[0].why, Mismatch::nan_payload) << s.results[0].message;
    EXPECT_EQ(s.mismatches.nan_payload, 1u);
  }
  EXPECT_LE(passed, 1u);
}

TEST(ReplayMismatchClasses, ReplayGemmSuccessWhereAnErrorIsExpectedIsAFailure) {
  auto c = gemm_case(kOne, kOne, kF32ThirtyTwo);
  EXPECT_EQ(replay_one(c).passed, 1u); // the call succeeds with 32.0
  c.expect_error = "ValueError";
  const auto s = replay_one(c);
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, Outcome::fail);
  EXPECT_NE(s.results[0].message.find("but the call succeeded"), std::string::npos)
      << s.results[0].message;
}

TEST(ReplayMismatchClasses, ReplayGemmRefusalOfAnotherClassThanExpectedIsAFailure) {
  // An unknown profile is a ValueError (docs/api.md: unknown names are ValueError).
  auto c = gemm_case(kOne, kOne, kF32ThirtyTwo);
  c.profile = "no_such_profile";
  c.expect_error = "ValueError";
  EXPECT_EQ(replay_one(c).passed, 1u);
  c.expect_error = "UnsupportedFeatureError";
  const auto s = replay_one(c);
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, Outcome::fail) << s.results[0].message;
  EXPECT_NE(s.results[0].message.find("expected UnsupportedFeatureError"), std::string::npos)
      << s.results[0].message;
}

TEST(ReplayMismatchClasses, ReplayGemmSetExpectErrorAppliesToCasesThatNameNone) {
  auto c = gemm_case(kOne, kOne, kF32ThirtyTwo);
  c.profile = "no_such_profile";
  const auto s = replay_one(c, {{"expect_error", "ValueError"}});
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, Outcome::pass) << s.results[0].message;
  // Without the set's attribute the same refusal is a failure.
  EXPECT_EQ(replay_one(c).failed, 1u);
}

// input [2, 32] row-major, mat2 [32, 16] column-major, unit scales, all codes 1.0.
json good_call() {
  return {{"M", 2},
          {"N", 16},
          {"K", 32},
          {"input", {{"dtype", "e4m3"}, {"shape", {2, 32}}, {"strides", {32, 1}}, {"offset", 0}}},
          {"mat2", {{"dtype", "e4m3"}, {"shape", {32, 16}}, {"strides", {1, 32}}}},
          {"scale_a", {{"dtype", "fp32"}, {"shape", json::array()}, {"bits", {"0x3f800000"}}}},
          {"scale_b", {{"dtype", "fp32"}, {"shape", {1}}, {"bits", {"3F800000"}}}},
          {"bias", nullptr},
          {"scale_result", nullptr},
          {"out", nullptr},
          {"profile", "hopper"}};
}

recordings::GemmCallOutput fp32_output(const std::string& name, std::vector<std::int64_t> shape,
                                       std::uint32_t bits) {
  return {name, Format::fp32, true, "1", std::move(shape), std::vector<std::uint32_t>(32, bits),
          ""};
}

SetResult replay_call(std::vector<recordings::GemmCallOutput> outputs) {
  recordings::GemmCall gc;
  gc.id = "r1/call0";
  gc.call_json = good_call().dump();
  gc.input_storage.assign(64, kOne);
  gc.mat2_storage.assign(512, kOne);
  gc.outputs = std::move(outputs);
  return replay_gemm_call_set(recordings::GemmCallBatch{"r1", {gc}, {}}, "rec.h5");
}

TEST(ReplayMismatchClasses, ReplayGemmCallResultOfAnotherShapeIsAFailure) {
  EXPECT_EQ(replay_call({fp32_output("a", {2, 16}, kF32ThirtyTwo)}).passed, 1u);
  // The same 32 elements of 32.0, recorded as [16, 2]: the shapes differ.
  const auto s = replay_call({fp32_output("a", {16, 2}, kF32ThirtyTwo)});
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, Outcome::fail);
  EXPECT_NE(s.results[0].message.find("shape"), std::string::npos) << s.results[0].message;
}

TEST(ReplayMismatchClasses, ACallsLetterIsTheWorstOfItsOutputs) {
  // The first output is recorded wrong (-0 for 32.0), the second right: the call is F.
  const auto s = replay_call(
      {fp32_output("a", {2, 16}, kF32MinusZero), fp32_output("b", {2, 16}, kF32ThirtyTwo)});
  ASSERT_EQ(s.results.size(), 2u);
  EXPECT_EQ(s.results[0].outcome, Outcome::fail);
  EXPECT_EQ(s.results[1].outcome, Outcome::pass);
  EXPECT_EQ(s.letters, "F");
  EXPECT_EQ(s.units[Outcome::fail], 1u);
  EXPECT_EQ(s.units[Outcome::pass], 0u);
}

} // namespace
} // namespace mmaemu::harness
