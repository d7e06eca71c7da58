// SPDX-License-Identifier: BSD-2-Clause
// Hostile gemm_call descriptions: every malformed or out-of-range description is a
// GemmCallError of one line naming the key (and, in a replay, the file and the call), never
// an out-of-bounds read, a float converted to an integer, a huge allocation or a raw
// nlohmann exception. A valid description still replays.

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/harness/replay.hpp"

namespace mmaemu::harness {
namespace {

using nlohmann::json;

// input [2, 32] row-major (64 bytes), mat2 [32, 16] column-major (512 bytes), unit scales.
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

std::shared_ptr<std::vector<std::uint8_t>> storage(std::size_t n) {
  return std::make_shared<std::vector<std::uint8_t>>(n, 0x38); // e4m3 1.0
}

// The error of parsing `text`, or "(ok)".
std::string text_error(const std::string& text) {
  try {
    parse_gemm_call(text, storage(64), storage(512));
  } catch (const GemmCallError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a GemmCallError) ") + e.what();
  }
  return "(ok)";
}

std::string error_of(const json& call) {
  return text_error(call.dump());
}

TEST(HostileGemmCall, AValidDescriptionParses) {
  const GemmCallArgs a = parse_gemm_call(good_call().dump(), storage(64), storage(512));
  EXPECT_EQ(a.call.input.shape(), (std::vector<std::int64_t>{2, 32}));
  EXPECT_TRUE(a.call.mat2.is_col_major());
  EXPECT_EQ(a.call.scale_a.bits_flat(0), 0x3F800000u);
  EXPECT_EQ(a.call.scale_b.bits_flat(0), 0x3F800000u);
  EXPECT_EQ(a.call.profile, "hopper");
  EXPECT_FALSE(a.has_out);
}

TEST(HostileGemmCall, AStorageOffsetNear2To63IsRefusedNotReadOutOfBounds) {
  json c = good_call();
  c["input"]["offset"] = std::numeric_limits<std::int64_t>::max();
  const std::string m = error_of(c);
  EXPECT_EQ(m.rfind("key 'input': tensor: layout", 0), 0u) << m;
  c = good_call();
  c["mat2"]["strides"] = {std::numeric_limits<std::int64_t>::max(), 32};
  EXPECT_EQ(error_of(c).rfind("key 'mat2': tensor: layout", 0), 0u) << error_of(c);
  c = good_call();
  c["input"]["offset"] = 1; // one element past the 64-byte storage
  EXPECT_EQ(error_of(c).rfind("key 'input': tensor: layout reaches element 64", 0), 0u)
      << error_of(c);
}

TEST(HostileGemmCall, NumbersMustBeIntegersInRangeNamingTheKey) {
  // 32e41 used to be converted from a double to int64: undefined behaviour.
  std::string text = good_call().dump();
  text.replace(text.find("[32,1]"), 6, "[32e41,1]");
  EXPECT_EQ(text_error(text), "key 'input.strides[0]': expected an integer, got number 3.2e+42");
  const std::vector<std::pair<std::string, json>> edits = {
      {"input.shape[1]", 32.0},
      {"input.offset", "3"},
      {"input.offset", -1},
      {"input.strides[0]", -32},
      {"mat2.shape[0]", std::numeric_limits<std::uint64_t>::max()},
      {"M", std::int64_t{1} << 40},
      {"K", true},
  };
  for (const auto& edit : edits) {
    // Named copies: clang 14 cannot capture structured bindings in the lambda below.
    const std::string& key = edit.first;
    const json& value = edit.second;
    json c = good_call();
    c[json::json_pointer("/" + [&] {
      std::string p = key;
      for (auto& ch : p)
        if (ch == '.')
          ch = '/';
      const auto b = p.find('[');
      if (b != std::string::npos)
        p = p.substr(0, b) + "/" + p.substr(b + 1, p.size() - b - 2);
      return p;
    }())] = value;
    const std::string m = error_of(c);
    EXPECT_EQ(m.rfind("key '" + key + "': expected an integer", 0), 0u) << key << ": " << m;
  }
}

TEST(HostileGemmCall, UnknownKeysTypesAndValuesAreNamed) {
  struct Row {
    std::string pointer;
    json value;
    std::string prefix;
  };
  const std::vector<Row> rows = {
      {"/input/offest", 3, "key 'input.offest': not a key"},
      {"/scales", 1, "key 'scales': not a key"},
      {"/input/dtype", "e3m4", "key 'input.dtype': 'e3m4' is not a dtype"},
      {"/input/dtype", 8, "key 'input.dtype': expected a string, got integer 8"},
      {"/input", "e4m3", "key 'input': expected an object, got string"},
      {"/scale_a/bits", json::array({"0x3f800000", "0"}), "key 'scale_a.bits': 2 codes for 1"},
      {"/scale_a/bits", json::array({"0xZZ"}), "key 'scale_a.bits[0]': '0xZZ' is not a hex code"},
      {"/scale_a/bits", json::array({"0x123456789"}), "key 'scale_a.bits[0]'"},
      {"/scale_a/bits", json::array({1065353216}), "key 'scale_a.bits[0]': expected a string"},
      {"/scale_a/fill", "0x3f800000", "key 'scale_a': has both 'bits' and 'fill'"},
      {"/bias",
       {{"dtype", "bf16"}, {"shape", {16}}, {"fill", "0x10000"}},
       "key 'bias.fill': '0x10000' is wider than a bfloat16 code"},
      {"/out",
       {{"dtype", "fp32"}, {"shape", {1 << 20, 1 << 20}}},
       "key 'out.shape': more than 268435456 elements"},
      {"/out",
       {{"dtype", "fp32"}, {"shape", {2, 2}}, {"strides", {1 << 27, 1 << 27}}},
       "key 'out': its layout needs a storage of"},
      {"/requires_grad", json::array({"input", "scale_a"}),
       "key 'requires_grad[1]': 'scale_a' is not input or mat2"},
      {"/profile", 5, "key 'profile': expected a string, got integer 5"},
      {"/profile", "hop\nper", "key 'profile': 'hop\\x0aper' is not a profile name"},
  };
  for (const auto& r : rows) {
    json c = good_call();
    c[json::json_pointer(r.pointer)] = r.value;
    const std::string m = error_of(c);
    EXPECT_EQ(m.rfind(r.prefix, 0), 0u) << r.pointer << ": " << m;
  }
  json missing = good_call();
  missing.erase("mat2");
  EXPECT_EQ(error_of(missing), "key 'mat2': missing");
}

TEST(HostileGemmCall, BytesThatAreNotADescriptionAreOneBoundedLine) {
  EXPECT_EQ(text_error("[1, 2]"), "the description is array, not an object");
  EXPECT_EQ(text_error(R"({"M": 1e999})"), "not valid JSON (number overflow parsing '1e999')");
  const std::string open = "{\"profile\": \"" + std::string(1 << 20, 'x');
  const std::string m = text_error(open);
  EXPECT_EQ(m.rfind("not valid JSON (", 0), 0u) << m.substr(0, 200);
  EXPECT_LT(m.size(), 400u);
  const std::string deep =
      "{\"profile\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(text_error(deep).rfind("nested deeper than", 0), 0u);
  json c = good_call();
  c["input"]["dtype"] = "\x1b[31m" + std::string(1000, 'z');
  const std::string esc = error_of(c);
  EXPECT_EQ(esc.find('\x1b'), std::string::npos);
  EXPECT_LT(esc.size(), 200u);
}

// A one-call batch with `call_json` and one fp32 output.
recordings::GemmCallBatch batch_of(const std::string& call_json) {
  recordings::GemmCall gc;
  gc.id = "r1/call0";
  gc.call_json = call_json;
  gc.input_storage.assign(64, 0x38);
  gc.mat2_storage.assign(512, 0x38);
  // 32 products of 1.0 * 1.0: 32.0 everywhere.
  gc.outputs = {
      {"fp32", Format::fp32, true, "1", {2, 16}, std::vector<std::uint32_t>(32, 0x42000000u), ""}};
  return {"r1", {gc}, {}};
}

TEST(HostileGemmCall, AReplayReportsAMalformedCallAsAnErrorNamingFileCallAndKey) {
  const auto good = replay_gemm_call_set(batch_of(good_call().dump()), "rec.h5");
  EXPECT_EQ(good.passed, 1u) << (good.results.empty() ? "" : good.results[0].message);
  json c = good_call();
  c["input"]["offset"] = std::numeric_limits<std::int64_t>::max();
  const auto bad = replay_gemm_call_set(batch_of(c.dump()), "rec.h5");
  ASSERT_EQ(bad.results.size(), 1u);
  EXPECT_EQ(bad.results[0].outcome, Outcome::error);
  EXPECT_EQ(bad.results[0].message.rfind("rec.h5: gemm_call 'r1/call0': key 'input': tensor:", 0),
            0u)
      << bad.results[0].message;
  // The same for a reader that parses a whole batch first.
  try {
    parse_gemm_calls(batch_of(c.dump()), "rec.h5");
    ADD_FAILURE() << "no GemmCallError";
  } catch (const GemmCallError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rec.h5: gemm_call 'r1/call0': key 'input'", 0), 0u);
  }
  EXPECT_NO_THROW(parse_gemm_calls(batch_of(good_call().dump()), "rec.h5"));
}

TEST(HostileGemmCall, OversizedGemmCasesAreErrorsNotExpectedErrors) {
  recordings::GemmCase c;
  c.id = "g/0";
  c.M = std::uint64_t{1} << 40; // with no operand codes: inconsistent and over the limit
  c.N = 16;
  c.K = 32;
  c.expect_error = "ValueError";
  c.profile = "hopper";
  recordings::GemmBatch b{"g", {c}, {}};
  const auto s = replay_gemm_set(b, "g.h5");
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].outcome, Outcome::error) << s.results[0].message;
}

} // namespace
} // namespace mmaemu::harness
