// SPDX-License-Identifier: BSD-2-Clause
// The child-to-parent encoding of a read recording: every field survives the trip, and bytes
// that are not a whole encoding (truncated, flipped) end as a RecordingError, never a crash or
// an allocation sized by a corrupt length.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "../src/recording_wire.hpp"
#include "hostile_h5.hpp"
#include "mmaemu/recordings/recording.hpp"

using mmaemu::Format;
using mmaemu::recordings::GemmCall;
using mmaemu::recordings::GemmCallOutput;
using mmaemu::recordings::GemmCase;
using mmaemu::recordings::Recording;
using mmaemu::recordings::RecordingError;
using mmaemu::recordings::detail::decode_recording;
using mmaemu::recordings::detail::encode_recording;

namespace {

Recording every_kind() {
  Recording rec = hostile::small_recording(4, 6);
  static const char kNote[] = "with \0 and \xff bytes";
  rec.attrs["note"] = std::string(kNote, sizeof kNote - 1);
  rec.mma[0].attrs["sha256:a.txt"] = std::string(64, 'f');
  GemmCase c;
  c.id = "g/1";
  c.api = "accumulate";
  c.profile = "ada";
  c.fmt_a = Format::e5m2;
  c.out_dtype = Format::fp16;
  c.fast = true;
  c.scale_a_bits = 0x40000000u;
  c.scale_result_bits = 0xffffffffu;
  c.splitk = "2,sum";
  c.M = 2;
  c.N = 1;
  c.K = 3;
  c.a = {1, 2, 3, 4, 5, 6};
  c.b = {7, 8, 9};
  c.expect = {0x3c00u, 0xfc00u};
  c.attrs["k"] = "v";
  GemmCase e = c;
  e.id = "g/2";
  e.expect.clear();
  e.expect_error = "ValueError";
  e.scale_result_bits.reset();
  rec.gemm.push_back({"gemm_set", {c, e}, {{"source", "t"}}});
  GemmCall call;
  call.id = "call/1";
  call.call_json = "{\"x\":1}";
  call.input_storage = {1, 2, 3};
  call.mat2_storage = {4};
  GemmCallOutput o;
  o.name = "o";
  o.out_dtype = Format::bf16;
  o.shape = {1, 3};
  o.expect = {1, 2, 3};
  GemmCallOutput d;
  d.name = "d";
  d.fast = true;
  d.expect_error = "RuntimeError";
  call.outputs = {o, d};
  rec.gemm_call.push_back({"call_set", {call}, {}});
  return rec;
}

} // namespace

TEST(RecordingWire, EveryFieldSurvivesTheTrip) {
  const Recording rec = every_kind();
  const std::string bytes = encode_recording(rec);
  const Recording got = decode_recording(bytes, "x.h5");
  EXPECT_EQ(got.attrs, rec.attrs);
  ASSERT_EQ(got.mma.size(), 1u);
  EXPECT_EQ(got.mma[0].ids, rec.mma[0].ids);
  EXPECT_EQ(got.mma[0].a, rec.mma[0].a);
  EXPECT_EQ(got.mma[0].expect, rec.mma[0].expect);
  EXPECT_EQ(got.mma[0].attrs, rec.mma[0].attrs);
  ASSERT_EQ(got.gemm.size(), 1u);
  ASSERT_EQ(got.gemm[0].cases.size(), 2u);
  const GemmCase& c = got.gemm[0].cases[0];
  EXPECT_EQ(c.api, "accumulate");
  EXPECT_EQ(c.fmt_a, Format::e5m2);
  EXPECT_EQ(c.out_dtype, Format::fp16);
  EXPECT_TRUE(c.fast);
  EXPECT_EQ(c.scale_a_bits, 0x40000000u);
  EXPECT_EQ(c.scale_result_bits, std::optional<std::uint32_t>(0xffffffffu));
  EXPECT_EQ(c.expect, (std::vector<std::uint32_t>{0x3c00u, 0xfc00u}));
  EXPECT_FALSE(got.gemm[0].cases[1].scale_result_bits.has_value());
  EXPECT_EQ(got.gemm[0].cases[1].expect_error, "ValueError");
  ASSERT_EQ(got.gemm_call.size(), 1u);
  const GemmCall& call = got.gemm_call[0].calls.at(0);
  EXPECT_EQ(call.call_json, "{\"x\":1}");
  ASSERT_EQ(call.outputs.size(), 2u);
  EXPECT_EQ(call.outputs[0].out_dtype, std::optional<Format>(Format::bf16));
  EXPECT_EQ(call.outputs[0].shape, (std::vector<std::int64_t>{1, 3}));
  EXPECT_FALSE(call.outputs[1].out_dtype.has_value());
  EXPECT_TRUE(call.outputs[1].fast);
  // Everything else too: the encoding covers every field, so it is a fixed point.
  EXPECT_TRUE(encode_recording(got) == bytes);
}

TEST(RecordingWire, EveryTruncationIsRefused) {
  const std::string bytes = encode_recording(every_kind());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    try {
      (void)decode_recording(std::string_view(bytes).substr(0, n), "x.h5");
      ADD_FAILURE() << "a truncation to " << n << " bytes was accepted";
    } catch (const RecordingError& e) {
      EXPECT_THAT(e.what(), testing::StartsWith("x.h5: "));
    }
  }
}

TEST(RecordingWire, FlippedBytesNeverCrashOrThrowAnythingElse) {
  const std::string bytes = encode_recording(every_kind());
  std::mt19937 rng(5);
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string b = bytes;
    b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    try {
      (void)decode_recording(b, "x.h5");
    } catch (const RecordingError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}
