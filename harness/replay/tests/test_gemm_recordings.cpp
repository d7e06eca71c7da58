// SPDX-License-Identifier: BSD-2-Clause
// Recording kinds "gemm" and "gemm_call": HDF5 round trip and replay. Expected bits come from
// the chain model (model::dot, confirmed by the hardware mma recordings) over the whole K
// with unit scales and an fp32 output (the epilogue is then the identity) — not from
// scaled_mm — and expected errors from torch's documented checks (scaled-mm-facts.md).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <span>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "public_set_writer.hpp"

namespace {

using namespace mmaemu;
using recordings::GemmCall;
using recordings::GemmCallOutput;
using recordings::GemmCase;

std::vector<std::uint8_t> random_e4m3(std::size_t n, std::mt19937& rng) {
  std::vector<std::uint8_t> v(n);
  for (auto& c : v)
    c = static_cast<std::uint8_t>(rng() & 0xF7u); // never 0x7F/0xFF (NaN)
  return v;
}

// The fast chain from +0 of every row pair: the fp32 output of a unit-scale, unsplit call.
std::vector<std::uint32_t> chain_expect(const std::vector<std::uint8_t>& a,
                                        const std::vector<std::uint8_t>& b, std::size_t M,
                                        std::size_t N, std::size_t K) {
  std::vector<std::uint32_t> out;
  const Preset& p = get_preset("hopper");
  for (std::size_t m = 0; m < M; ++m) {
    for (std::size_t n = 0; n < N; ++n) {
      out.push_back(
          model::dot(std::span(a.data() + m * K, K), std::span(b.data() + n * K, K), 0u, p));
    }
  }
  return out;
}

GemmCase unit_case(std::mt19937& rng) {
  GemmCase c;
  c.id = "synthetic/unit";
  c.profile = "hopper";
  c.out_dtype = Format::fp32;
  c.fast = true;
  c.splitk = "1";
  c.M = 3;
  c.N = 16;
  c.K = 64;
  c.a = random_e4m3(c.M * c.K, rng);
  c.b = random_e4m3(c.N * c.K, rng);
  c.expect = chain_expect(c.a, c.b, c.M, c.N, c.K);
  return c;
}

TEST(GemmRecordings, GemmCaseRoundTripsAndReplaysBitExact) {
  testsupport::TempDir dir("gemm");
  std::mt19937 rng(7);
  recordings::Recording rec;
  recordings::GemmBatch batch{"synthetic", {}, {{"gpu", "none (synthetic)"}}};
  batch.cases.push_back(unit_case(rng));
  GemmCase rejected = unit_case(rng);
  rejected.id = "synthetic/e5m2xe5m2";
  rejected.fmt_a = rejected.fmt_b = Format::e5m2;
  rejected.expect.clear();
  rejected.expect_error = "ReferenceRejectsError"; // torch rejects two e5m2 matrices
  batch.cases.push_back(rejected);
  GemmCase accumulate_api = unit_case(rng);
  accumulate_api.id = "synthetic/accumulate";
  accumulate_api.api = "accumulate";
  accumulate_api.K = 40; // accumulate accepts any K
  accumulate_api.a = random_e4m3(accumulate_api.M * 40, rng);
  accumulate_api.b = random_e4m3(accumulate_api.N * 40, rng);
  accumulate_api.expect = chain_expect(accumulate_api.a, accumulate_api.b, 3, 16, 40);
  batch.cases.push_back(accumulate_api);
  rec.gemm.push_back(batch);
  const auto path = dir / "g.h5";
  recordings::write_recording(path, rec);

  const recordings::Recording back = recordings::read_recording(path);
  ASSERT_EQ(back.gemm.size(), 1u);
  ASSERT_EQ(back.gemm[0].cases.size(), 3u);
  EXPECT_EQ(back.gemm[0].cases[0].a, batch.cases[0].a);
  EXPECT_EQ(back.gemm[0].cases[0].expect, batch.cases[0].expect);
  EXPECT_EQ(back.gemm[0].cases[1].expect_error, "ReferenceRejectsError");
  EXPECT_EQ(back.gemm[0].attrs.at("gpu"), "none (synthetic)");

  const auto s = harness::replay_gemm_set(back.gemm[0], path.string());
  EXPECT_EQ(s.passed, 3u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(s.errors, 0u);
}

TEST(GemmRecordings, AlteredOutputBitFailsWithFirstMismatchNamed) {
  std::mt19937 rng(8);
  recordings::GemmBatch batch{"synthetic", {}, {}};
  GemmCase c = unit_case(rng);
  c.expect[5] ^= 1u;
  batch.cases.push_back(c);
  const auto s = harness::replay_gemm_set(batch, "memory");
  ASSERT_EQ(s.failed, 1u);
  EXPECT_NE(s.results[0].message.find("output 5"), std::string::npos) << s.results[0].message;
  EXPECT_EQ(s.results[0].why, Mismatch::value);
}

TEST(GemmRecordings, ExactCallWithPaddedOffsetLayoutsReplays) {
  testsupport::TempDir dir("gemmcall");
  std::mt19937 rng(9);
  const std::size_t M = 2, N = 16, K = 32, lda = 40, offset = 3;
  const auto a = random_e4m3(M * K, rng);
  const auto b = random_e4m3(N * K, rng);
  // input: row-major with a padded leading dimension and a storage offset.
  std::vector<std::uint8_t> in_storage(offset + M * lda, 0x55);
  for (std::size_t m = 0; m < M; ++m) {
    for (std::size_t k = 0; k < K; ++k)
      in_storage[offset + m * lda + k] = a[m * K + k];
  }
  // mat2 [K, N] column-major: element (k, n) at n * K + k, i.e. b's rows.
  const std::vector<std::uint8_t> mat2_storage = b;
  nlohmann::json call = {
      {"M", M},
      {"N", N},
      {"K", K},
      {"input", {{"dtype", "e4m3"}, {"shape", {M, K}}, {"strides", {lda, 1}}, {"offset", offset}}},
      {"mat2", {{"dtype", "e4m3"}, {"shape", {K, N}}, {"strides", {1, K}}, {"offset", 0}}},
      {"scale_a",
       {{"dtype", "fp32"}, {"shape", nlohmann::json::array()}, {"bits", {"0x3f800000"}}}},
      {"scale_b", {{"dtype", "fp32"}, {"shape", {1}}, {"bits", {"0x3f800000"}}}},
      {"bias", nullptr},
      {"scale_result", nullptr},
      {"out", nullptr},
      {"profile", "hopper"}};
  GemmCall gc;
  gc.id = "r1/call0";
  gc.call_json = call.dump();
  gc.input_storage = in_storage;
  gc.mat2_storage = mat2_storage;
  GemmCallOutput ok{"fp32_fast", Format::fp32, true, "1", {2, 16}, chain_expect(a, b, M, N, K), ""};
  GemmCallOutput e5m2_out{"e5m2_out", Format::e5m2, true, "1", {}, {}, "ReferenceRejectsError"};
  gc.outputs = {ok, e5m2_out};
  // The same call with a bias: torch's checks pass (bf16 bias, bf16 out), mmaemu does not model it.
  GemmCall with_bias = gc;
  with_bias.id = "r1/call1";
  call["bias"] = {{"dtype", "bf16"}, {"shape", {N}}};
  with_bias.call_json = call.dump();
  with_bias.outputs = {{"bias_bf16", Format::bf16, true, "1", {}, {}, "UnsupportedFeatureError"}};
  recordings::Recording rec;
  rec.gemm_call.push_back({"r1", {gc, with_bias}, {}});
  const auto path = dir / "c.h5";
  recordings::write_recording(path, rec);
  const auto back = recordings::read_recording(path);
  ASSERT_EQ(back.gemm_call.size(), 1u);
  ASSERT_EQ(back.gemm_call[0].calls.size(), 2u);
  EXPECT_EQ(back.gemm_call[0].calls[0].input_storage, in_storage);
  const auto s = harness::replay_gemm_call_set(back.gemm_call[0], path.string());
  EXPECT_EQ(s.cases, 3u);
  EXPECT_EQ(s.passed, 3u) << (s.results.empty() ? "" : s.results[0].message);
  EXPECT_EQ(s.failed + s.errors, 0u);
}

TEST(GemmRecordings, EmptyGemmBatchRoundTrips) {
  testsupport::TempDir dir("kind");
  recordings::Recording rec;
  rec.gemm.push_back({"empty", {}, {}});
  const auto path = dir / "k.h5";
  recordings::write_recording(path, rec);
  const auto back = recordings::read_recording(path);
  EXPECT_EQ(back.gemm.size(), 1u);
  EXPECT_EQ(back.case_count(), 0u);
}

} // namespace
