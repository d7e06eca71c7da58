// SPDX-License-Identifier: BSD-2-Clause
// scaled_mm's validation, one table-driven test per rule of scaled_mm_rules(): each row is a
// call on one side of a boundary, with the exact error class (ReferenceRejectsError where
// torch 2.7.1 or cuBLASLt reject, UnsupportedFeatureError for what mmaemu does not model,
// ValueError for bad arguments) and a word of the message that names the argument. Rows are
// checked twice: against the rule alone and against the whole validation (so every earlier
// rule passes on the row's call). Then the order of the rules.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/explain.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace {

using mmaemu::Format;
using mmaemu::Profile;
using mmaemu::ScaledMmCall;
using mmaemu::Tensor;
using Shape = std::vector<std::int64_t>;

constexpr std::uint32_t kOne = 0x3F800000u;
const char* const OK = "ok";
const char* const RRE = "ReferenceRejectsError";
const char* const UFE = "UnsupportedFeatureError";
const char* const VE = "ValueError";

struct Outcome {
  std::string cls;
  std::string msg;
};

Outcome validate(const ScaledMmCall& c, const Profile& p) {
  try {
    mmaemu::validate_scaled_mm(c, p);
    return {OK, ""};
  } catch (const mmaemu::MmaemuError& e) {
    return {e.class_name(), e.what()};
  }
}

const mmaemu::ScaledMmRule& rule(const std::string& id) {
  for (const auto& r : mmaemu::scaled_mm_rules())
    if (id == r.id)
      return r;
  throw std::runtime_error("no rule " + id);
}

Outcome check_rule(const std::string& id, const ScaledMmCall& c, const Profile& p) {
  try {
    rule(id).check(c, p);
    return {OK, ""};
  } catch (const mmaemu::MmaemuError& e) {
    return {e.class_name(), e.what()};
  }
}

// A row-major [M, K] mat1 and a column-major [K, N] mat2 (w.t() of a row-major [N, K] w).
Tensor mat1(std::int64_t M, std::int64_t K, Format f = Format::e4m3) {
  return Tensor::zeros(f, {M, K});
}
Tensor mat2(std::int64_t K, std::int64_t N, Format f = Format::e4m3) {
  return Tensor::zeros(f, {N, K}).t();
}

// A valid call: M = 16, K = 32, N = 32, e4m3 x e4m3, tensor-wise fp32 scales {1}.
ScaledMmCall base(std::int64_t M = 16, std::int64_t K = 32, std::int64_t N = 32) {
  ScaledMmCall c;
  c.input = mat1(M, K);
  c.mat2 = mat2(K, N);
  c.scale_a = Tensor::scalar_f32(kOne);
  c.scale_b = Tensor::scalar_f32(kOne);
  c.profile = "hopper"; // scaled_mm(c) below does not depend on $MMAEMU_PROFILE
  return c;
}

Tensor f32_of_shape(const Shape& s) {
  Tensor t = Tensor::zeros(Format::fp32, s);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set_bits_flat(i, kOne);
  return t;
}

struct Row {
  std::string name;
  std::function<void(ScaledMmCall&)> edit;
  std::string rule_cls; // the rule alone
  std::string full_cls; // validate_scaled_mm (the rule, or a later one, fires)
  std::string needle;   // in the message (names the argument), when not ok
  const Profile* profile = nullptr;
};

// out= tensors must outlive the rows' calls.
std::vector<std::shared_ptr<Tensor>>& outs() {
  static std::vector<std::shared_ptr<Tensor>> v;
  return v;
}
Tensor* keep(Tensor t) {
  outs().push_back(std::make_shared<Tensor>(std::move(t)));
  return outs().back().get();
}

void run_table(const std::string& rule_id, const std::vector<Row>& rows) {
  const Profile& hopper = mmaemu::get_profile("hopper");
  ASSERT_NO_THROW(rule(rule_id));
  for (const auto& row : rows) {
    SCOPED_TRACE(rule_id + ": " + row.name);
    ScaledMmCall c = base();
    row.edit(c);
    const Profile& p = row.profile ? *row.profile : hopper;
    const Outcome r = check_rule(rule_id, c, p);
    EXPECT_EQ(r.cls, row.rule_cls) << r.msg;
    const Outcome f = validate(c, p);
    EXPECT_EQ(f.cls, row.full_cls) << f.msg;
    if (row.rule_cls != OK) {
      EXPECT_NE(r.msg.find(row.needle), std::string::npos) << "message: " << r.msg;
      // The whole validation raises this rule's error (every earlier rule passes).
      EXPECT_EQ(f.msg, r.msg);
    } else if (row.full_cls != OK) {
      EXPECT_NE(f.msg.find(row.needle), std::string::npos) << "message: " << f.msg;
    }
  }
}

Profile custom_profile(const std::string& name, const std::string& capability,
                       const std::string& preset, const std::string& extra = "") {
  return mmaemu::parse_profile_json(
      R"({"name": ")" + name + R"(", "preset": ")" + preset +
      R"(", "gpu_name": "test GPU", "capability": ")" + capability +
      R"(", "sm_count": 8, "cublaslt_version": "x", "caller": "torch._scaled_mm", "torch_version": "2.7.1",
          "workspace_bytes": 0, "maturity": "custom")" +
      extra + "}");
}

class ScaledMmRules : public ::testing::Test {
protected:
  void SetUp() override {
    prev_ = mmaemu::set_warning_sink([](const mmaemu::Warning&) {});
  }
  void TearDown() override { mmaemu::set_warning_sink(prev_); }
  mmaemu::WarningSink prev_;
};

TEST_F(ScaledMmRules, TheTableListsTheRulesInTorchsOrder) {
  std::vector<std::string> ids;
  for (const auto& r : mmaemu::scaled_mm_rules())
    ids.emplace_back(r.id);
  const std::vector<std::string> expect = {
      "capability",        "matrices",         "scales",
      "scale_result",      "bias_size",        "divisible16",
      "out_dtype_matches", "fp8_inputs",       "not_e5m2_pair",
      "bias_dtype",        "layouts",          "out_dtype_supported",
      "profile_rejects",   "bias_unsupported", "grad_mode"};
  EXPECT_EQ(ids, expect);
  for (const auto& r : mmaemu::scaled_mm_rules()) {
    EXPECT_NE(r.check, nullptr) << r.id;
    EXPECT_GT(std::string(r.description).size(), 0u) << r.id;
  }
}

TEST_F(ScaledMmRules, BaseCallIsValidOnEveryShippedProfile) {
  for (const auto& name : mmaemu::list_profiles()) {
    EXPECT_EQ(validate(base(), mmaemu::get_profile(name)).cls, OK) << name;
  }
}

TEST_F(ScaledMmRules, MissingTensorsAreValueErrors) {
  ScaledMmCall c = base();
  c.scale_b = Tensor();
  EXPECT_EQ(validate(c, mmaemu::get_profile("hopper")).cls, VE);
  ScaledMmCall d = base();
  d.input = Tensor();
  EXPECT_EQ(validate(d, mmaemu::get_profile("hopper")).cls, VE);
}

TEST_F(ScaledMmRules, Capability) {
  static const Profile cap86 = custom_profile("cap86", "8.6", "ada");
  static const Profile cap80 = custom_profile("cap80", "8.0", "ada");
  static const Profile cap87 = custom_profile("cap87", "8.7", "ada");
  static const Profile cap89 = custom_profile("cap89", "8.9", "ada");
  static const Profile cap90 = custom_profile("cap90", "9.0", "hopper");
  static const Profile cap120 = custom_profile("cap120", "12.0", "hopper");
  auto none = [](ScaledMmCall&) {};
  run_table("capability",
            {
                {"8.9 (ada) passes", none, OK, OK, "", &mmaemu::get_profile("ada")},
                {"9.0 (hopper) passes", none, OK, OK, "", &mmaemu::get_profile("hopper")},
                {"10.0 (b200) passes", none, OK, OK, "",
                 &mmaemu::get_profile("b200-mma-sync-experimental")},
                {"custom 8.9 passes", none, OK, OK, "", &cap89},
                {"custom 9.0 passes", none, OK, OK, "", &cap90},
                {"custom 12.0 passes", none, OK, OK, "", &cap120},
                {"custom 8.6 rejected", none, RRE, RRE, "8.6", &cap86},
                {"custom 8.7 rejected (only exactly 8.9 below 9.0)", none, RRE, RRE, "capability",
                 &cap87},
                {"custom 8.0 rejected", none, RRE, RRE, "cap80", &cap80},
            });
}

TEST_F(ScaledMmRules, Matrices) {
  run_table(
      "matrices",
      {
          {"2-D with equal K passes", [](ScaledMmCall&) {}, OK, OK, ""},
          {"3-D mat1 rejected",
           [](ScaledMmCall& c) {
             c.input = Tensor::zeros(Format::e4m3, {1, 16, 32});
           },
           RRE, RRE, "mat1"},
          {"1-D mat2 rejected", [](ScaledMmCall& c) { c.mat2 = Tensor::zeros(Format::e4m3, {32}); },
           RRE, RRE, "mat2"},
          {"K 32 vs 48 rejected", [](ScaledMmCall& c) { c.mat2 = mat2(48, 32); }, RRE, RRE,
           "mat1 and mat2 shapes cannot be multiplied (16x32 and 48x32)"},
          {"K 32 vs 16 rejected", [](ScaledMmCall& c) { c.mat2 = mat2(16, 32); }, RRE, RRE,
           "16x32 and 16x32"},
      });
}

TEST_F(ScaledMmRules, Scales) {
  auto scales = [](Shape a, Shape b, Format fa = Format::fp32, Format fb = Format::fp32) {
    return [=](ScaledMmCall& c) {
      c.scale_a = f32_of_shape(a);
      c.scale_b = f32_of_shape(b);
      if (fa != Format::fp32)
        c.scale_a = Tensor::zeros(fa, a);
      if (fb != Format::fp32)
        c.scale_b = Tensor::zeros(fb, b);
    };
  };
  run_table(
      "scales",
      {
          {"{1} and {1} (tensor-wise) pass", scales({1}, {1}), OK, OK, ""},
          {"0-d scalars pass", scales({}, {}), OK, OK, ""},
          {"{1,1} and {1,1} pass", scales({1, 1}, {1, 1}), OK, OK, ""},
          {"0-d and {1,1,1} (one element, any dims) pass", scales({}, {1, 1, 1}), OK, OK, ""},
          {"fp16 scale_a rejected", scales({1}, {1}, Format::fp16), RRE, RRE, "scale_a"},
          {"bf16 scale_b rejected", scales({1}, {1}, Format::fp32, Format::bf16), RRE, RRE,
           "scale_b"},
          {"row-wise {M,1} + {1,N} unsupported", scales({16, 1}, {1, 32}), UFE, UFE, "row-wise"},
          {"{2} scale_a rejected", scales({2}, {1}), RRE, RRE, "scale_a"},
          {"{2} scale_b rejected", scales({1}, {2}), RRE, RRE, "scale_b"},
          {"{M,1} + {N,1} rejected", scales({16, 1}, {32, 1}), RRE, RRE, "scale_b"},
          {"{1,N} + {M,1} (swapped) rejected", scales({1, 32}, {16, 1}), RRE, RRE, "scale_a"},
          {"{M} + {N} (1-D) rejected", scales({16}, {32}), RRE, RRE, "scale_a"},
          {"row-wise shapes with a non-contiguous scale_a rejected",
           [](ScaledMmCall& c) {
             c.scale_a = Tensor::strided(Format::fp32, {16, 1}, {2, 1}, 0, 32);
             c.scale_b = f32_of_shape({1, 32});
           },
           RRE, RRE, "scale_a"},
      });
}

TEST_F(ScaledMmRules, ScaleResult) {
  auto sr = [](Shape s, Format f = Format::fp32) {
    return [=](ScaledMmCall& c) {
      c.scale_result = f == Format::fp32 ? f32_of_shape(s) : Tensor::zeros(f, s);
    };
  };
  run_table("scale_result",
            {
                {"absent passes", [](ScaledMmCall&) {}, OK, OK, ""},
                {"{1} fp32 passes", sr({1}), OK, OK, ""},
                {"0-d fp32 passes", sr({}), OK, OK, ""},
                {"{1,1} fp32 passes", sr({1, 1}), OK, OK, ""},
                {"{2} rejected", sr({2}), RRE, RRE, "scale_result"},
                {"{1} fp16 rejected", sr({1}, Format::fp16), RRE, RRE, "scale_result"},
                {"{1} bf16 rejected", sr({1}, Format::bf16), RRE, RRE, "scale_result"},
            });
}

TEST_F(ScaledMmRules, BiasSize) {
  auto bias = [](Shape s) {
    return [=](ScaledMmCall& c) {
      c.out_dtype = Format::bf16;
      c.bias = Tensor::zeros(Format::bf16, s);
    };
  };
  run_table("bias_size",
            {
                {"no bias passes", [](ScaledMmCall&) {}, OK, OK, ""},
                // A bias of N elements passes this rule; mmaemu then refuses any bias.
                {"{N} passes the size rule", bias({32}), OK, UFE, "bias"},
                {"{1,N} (numel N) passes the size rule", bias({1, 32}), OK, UFE, "bias"},
                {"{N-1} rejected", bias({31}), RRE, RRE, "Bias must be size 32 but got 31"},
                {"{N+1} rejected", bias({33}), RRE, RRE, "Bias"},
                {"{M} rejected", bias({16}), RRE, RRE, "Bias"},
            });
}

TEST_F(ScaledMmRules, Divisible16) {
  auto shape = [](std::int64_t M, std::int64_t K, std::int64_t N) {
    return [=](ScaledMmCall& c) {
      c.input = mat1(M, K);
      c.mat2 = mat2(K, N);
    };
  };
  run_table("divisible16", {
                               {"K 16 passes", shape(16, 16, 32), OK, OK, ""},
                               {"K 24 rejected", shape(16, 24, 32), RRE, RRE, "mat1"},
                               {"K 8 rejected", shape(16, 8, 32), RRE, RRE, "divisible by 16"},
                               {"K 400 passes", shape(16, 400, 32), OK, OK, ""},
                               {"K 401 rejected", shape(16, 401, 32), RRE, RRE, "mat1"},
                               {"N 32 passes", shape(16, 32, 32), OK, OK, ""},
                               {"N 40 rejected", shape(16, 32, 40), RRE, RRE, "mat2"},
                               {"N 16 passes", shape(16, 32, 16), OK, OK, ""},
                               {"N 8 rejected", shape(16, 32, 8), RRE, RRE, "mat2"},
                               {"M 3 passes (M is not constrained)", shape(3, 32, 32), OK, OK, ""},
                               {"M 1 passes", shape(1, 32, 32), OK, OK, ""},
                               {"M 0 passes", shape(0, 32, 32), OK, OK, ""},
                               {"N 0 passes", shape(16, 32, 0), OK, OK, ""},
                               {"K 0 passes (M 1)", shape(1, 0, 32), OK, OK, ""},
                           });
}

TEST_F(ScaledMmRules, OutDtypeMatches) {
  auto out = [](std::optional<Format> out_dtype, std::optional<Format> out_f) {
    return [=](ScaledMmCall& c) {
      c.out_dtype = out_dtype;
      if (out_f)
        c.out = keep(Tensor::zeros(*out_f, {16, 32}));
    };
  };
  run_table(
      "out_dtype_matches",
      {
          {"out fp32 with out_dtype fp32 passes", out(Format::fp32, Format::fp32), OK, OK, ""},
          {"out bf16 with out_dtype fp32 rejected", out(Format::fp32, Format::bf16), RRE, RRE,
           "out_dtype"},
          {"out e4m3 with out_dtype e5m2 rejected", out(Format::e5m2, Format::e4m3), RRE, RRE,
           "out_dtype"},
          {"out bf16 without out_dtype passes", out(std::nullopt, Format::bf16), OK, OK, ""},
          {"out_dtype fp16 without out passes", out(Format::fp16, std::nullopt), OK, OK, ""},
          {"an undefined out with out_dtype passes",
           [](ScaledMmCall& c) {
             c.out_dtype = Format::e4m3;
             c.out = keep(Tensor());
           },
           OK, OK, ""},
      });
}

TEST_F(ScaledMmRules, Fp8Inputs) {
  auto types = [](Format a, Format b) {
    return [=](ScaledMmCall& c) {
      c.input = mat1(16, 32, a);
      c.mat2 = mat2(32, 32, b);
      c.out_dtype = Format::bf16;
    };
  };
  run_table("fp8_inputs",
            {
                {"e4m3 x e4m3 passes", types(Format::e4m3, Format::e4m3), OK, OK, ""},
                {"e5m2 x e4m3 passes", types(Format::e5m2, Format::e4m3), OK, OK, ""},
                {"fp16 mat1 rejected", types(Format::fp16, Format::e4m3), RRE, RRE, "mat1"},
                {"bf16 mat1 rejected", types(Format::bf16, Format::e4m3), RRE, RRE, "mat1"},
                {"fp32 mat2 rejected", types(Format::e4m3, Format::fp32), RRE, RRE, "mat2"},
                {"fp16 mat2 rejected", types(Format::e4m3, Format::fp16), RRE, RRE,
                 "Expected mat2 to be Float8"},
            });
}

TEST_F(ScaledMmRules, NotE5m2Pair) {
  auto types = [](Format a, Format b, std::optional<Format> out) {
    return [=](ScaledMmCall& c) {
      c.input = mat1(16, 32, a);
      c.mat2 = mat2(32, 32, b);
      c.out_dtype = out;
    };
  };
  run_table("not_e5m2_pair",
            {
                {"e5m2 x e4m3 (default out e5m2) passes",
                 types(Format::e5m2, Format::e4m3, std::nullopt), OK, OK, ""},
                {"e4m3 x e5m2 passes", types(Format::e4m3, Format::e5m2, std::nullopt), OK, OK, ""},
                {"e4m3 x e4m3 passes", types(Format::e4m3, Format::e4m3, std::nullopt), OK, OK, ""},
                {"e5m2 x e5m2 rejected", types(Format::e5m2, Format::e5m2, std::nullopt), RRE, RRE,
                 "Multiplication of two Float8_e5m2 matrices is not supported"},
                {"e5m2 x e5m2 -> bf16 rejected", types(Format::e5m2, Format::e5m2, Format::bf16),
                 RRE, RRE, "e5m2"},
                {"e5m2 x e5m2 rejected on ada", types(Format::e5m2, Format::e5m2, Format::fp32),
                 RRE, RRE, "e5m2", &mmaemu::get_profile("ada")},
            });
}

TEST_F(ScaledMmRules, BiasDtype) {
  auto bias = [](Format b, std::optional<Format> out) {
    return [=](ScaledMmCall& c) {
      c.out_dtype = out;
      c.bias = Tensor::zeros(b, {32});
    };
  };
  run_table(
      "bias_dtype",
      {
          {"no bias with fp32 out passes", [](ScaledMmCall& c) { c.out_dtype = Format::fp32; }, OK,
           OK, ""},
          {"bf16 bias with bf16 out passes the rule", bias(Format::bf16, Format::bf16), OK, UFE,
           "bias"},
          {"fp16 bias with fp16 out passes the rule", bias(Format::fp16, Format::fp16), OK, UFE,
           "bias"},
          {"fp16 bias with e4m3 out passes the rule", bias(Format::fp16, Format::e4m3), OK, UFE,
           "bias"},
          {"bf16 bias with default (e4m3) out passes the rule", bias(Format::bf16, std::nullopt),
           OK, UFE, "bias"},
          {"bf16 bias with fp32 out rejected", bias(Format::bf16, Format::fp32), RRE, RRE,
           "Bias is not supported when out_dtype is set to Float32"},
          {"fp32 bias with e4m3 out rejected", bias(Format::fp32, Format::e4m3), RRE, RRE,
           "Bias must be"},
          {"e4m3 bias with bf16 out rejected", bias(Format::e4m3, Format::bf16), RRE, RRE, "Bias"},
          {"fp16 bias with bf16 out rejected", bias(Format::fp16, Format::bf16), RRE, RRE,
           "Bias must be BFloat16 to compute"},
          // torch 2.7.1 (Blas.cpp): "Bias must be Float16 to compute Half output, but got
          // BFloat16".
          {"bf16 bias with fp16 out rejected, asking for a Float16 bias",
           bias(Format::bf16, Format::fp16), RRE, RRE, "Bias must be Float16 to compute"},
      });
}

TEST_F(ScaledMmRules, Layouts) {
  auto lay = [](Tensor a, Tensor b) {
    return [=](ScaledMmCall& c) {
      c.input = a;
      c.mat2 = b;
    };
  };
  const Tensor a_row = mat1(16, 32), b_col = mat2(32, 32);
  const Tensor a_col = Tensor::zeros(Format::e4m3, {32, 16}).t(); // [16, 32] column-major
  const Tensor b_row = Tensor::zeros(Format::e4m3, {32, 32});     // [32, 32] row-major
  const Tensor a_pad = Tensor::strided(Format::e4m3, {16, 32}, {48, 1}, 5, 5 + 15 * 48 + 32);
  const Tensor b_pad = Tensor::strided(Format::e4m3, {32, 32}, {1, 40}, 3, 3 + 31 * 40 + 32);
  const Tensor a_gap =
      Tensor::strided(Format::e4m3, {16, 32}, {64, 2}, 0, 15 * 64 + 62 + 1); // copied
  const Tensor b_gap =
      Tensor::strided(Format::e4m3, {32, 32}, {2, 64}, 0, 62 + 31 * 64 + 1); // copied
  const Tensor a_m1 =
      Tensor::zeros(Format::e4m3, {32, 1}).t(); // [1, 32] strides {1, 1}: contiguous
  run_table(
      "layouts",
      {
          {"row-major mat1, column-major mat2 pass", lay(a_row, b_col), OK, OK, ""},
          {"column-major mat1 rejected", lay(a_col, b_col), RRE, RRE, "mat1"},
          {"row-major mat2 rejected", lay(a_row, b_row), RRE, RRE, "mat2"},
          {"both transposed rejected", lay(a_col, b_row), RRE, RRE,
           "Only multiplication of row-major and column-major"},
          {"padded-ld row-major mat1 with an offset passes", lay(a_pad, b_col), OK, OK, ""},
          {"padded-ld column-major mat2 with an offset passes", lay(a_row, b_pad), OK, OK, ""},
          {"non-dense mat1 (copied to row-major by torch) passes", lay(a_gap, b_col), OK, OK, ""},
          {"non-dense mat2 (copied to row-major by torch) rejected", lay(a_row, b_gap), RRE, RRE,
           "mat2"},
          {"M 1 mat1 from a transposed column is contiguous and passes",
           [=](ScaledMmCall& c) {
             c.input = a_m1;
             c.scale_a = Tensor::scalar_f32(kOne);
           },
           OK, OK, ""},
      });
}

TEST_F(ScaledMmRules, EmptyDimensionsReturnBeforeTheLayoutCheckAsInTorch) {
  // torch 2.7.1 (_scaled_mm_out_cuda): when M, K or N is 0 it returns (zero-filled for K = 0)
  // before cublasCommonArgs / the transa == 't' && transb == 'n' check, so an empty call is
  // never rejected for its layout (scaled-mm-facts.md: check 13 before check 14).
  const Profile& hopper = mmaemu::get_profile("hopper");
  ScaledMmCall k0 = base(16, 0, 32); // mat1 = zeros({16, 0}): torch's is_contiguous() is true
  EXPECT_EQ(validate(k0, hopper).cls, OK) << validate(k0, hopper).msg;
  ScaledMmCall m0 = base(0, 32, 32);
  m0.input = Tensor::zeros(Format::e4m3, {32, 0}).t(); // [0, 32] "column-major"
  EXPECT_EQ(validate(m0, hopper).cls, OK) << validate(m0, hopper).msg;
  ScaledMmCall n0 = base(16, 32, 0);
  n0.mat2 = Tensor::zeros(Format::e4m3, {32, 0}); // [32, 0] "row-major"
  EXPECT_EQ(validate(n0, hopper).cls, OK) << validate(n0, hopper).msg;
  // No cuBLASLt call either: e4m3 x e4m3 -> e5m2 with K = 0 passes torch's ATen checks and is
  // zero-filled without reaching cuBLASLt's rejection (M = 1 keeps mat1 contiguous here).
  ScaledMmCall k0e5 = base(1, 0, 32);
  k0e5.out_dtype = Format::e5m2;
  EXPECT_EQ(validate(k0e5, hopper).cls, OK) << validate(k0e5, hopper).msg;
}

TEST_F(ScaledMmRules, OutDtypeSupported) {
  auto out = [](Format f) { return [=](ScaledMmCall& c) { c.out_dtype = f; }; };
  run_table("out_dtype_supported",
            {
                {"fp32 passes", out(Format::fp32), OK, OK, ""},
                {"bf16 passes", out(Format::bf16), OK, OK, ""},
                {"fp16 passes", out(Format::fp16), OK, OK, ""},
                {"e4m3 passes", out(Format::e4m3), OK, OK, ""},
                {"e5m2 passes the rule (the profile then rejects e4m3 x e4m3)", out(Format::e5m2),
                 OK, RRE, "e5m2"},
            });
}

TEST_F(ScaledMmRules, ProfileRejects) {
  auto types = [](Format a, Format b, std::optional<Format> out) {
    return [=](ScaledMmCall& c) {
      c.input = mat1(16, 32, a);
      c.mat2 = mat2(32, 32, b);
      c.out_dtype = out;
    };
  };
  static const Profile custom = custom_profile(
      "rejecting", "9.0", "hopper",
      R"(, "rejects": [{"a": "e5m2", "out": "fp32", "message": "this cuBLASLt refuses e5m2 into fp32"}])");
  const Profile* ada = &mmaemu::get_profile("ada");
  const Profile* b200 = &mmaemu::get_profile("b200-mma-sync-experimental");
  run_table("profile_rejects",
            {
                {"e4m3 x e4m3 -> e4m3 passes", types(Format::e4m3, Format::e4m3, Format::e4m3), OK,
                 OK, ""},
                {"e4m3 x e4m3 -> e5m2 rejected by cuBLASLt",
                 types(Format::e4m3, Format::e4m3, Format::e5m2), RRE, RRE, "hopper"},
                {"e4m3 x e4m3 -> e5m2 rejected on ada",
                 types(Format::e4m3, Format::e4m3, Format::e5m2), RRE, RRE, "'ada'", ada},
                {"e4m3 x e4m3 -> e5m2 rejected on b200",
                 types(Format::e4m3, Format::e4m3, Format::e5m2), RRE, RRE, "e5m2", b200},
                {"e4m3 x e5m2 -> e5m2 passes", types(Format::e4m3, Format::e5m2, Format::e5m2), OK,
                 OK, ""},
                {"e5m2 x e4m3 -> e5m2 passes", types(Format::e5m2, Format::e4m3, Format::e5m2), OK,
                 OK, ""},
                {"e4m3 x e4m3 -> bf16 passes on ada",
                 types(Format::e4m3, Format::e4m3, Format::bf16), OK, OK, "", ada},
                {"custom reject: e5m2 x e4m3 -> fp32 rejected",
                 types(Format::e5m2, Format::e4m3, Format::fp32), RRE, RRE,
                 "this cuBLASLt refuses e5m2 into fp32", &custom},
                {"custom reject: e5m2 x e4m3 -> bf16 passes",
                 types(Format::e5m2, Format::e4m3, Format::bf16), OK, OK, "", &custom},
                {"custom profile keeps the e4m3 x e4m3 -> e5m2 reject",
                 types(Format::e4m3, Format::e4m3, Format::e5m2), RRE, RRE, "rejecting", &custom},
            });
}

TEST_F(ScaledMmRules, BiasUnsupported) {
  run_table(
      "bias_unsupported",
      {
          {"no bias passes", [](ScaledMmCall&) {}, OK, OK, ""},
          {"a valid bf16 bias is unsupported",
           [](ScaledMmCall& c) {
             c.out_dtype = Format::bf16;
             c.bias = Tensor::zeros(Format::bf16, {32});
           },
           UFE, UFE, "bias"},
          {"a valid fp16 bias with e4m3 out is unsupported",
           [](ScaledMmCall& c) { c.bias = Tensor::zeros(Format::fp16, {32}); }, UFE, UFE, "bias"},
      });
}

TEST_F(ScaledMmRules, GradMode) {
  run_table("grad_mode", {
                             {"no input requires grad passes", [](ScaledMmCall&) {}, OK, OK, ""},
                             {"input requiring grad unsupported",
                              [](ScaledMmCall& c) { c.input.set_requires_grad(true); }, UFE, UFE,
                              "input requires_grad True"},
                             {"mat2 requiring grad unsupported",
                              [](ScaledMmCall& c) { c.mat2.set_requires_grad(true); }, UFE, UFE,
                              "mat2 requires_grad True"},
                         });
}

TEST_F(ScaledMmRules, ACallBreakingTwoRulesRaisesTheEarlierOne) {
  const Profile& hopper = mmaemu::get_profile("hopper");
  struct Pair {
    std::string name;
    std::function<void(ScaledMmCall&)> edit;
    std::string first_rule;
  };
  static const Profile cap86 = custom_profile("cap86", "8.6", "ada");
  const std::vector<Pair> pairs = {
      {"K mismatch + e5m2 pair",
       [](ScaledMmCall& c) {
         c.input = mat1(16, 32, Format::e5m2);
         c.mat2 = mat2(48, 32, Format::e5m2);
       },
       "matrices"},
      {"row-wise scales + K 24",
       [](ScaledMmCall& c) {
         c.input = mat1(16, 24);
         c.mat2 = mat2(24, 32);
         c.scale_a = f32_of_shape({16, 1});
         c.scale_b = f32_of_shape({1, 32});
       },
       "scales"},
      {"bad scale_result + bad bias size",
       [](ScaledMmCall& c) {
         c.scale_result = f32_of_shape({2});
         c.bias = Tensor::zeros(Format::bf16, {3});
       },
       "scale_result"},
      {"bad bias size + K 24",
       [](ScaledMmCall& c) {
         c.input = mat1(16, 24);
         c.mat2 = mat2(24, 32);
         c.bias = Tensor::zeros(Format::bf16, {3});
       },
       "bias_size"},
      {"K 24 + e5m2 pair",
       [](ScaledMmCall& c) {
         c.input = mat1(16, 24, Format::e5m2);
         c.mat2 = mat2(24, 32, Format::e5m2);
       },
       "divisible16"},
      {"out dtype mismatch + fp16 mat1",
       [](ScaledMmCall& c) {
         c.input = mat1(16, 32, Format::fp16);
         c.out_dtype = Format::fp32;
         c.out = keep(Tensor::zeros(Format::bf16, {16, 32}));
       },
       "out_dtype_matches"},
      {"fp16 mat2 + column-major mat1",
       [](ScaledMmCall& c) {
         c.input = Tensor::zeros(Format::e4m3, {32, 16}).t();
         c.mat2 = mat2(32, 32, Format::fp16);
       },
       "fp8_inputs"},
      {"e5m2 pair + bias with fp32 out",
       [](ScaledMmCall& c) {
         c.input = mat1(16, 32, Format::e5m2);
         c.mat2 = mat2(32, 32, Format::e5m2);
         c.out_dtype = Format::fp32;
         c.bias = Tensor::zeros(Format::bf16, {32});
       },
       "not_e5m2_pair"},
      {"bias with fp32 out + row-major mat2",
       [](ScaledMmCall& c) {
         c.mat2 = Tensor::zeros(Format::e4m3, {32, 32});
         c.out_dtype = Format::fp32;
         c.bias = Tensor::zeros(Format::bf16, {32});
       },
       "bias_dtype"},
      {"row-major mat2 + e4m3 x e4m3 -> e5m2",
       [](ScaledMmCall& c) {
         c.mat2 = Tensor::zeros(Format::e4m3, {32, 32});
         c.out_dtype = Format::e5m2;
       },
       "layouts"},
      {"e4m3 x e4m3 -> e5m2 + a bias",
       [](ScaledMmCall& c) {
         c.out_dtype = Format::e5m2;
         c.bias = Tensor::zeros(Format::fp16, {32});
       },
       "profile_rejects"},
      {"a bias + input requiring grad",
       [](ScaledMmCall& c) {
         c.out_dtype = Format::bf16;
         c.bias = Tensor::zeros(Format::bf16, {32});
         c.input.set_requires_grad(true);
       },
       "bias_unsupported"},
  };
  for (const auto& p : pairs) {
    SCOPED_TRACE(p.name);
    ScaledMmCall c = base();
    p.edit(c);
    const Outcome expect = check_rule(p.first_rule, c, hopper);
    ASSERT_NE(expect.cls, OK);
    const Outcome got = validate(c, hopper);
    EXPECT_EQ(got.cls, expect.cls);
    EXPECT_EQ(got.msg, expect.msg);
    // The same through scaled_mm itself (validation runs before anything else).
    try {
      mmaemu::scaled_mm(c);
      ADD_FAILURE() << "scaled_mm did not raise";
    } catch (const mmaemu::MmaemuError& e) {
      EXPECT_EQ(std::string(e.what()), expect.msg);
    }
  }
  // Capability comes before everything.
  ScaledMmCall all = base();
  all.input = mat1(16, 24, Format::fp16);
  all.bias = Tensor::zeros(Format::fp32, {5});
  const Outcome cap = validate(all, cap86);
  EXPECT_EQ(cap.cls, RRE);
  EXPECT_NE(cap.msg.find("capability"), std::string::npos) << cap.msg;
}

TEST_F(ScaledMmRules, ErrorClassesDeriveFromMmaemuErrorAndNameThemselves) {
  ScaledMmCall c = base();
  c.input = mat1(16, 24);
  c.mat2 = mat2(24, 32);
  EXPECT_THROW(mmaemu::scaled_mm(c), mmaemu::ReferenceRejectsError);
  ScaledMmCall r = base();
  r.scale_a = f32_of_shape({16, 1});
  r.scale_b = f32_of_shape({1, 32});
  EXPECT_THROW(mmaemu::scaled_mm(r), mmaemu::UnsupportedFeatureError);
  ScaledMmCall g = base();
  g.mat2.set_requires_grad(true);
  EXPECT_THROW(mmaemu::scaled_mm(g), mmaemu::UnsupportedFeatureError);
  // The positional form validates the same way.
  EXPECT_THROW(mmaemu::scaled_mm(mat1(16, 32), mat2(32, 40), Tensor::scalar_f32(kOne),
                                 Tensor::scalar_f32(kOne)),
               mmaemu::ReferenceRejectsError);
}

TEST_F(ScaledMmRules, SizesOverTheEmulatorsLimitsAreValueErrorsAfterTorchsRules) {
  const Profile& hopper = mmaemu::get_profile("hopper");
  const std::int64_t D = mmaemu::kMaxGemmDim;
  auto meta = [](std::int64_t M, std::int64_t K, std::int64_t N) {
    ScaledMmCall c = base();
    c.input = Tensor::meta(Format::e4m3, {M, K});
    c.mat2 = Tensor::meta(Format::e4m3, {N, K}).t();
    return c;
  };
  EXPECT_EQ(validate(meta(D, 64, 64), hopper).cls, OK);
  const Outcome m = validate(meta(D + 1, 64, 64), hopper);
  EXPECT_EQ(m.cls, VE);
  EXPECT_NE(m.msg.find("M = 2147483648"), std::string::npos) << m.msg;
  const Outcome mk = validate(meta(std::int64_t{1} << 30, 1 << 11, 16), hopper);
  EXPECT_EQ(mk.cls, VE);
  EXPECT_NE(mk.msg.find("M*K"), std::string::npos) << mk.msg;
  // torch's own rejection comes first: K = 2^31 + 1 is not a multiple of 16.
  EXPECT_EQ(validate(meta(16, D + 2, 16), hopper).cls, RRE);
  // scaled_mm refuses before allocating the result.
  EXPECT_THROW(mmaemu::scaled_mm(meta(std::int64_t{1} << 21, 16, std::int64_t{1} << 20)),
               mmaemu::ValueError);
}

} // namespace
