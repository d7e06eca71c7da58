// SPDX-License-Identifier: BSD-2-Clause
// Replay of GEMM-level recordings: kinds "gemm" (normalised calls) and "gemm_call" (exact
// recorded calls with their layouts).

#include <chrono>
#include <nlohmann/json.hpp>

#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/harness/replay.hpp"

namespace mmaemu::harness {

namespace {

using nlohmann::json;

// Compares every output; fills the case result from the first mismatch.
void compare_outputs(CaseResult& r, const std::vector<std::uint32_t>& expect, const Tensor& actual,
                     Format out) {
  if (static_cast<std::int64_t>(expect.size()) != actual.numel()) {
    r.outcome = Outcome::fail;
    r.why = Mismatch::value;
    r.message = "result has " + std::to_string(actual.numel()) + " elements, the recording " +
                std::to_string(expect.size());
    return;
  }
  std::size_t counts[4] = {0, 0, 0, 0};
  bool first = true;
  for (std::size_t i = 0; i < expect.size(); ++i) {
    const std::uint32_t got = actual.bits_flat(static_cast<std::int64_t>(i));
    const Mismatch m = compare_bits(expect[i], got, out, NanPolicy::bits);
    if (m == Mismatch::none) continue;
    ++counts[static_cast<int>(m)];
    if (first) {
      r.expected = expect[i];
      r.actual = got;
      r.why = m;
      r.message = "first mismatch at output " + std::to_string(i);
      first = false;
    }
  }
  if (first) {
    r.outcome = Outcome::pass;
    return;
  }
  r.outcome = Outcome::fail;
  r.message += " (" + std::string(spec(out).torch_name) + "; zero_sign " + std::to_string(counts[1]) +
               ", nan_payload " + std::to_string(counts[2]) + ", value " + std::to_string(counts[3]) + ")";
}

// Runs `body`; an expected error class passes, an unexpected one fails, any other exception
// is an ERROR.
template <class Body>
void run_case(CaseResult& r, const std::string& expect_error, Body body) {
  try {
    body();
    if (!expect_error.empty()) {
      r.outcome = Outcome::fail;
      r.message = "expected " + expect_error + ", but the call succeeded";
    }
  } catch (const MmaemuError& e) {
    if (expect_error == e.class_name()) {
      r.outcome = Outcome::pass;
      r.message.clear();
    } else {
      r.outcome = Outcome::fail;
      r.message = std::string(e.class_name()) + ": " + e.what() +
                  (expect_error.empty() ? "" : " (expected " + expect_error + ")");
    }
  } catch (const std::exception& e) {
    r.outcome = Outcome::error;
    r.message = e.what();
  }
}

// A set's result before its cases: where it came from; `kind` stands in the preset column.
SetResult start_set(const std::string& name, const char* kind, const recordings::Attributes& attrs,
                    const std::string& file) {
  SetResult s;
  s.file = file;
  s.name = name;
  s.preset = kind;
  if (auto it = attrs.find("gpu"); it != attrs.end()) s.gpu = it->second;
  return s;
}

void tally(SetResult& s, const CaseResult& r) {
  if (r.outcome == Outcome::pass) ++s.passed;
  else if (r.outcome == Outcome::fail) ++s.failed;
  else ++s.errors;
}

Tensor tensor_from_json(const json& j, const std::vector<std::uint8_t>* storage, const char* what) {
  const auto dtype = parse_format(j.at("dtype").get<std::string>());
  if (!dtype) throw ValueError(std::string(what) + ": unknown dtype");
  auto shape = j.at("shape").get<std::vector<std::int64_t>>();
  if (storage) {
    auto strides = j.at("strides").get<std::vector<std::int64_t>>();
    const auto offset = j.value("offset", std::int64_t{0});
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(*storage);
    return Tensor::view_of(*dtype, shape, strides, offset, bytes);
  }
  Tensor t = Tensor::zeros(*dtype, shape);
  if (j.contains("bits")) {
    const auto bits = j["bits"].get<std::vector<std::string>>();
    for (std::size_t i = 0; i < bits.size() && static_cast<std::int64_t>(i) < t.numel(); ++i) {
      t.set_bits_flat(static_cast<std::int64_t>(i), static_cast<std::uint32_t>(std::stoul(bits[i], nullptr, 16)));
    }
  }
  if (j.contains("fill")) {
    const auto fill = static_cast<std::uint32_t>(std::stoul(j["fill"].get<std::string>(), nullptr, 16));
    for (std::int64_t i = 0; i < t.numel(); ++i) t.set_bits_flat(i, fill);
  }
  return t;
}

}  // namespace

SetResult replay_gemm_batch(const recordings::GemmBatch& batch, const std::string& file) {
  SetResult s = start_set(batch.name, "gemm", batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : batch.cases) {
    CaseResult r;
    r.id = c.id;
    run_case(r, c.expect_error, [&] {
      const auto M = static_cast<std::int64_t>(c.M), N = static_cast<std::int64_t>(c.N),
                 K = static_cast<std::int64_t>(c.K);
      std::vector<std::uint32_t> a(c.a.begin(), c.a.end()), b(c.b.begin(), c.b.end());
      const Tensor ta = Tensor::from_bits(c.fmt_a, {M, K}, a);
      const Tensor tb = Tensor::from_bits(c.fmt_b, {N, K}, b);
      Tensor result;
      if (c.api == "accumulate") {
        AccumulateOptions opt;
        opt.profile = c.profile;
        opt.splitk = parse_splitk(c.splitk);
        opt.out_dtype_for_split = c.out_dtype;
        const Tensor acc = accumulate(ta, tb, c.fast, opt);
        result = Tensor::zeros(c.out_dtype, {M, N});
        for (std::int64_t i = 0; i < M * N; ++i) {
          result.set_bits_flat(i, epilogue(acc.bits_flat(i), c.scale_a_bits, c.scale_b_bits,
                                           c.scale_result_bits, c.out_dtype, false));
        }
      } else {
        ScaledMmCall call;
        call.input = ta;
        call.mat2 = tb.t();
        call.scale_a = Tensor::scalar_f32(c.scale_a_bits);
        call.scale_b = Tensor::scalar_f32(c.scale_b_bits);
        if (c.scale_result_bits) call.scale_result = Tensor::scalar_f32(*c.scale_result_bits);
        call.out_dtype = c.out_dtype;
        call.use_fast_accum = c.fast;
        call.profile = c.profile;
        call.splitk = parse_splitk(c.splitk);
        result = scaled_mm(call);
      }
      if (c.expect_error.empty()) compare_outputs(r, c.expect, result, c.out_dtype);
    });
    tally(s, r);
    s.results.push_back(std::move(r));
  }
  s.cases = batch.cases.size();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

SetResult replay_gemm_call_batch(const recordings::GemmCallBatch& batch, const std::string& file) {
  SetResult s = start_set(batch.name, "gemm_call", batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : batch.calls) {
    json call;
    std::string parse_error;
    try {
      call = json::parse(c.call_json);
    } catch (const json::exception& e) {
      parse_error = e.what();
    }
    for (const auto& o : c.outputs) {
      CaseResult r;
      r.id = c.id + "/" + o.name;
      if (!parse_error.empty()) {
        r.outcome = Outcome::error;
        r.message = "call description is not JSON: " + parse_error;
        tally(s, r);
        s.results.push_back(std::move(r));
        continue;
      }
      run_case(r, o.expect_error, [&] {
        ScaledMmCall sc;
        sc.input = tensor_from_json(call.at("input"), &c.input_storage, "input");
        sc.mat2 = tensor_from_json(call.at("mat2"), &c.mat2_storage, "mat2");
        sc.scale_a = tensor_from_json(call.at("scale_a"), nullptr, "scale_a");
        sc.scale_b = tensor_from_json(call.at("scale_b"), nullptr, "scale_b");
        if (call.contains("bias") && !call["bias"].is_null()) sc.bias = tensor_from_json(call["bias"], nullptr, "bias");
        if (call.contains("scale_result") && !call["scale_result"].is_null()) {
          sc.scale_result = tensor_from_json(call["scale_result"], nullptr, "scale_result");
        }
        Tensor out;
        if (call.contains("out") && !call["out"].is_null()) {
          out = tensor_from_json(call["out"], nullptr, "out");
          sc.out = &out;
        }
        for (const auto& name : call.value("requires_grad", std::vector<std::string>{})) {
          if (name == "input") sc.input.set_requires_grad(true);
          if (name == "mat2") sc.mat2.set_requires_grad(true);
        }
        sc.profile = call.value("profile", "");
        sc.out_dtype = o.out_dtype;
        sc.use_fast_accum = o.fast;
        sc.splitk = parse_splitk(o.splitk);
        const Tensor result = scaled_mm(sc);
        if (o.expect_error.empty()) {
          if (result.shape() != o.shape) {
            r.outcome = Outcome::fail;
            r.message = "result shape differs from the recording";
            return;
          }
          compare_outputs(r, o.expect, result, result.dtype());
        }
      });
      tally(s, r);
      s.results.push_back(std::move(r));
    }
  }
  s.cases = s.results.size();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace mmaemu::harness
