// SPDX-License-Identifier: BSD-2-Clause
// explain: validates a scaled_mm call and reports what it would do without computing it; it
// never throws for an invalid call and reports the class scaled_mm would raise (the checks
// made when the GEMM is planned included), warns dry, and notes K >= 2^24 fast chains.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/explain.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace {

using mmaemu::CallPlan;
using mmaemu::Format;
using mmaemu::ScaledMmCall;
using mmaemu::SplitKRequest;
using mmaemu::Tensor;
using mmaemu::WarningClass;

constexpr std::uint32_t kOne = 0x3F800000u;

ScaledMmCall call(std::int64_t M = 16, std::int64_t K = 32, std::int64_t N = 32) {
  ScaledMmCall c;
  c.input = Tensor::zeros(Format::e4m3, {M, K});
  c.mat2 = Tensor::zeros(Format::e4m3, {N, K}).t();
  c.scale_a = Tensor::scalar_f32(kOne);
  c.scale_b = Tensor::scalar_f32(kOne);
  c.profile = "hopper";
  c.splitk = SplitKRequest::explicit_split(1);
  return c;
}

class Explain : public ::testing::Test {
protected:
  void SetUp() override {
    prev_ = mmaemu::set_warning_sink([this](const mmaemu::Warning& w) { seen_.push_back(w); });
    mmaemu::reset_warnings_once();
  }
  void TearDown() override { mmaemu::set_warning_sink(prev_); }
  mmaemu::WarningSink prev_;
  std::vector<mmaemu::Warning> seen_;
};

bool has_warning(const CallPlan& p, WarningClass c, const std::string& word) {
  for (const auto& w : p.warnings)
    if (w.cls == c && w.message.find(word) != std::string::npos)
      return true;
  return false;
}

TEST_F(Explain, InvalidCallsAreReportedWithTheClassScaledMmRaises) {
  struct Row {
    const char* name;
    std::function<void(ScaledMmCall&)> edit;
    const char* cls;
  };
  const std::vector<Row> rows = {
      {"K 24",
       [](ScaledMmCall& c) {
         c.input = Tensor::zeros(Format::e4m3, {16, 24});
         c.mat2 = Tensor::zeros(Format::e4m3, {32, 24}).t();
       },
       "ReferenceRejectsError"},
      {"row-wise scales",
       [](ScaledMmCall& c) {
         c.scale_a = Tensor::zeros(Format::fp32, {16, 1});
         c.scale_b = Tensor::zeros(Format::fp32, {1, 32});
       },
       "UnsupportedFeatureError"},
      {"a bias",
       [](ScaledMmCall& c) {
         c.out_dtype = Format::bf16;
         c.bias = Tensor::zeros(Format::bf16, {32});
       },
       "UnsupportedFeatureError"},
      {"e4m3 x e4m3 -> e5m2", [](ScaledMmCall& c) { c.out_dtype = Format::e5m2; },
       "ReferenceRejectsError"},
      {"column-major mat1",
       [](ScaledMmCall& c) {
         c.input = Tensor::zeros(Format::e4m3, {32, 16}).t();
       },
       "ReferenceRejectsError"},
      {"an unknown profile", [](ScaledMmCall& c) { c.profile = "nope"; }, "ValueError"},
      {"a missing scale", [](ScaledMmCall& c) { c.scale_b = Tensor(); }, "ValueError"},
      {"backend cuda", [](ScaledMmCall& c) { c.backend = "cuda"; }, "BackendUnavailableError"},
      {"backend cuda:h4", [](ScaledMmCall& c) { c.backend = "cuda:h4"; },
       "BackendUnavailableError"},
      {"an unknown backend", [](ScaledMmCall& c) { c.backend = "metal"; }, "ValueError"},
      {"auto split on hopper's empty table",
       [](ScaledMmCall& c) { c.splitk = SplitKRequest::automatic(); }, "SplitKUnknownError"},
      {"serial split on hopper",
       [](ScaledMmCall& c) { c.splitk = SplitKRequest::explicit_split(2, "serial"); },
       "ValueError"},
      {"contiguous split on ada",
       [](ScaledMmCall& c) {
         c.profile = "ada";
         c.splitk = SplitKRequest::explicit_split(2, "contiguous");
       },
       "ValueError"},
      {"split on b200",
       [](ScaledMmCall& c) {
         c.profile = "b200-mma-sync-experimental";
         c.use_fast_accum = true;
         c.splitk = SplitKRequest::explicit_split(2, "contiguous");
       },
       "UnsupportedFeatureError"},
      {"slow accumulation on b200",
       [](ScaledMmCall& c) {
         c.profile = "b200-mma-sync-experimental";
         c.use_fast_accum = false;
       },
       "UnsupportedFeatureError"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    ScaledMmCall c = call();
    r.edit(c);
    CallPlan p;
    ASSERT_NO_THROW(p = mmaemu::explain(c));
    EXPECT_FALSE(p.ok);
    EXPECT_EQ(p.error_class, r.cls) << p.error_message;
    EXPECT_FALSE(p.error_message.empty());
    // scaled_mm raises the same class with the same message.
    try {
      mmaemu::scaled_mm(c);
      ADD_FAILURE() << "scaled_mm did not raise";
    } catch (const mmaemu::MmaemuError& e) {
      EXPECT_STREQ(e.class_name(), r.cls);
      EXPECT_EQ(std::string(e.what()), p.error_message);
    }
    // The JSON form carries [class, message].
    const auto j = nlohmann::json::parse(mmaemu::call_plan_json(p));
    ASSERT_TRUE(j.at("validation").is_array());
    EXPECT_EQ(j["validation"][0].get<std::string>(), r.cls);
    EXPECT_EQ(j["validation"][1].get<std::string>(), p.error_message);
  }
}

TEST_F(Explain, ASchemeOfAnotherPresetIsAValueErrorWithoutASplit) {
  ScaledMmCall c = call();
  c.splitk = SplitKRequest::explicit_split(2, "serial");
  const CallPlan p = mmaemu::explain(c);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.error_class, "ValueError");
  EXPECT_NE(p.error_message.find("serial"), std::string::npos);
  EXPECT_FALSE(p.split.has_value());
  EXPECT_EQ(p.profile, "hopper");
}

TEST_F(Explain, B200ListsTheExperimentalPresetAndRefusesSlowAccumulation) {
  ScaledMmCall c = call();
  c.profile = "b200-mma-sync-experimental";
  c.splitk = SplitKRequest::automatic();
  c.use_fast_accum = false;
  const CallPlan slow = mmaemu::explain(c);
  EXPECT_FALSE(slow.ok);
  EXPECT_EQ(slow.error_class, "UnsupportedFeatureError");
  EXPECT_NE(slow.error_message.find("use_fast_accum=False"), std::string::npos)
      << slow.error_message;
  c.use_fast_accum = true;
  const CallPlan fast = mmaemu::explain(c);
  EXPECT_TRUE(fast.ok) << fast.error_class << ": " << fast.error_message;
  EXPECT_EQ(fast.preset, "b200_mma_sync");
  EXPECT_EQ(fast.preset_maturity, "experimental");
  EXPECT_EQ(fast.profile_maturity, "experimental");
  ASSERT_TRUE(fast.split.has_value());
  EXPECT_EQ(fast.split->source, "workspace0");
  EXPECT_EQ(fast.split->S, 1);
  for (const CallPlan* p : {&slow, &fast}) {
    EXPECT_TRUE(has_warning(*p, WarningClass::experimental_preset, "b200_mma_sync"));
    EXPECT_TRUE(has_warning(*p, WarningClass::experimental_preset, "b200-mma-sync-experimental"));
  }
  const auto j = nlohmann::json::parse(mmaemu::call_plan_json(fast));
  bool listed = false;
  for (const auto& w : j.at("warnings"))
    listed |= w.at("class") == "ExperimentalPresetWarning" &&
              w.at("message").get<std::string>().find("b200_mma_sync") != std::string::npos;
  EXPECT_TRUE(listed) << j.dump();
  EXPECT_TRUE(seen_.empty()) << "explain reports warnings, it does not emit them";
  // A validated profile lists none.
  EXPECT_TRUE(mmaemu::explain(call()).warnings.empty());
}

TEST_F(Explain, AValidPlanReportsProfileSplitBackendAndShape) {
  ScaledMmCall c = call(3, 64, 48);
  c.out_dtype = Format::bf16;
  c.use_fast_accum = true;
  const CallPlan p = mmaemu::explain(c);
  ASSERT_TRUE(p.ok) << p.error_message;
  EXPECT_EQ(p.profile, "hopper");
  EXPECT_EQ(p.preset, "hopper");
  EXPECT_EQ(p.preset_maturity, "validated");
  EXPECT_EQ(p.backend, "reference");
  ASSERT_FALSE(p.fallbacks.empty());
  EXPECT_NE(p.fallbacks[0].find("cuda"), std::string::npos);
  EXPECT_EQ(p.out_dtype, "bfloat16");
  EXPECT_TRUE(p.use_fast_accum);
  EXPECT_EQ(p.M, 3);
  EXPECT_EQ(p.N, 48);
  EXPECT_EQ(p.K, 64);
  ASSERT_TRUE(p.split.has_value());
  EXPECT_EQ(p.split->source, "explicit");
  const auto j = nlohmann::json::parse(mmaemu::call_plan_json(p));
  EXPECT_EQ(j.at("validation"), "ok");
  EXPECT_EQ(j.at("profile"), "hopper");
  EXPECT_EQ(j.at("backend"), "reference");
  EXPECT_EQ(j.at("split").at("S"), 1);
  EXPECT_EQ(j.at("split").at("source"), "explicit");
  EXPECT_EQ(j.at("shape").at("M"), 3);
  EXPECT_EQ(j.at("shape").at("N"), 48);
  EXPECT_EQ(j.at("shape").at("K"), 64);
  EXPECT_EQ(j.at("out_dtype"), "bfloat16");
  // The default out dtype is the input's.
  EXPECT_EQ(mmaemu::explain(call()).out_dtype, "float8_e4m3fn");
  // A failed plan's JSON has no split.
  ScaledMmCall bad = call();
  bad.splitk = SplitKRequest::automatic();
  EXPECT_TRUE(
      nlohmann::json::parse(mmaemu::call_plan_json(mmaemu::explain(bad))).at("split").is_null());
}

TEST_F(Explain, SplitWarningsAreReportedDryAndLeaveTheOnceForTheCall) {
  ScaledMmCall c = call();
  c.use_fast_accum = true;
  c.splitk = SplitKRequest::explicit_split(2, "contiguous");
  const CallPlan p = mmaemu::explain(c);
  ASSERT_TRUE(p.ok) << p.error_message;
  EXPECT_TRUE(has_warning(p, WarningClass::unverified_split, "hopper"));
  EXPECT_EQ(p.split->S, 2);
  EXPECT_EQ(p.split->scheme, "contiguous");
  EXPECT_TRUE(seen_.empty());
  mmaemu::explain(c);
  EXPECT_TRUE(seen_.empty());
  mmaemu::scaled_mm(c); // the real call still warns, once
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].cls, WarningClass::unverified_split);
}

TEST_F(Explain, UnsplitFastChainsOfKAtLeast2To24AreOkWithANote) {
  // mat1 [16, K] broadcast from one row (strides {0, 1}: torch copies it to row-major);
  // mat2 [K, 16] column-major (strides {1, K}): 16 x 2^24 bytes of real zero storage.
  const std::int64_t K = std::int64_t{1} << 24;
  auto row = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(K));
  auto cols = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(16 * K));
  auto make = [&](std::int64_t k) {
    ScaledMmCall c = call();
    c.input = Tensor::view_of(Format::e4m3, {16, k}, {0, 1}, 0, row);
    c.mat2 = Tensor::view_of(Format::e4m3, {k, 16}, {1, K}, 0, cols);
    c.out_dtype = Format::bf16;
    c.use_fast_accum = true;
    return c;
  };
  auto note_2_24 = [](const CallPlan& p) {
    for (const auto& n : p.notes)
      if (n.find("2^24") != std::string::npos)
        return true;
    return false;
  };
  const CallPlan at = mmaemu::explain(make(K));
  ASSERT_TRUE(at.ok) << at.error_class << ": " << at.error_message;
  EXPECT_EQ(at.K, K);
  EXPECT_TRUE(note_2_24(at));
  EXPECT_EQ(nlohmann::json::parse(mmaemu::call_plan_json(at)).at("validation"), "ok");
  // One step below (K = 2^24 - 16): no note.
  const CallPlan below = mmaemu::explain(make(K - 16));
  ASSERT_TRUE(below.ok) << below.error_message;
  EXPECT_FALSE(note_2_24(below));
  // Slow accumulation or a split: no note.
  ScaledMmCall slow = make(K);
  slow.use_fast_accum = false;
  const CallPlan ps = mmaemu::explain(slow);
  ASSERT_TRUE(ps.ok) << ps.error_message;
  EXPECT_FALSE(note_2_24(ps));
  ScaledMmCall split = make(K);
  split.splitk = SplitKRequest::explicit_split(2, "contiguous");
  const CallPlan pp = mmaemu::explain(split);
  ASSERT_TRUE(pp.ok) << pp.error_message;
  EXPECT_FALSE(note_2_24(pp));
  // auto on a workspace-0 profile decides S = 1: the note again.
  ScaledMmCall ws0 = make(K);
  ws0.profile = "hopper-ws0";
  ws0.splitk = SplitKRequest::automatic();
  EXPECT_TRUE(note_2_24(mmaemu::explain(ws0)));
}

TEST_F(Explain, EmptyShapesAreNoted) {
  ScaledMmCall k0 = call(1, 0, 32);
  const CallPlan pk = mmaemu::explain(k0);
  ASSERT_TRUE(pk.ok) << pk.error_message;
  bool zero_filled = false;
  for (const auto& n : pk.notes)
    zero_filled |= n.find("zero-filled") != std::string::npos;
  EXPECT_TRUE(zero_filled);
  const CallPlan pm = mmaemu::explain(call(0, 32, 32));
  ASSERT_TRUE(pm.ok) << pm.error_message;
  bool empty = false;
  for (const auto& n : pm.notes)
    empty |= n.find("empty") != std::string::npos;
  EXPECT_TRUE(empty);
}

TEST_F(Explain, AMalformedProfileCapabilityNeverEscapesExplain) {
  // A profile whose capability is not a number must not make explain throw: either the
  // profile parser refuses it (ValueError naming the field) or explain reports an error.
  const std::string text =
      R"({"name": "odd", "preset": "hopper", "gpu_name": "g", "capability": "sm_90", "sm_count": 1,
          "cublaslt_version": "v", "caller": "torch._scaled_mm", "torch_version": "2.7.1",
          "workspace_bytes": 0, "maturity": "custom"})";
  mmaemu::Profile p;
  try {
    p = mmaemu::parse_profile_json(text);
  } catch (const mmaemu::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("capability"), std::string::npos) << e.what();
    return;
  }
  ScaledMmCall c = call();
  c.profile_ptr = &p;
  CallPlan plan;
  EXPECT_NO_THROW(plan = mmaemu::explain(c));
}

// A call of the emulator's largest size is explained on meta tensors (nothing allocated);
// one over the limits, or whose element counts overflow, is the ValueError scaled_mm raises.
ScaledMmCall meta_call(std::int64_t M, std::int64_t K, std::int64_t N) {
  ScaledMmCall c = call();
  c.input = Tensor::meta(Format::e4m3, {M, K});
  c.mat2 = Tensor::meta(Format::e4m3, {N, K}).t();
  return c;
}

TEST_F(Explain, CallsOverTheSizeLimitsAreValueErrorsWithoutAllocating) {
  const std::int64_t D = mmaemu::kMaxGemmDim;
  const CallPlan ok = mmaemu::explain(meta_call(D, 64, 64));
  EXPECT_TRUE(ok.ok) << ok.error_message;
  EXPECT_EQ(ok.M, D);
  for (auto [M, K, N] :
       {std::tuple{D + 1, std::int64_t{64}, std::int64_t{64}},
        std::tuple{std::int64_t{64}, D + 1, std::int64_t{64}},
        std::tuple{std::int64_t{1} << 21, std::int64_t{1} << 20, std::int64_t{16}},
        std::tuple{std::int64_t{1} << 21, std::int64_t{16}, std::int64_t{1} << 20}}) {
    const CallPlan p = mmaemu::explain(meta_call(M, K, N));
    EXPECT_FALSE(p.ok) << M << " " << K << " " << N;
    EXPECT_EQ(p.error_class, "ValueError");
    EXPECT_NE(p.error_message.find("limit"), std::string::npos) << p.error_message;
  }
}

TEST_F(Explain, SplitPartialsOverTheLimitAreTheValueErrorAccumulateRaises) {
  // S = 2^20 partial [2^20, 2^10] results: 2^50 values.
  ScaledMmCall c = meta_call(1 << 20, 1 << 20, 1 << 10);
  c.splitk = mmaemu::parse_splitk("1048576,contiguous");
  const CallPlan p = mmaemu::explain(c);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.error_class, "ValueError");
  EXPECT_NE(p.error_message.find("partial"), std::string::npos) << p.error_message;
}

TEST_F(Explain, ScaledMmRefusesMetaTensors) {
  EXPECT_THROW(mmaemu::scaled_mm(meta_call(16, 32, 32)), mmaemu::ValueError);
}

} // namespace
