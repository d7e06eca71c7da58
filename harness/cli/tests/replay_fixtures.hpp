// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Small recordings for the replay tests, with expected bits derived here: every operand code
// is 0x38 (e4m3 1.0) and the scales are 1.0, so each fp32 output of a K = 32 GEMM is the exact
// sum 32.0 (0x42000000); torch refuses an e5m2 output of two e4m3 operands
// (ReferenceRejectsError, scaled-mm-facts.md).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "tier_test_support.hpp"

namespace replaytest {

namespace fs = std::filesystem;

inline constexpr std::uint32_t kThirtyTwo = 0x42000000u; // 32.0f

// input [2, 32] row-major (64 bytes), mat2 [32, 16] column-major (512 bytes), unit scales.
inline nlohmann::json unit_call(int k_stride_pad = 0) {
  using nlohmann::json;
  return {
      {"M", 2},
      {"N", 16},
      {"K", 32},
      {"input",
       {{"dtype", "e4m3"}, {"shape", {2, 32}}, {"strides", {32 + k_stride_pad, 1}}, {"offset", 0}}},
      {"mat2", {{"dtype", "e4m3"}, {"shape", {32, 16}}, {"strides", {1, 32}}}},
      {"scale_a", {{"dtype", "fp32"}, {"shape", json::array()}, {"bits", {"0x3f800000"}}}},
      {"scale_b", {{"dtype", "fp32"}, {"shape", {1}}, {"bits", {"3F800000"}}}},
      {"profile", "hopper"}};
}

// A call `id` with two outputs: fp32 (32.0 everywhere) and an e5m2 output torch refuses.
inline mmaemu::recordings::GemmCall unit_gemm_call(const std::string& id, int k_stride_pad = 0) {
  mmaemu::recordings::GemmCall gc;
  gc.id = id;
  gc.call_json = unit_call(k_stride_pad).dump();
  gc.input_storage.assign(static_cast<std::size_t>(2 * (32 + k_stride_pad)), 0x38);
  gc.mat2_storage.assign(512, 0x38);
  gc.outputs = {{"fp32",
                 mmaemu::Format::fp32,
                 true,
                 "1",
                 {2, 16},
                 std::vector<std::uint32_t>(32, kThirtyTwo),
                 ""},
                {"e5m2", mmaemu::Format::e5m2, true, "1", {}, {}, "ReferenceRejectsError"}};
  return gc;
}

// A recording of one gemm_call set of `calls` calls (ids "calls/<i>").
inline mmaemu::recordings::Recording gemm_call_recording(std::size_t calls) {
  mmaemu::recordings::Recording rec;
  mmaemu::recordings::GemmCallBatch b;
  b.name = "calls";
  b.attrs["gpu"] = "none (synthetic)";
  for (std::size_t i = 0; i < calls; ++i)
    b.calls.push_back(unit_gemm_call("calls/" + std::to_string(i)));
  rec.gemm_call.push_back(std::move(b));
  return rec;
}

inline mmaemu::harness::RunOptions options_for(const fs::path& recordings) {
  mmaemu::harness::RunOptions o;
  o.layout.exe = MMAEMU_BIN;
  o.layout.origin = "build tree";
  o.layout.source_dir = tiertest::source_dir();
  o.layout.tiers_dir = tiertest::committed_tiers();
  o.layout.recordings_dir = recordings;
  o.text = stderr;
  return o;
}

} // namespace replaytest
