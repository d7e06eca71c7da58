// SPDX-License-Identifier: BSD-2-Clause
// Replay of GEMM-level recordings: kinds "gemm" (normalised calls) and "gemm_call" (exact
// recorded calls with their layouts).

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>

#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/support/text.hpp"

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
    if (m == Mismatch::none)
      continue;
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
  r.message += " (" + std::string(spec(out).torch_name) + "; zero_sign " +
               std::to_string(counts[1]) + ", nan_payload " + std::to_string(counts[2]) +
               ", value " + std::to_string(counts[3]) + ")";
}

// Runs `body`; an expected error class passes, an unexpected one fails, any other exception
// is an ERROR.
template <class Body> void run_case(CaseResult& r, const std::string& expect_error, Body body) {
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

// The set's profiles, for the evidence counts of a replay ("" is the default profile).
void note_profile(SetResult& s, const std::string& profile) {
  if (std::find(s.profiles.begin(), s.profiles.end(), profile) == s.profiles.end())
    s.profiles.push_back(profile);
}

// A set's result before its cases: where it came from; `kind` stands in the preset column.
SetResult start_set(const std::string& name, const char* kind, const recordings::Attributes& attrs,
                    const std::string& file) {
  SetResult s;
  s.file = file;
  s.name = name;
  s.preset = kind;
  if (auto it = attrs.find("gpu"); it != attrs.end())
    s.gpu = it->second;
  return s;
}

void tally(SetResult& s, const CaseResult& r) {
  if (r.outcome == Outcome::pass)
    ++s.passed;
  else if (r.outcome == Outcome::fail)
    ++s.failed;
  else
    ++s.errors;
}

// The strict reader of a call description: every error names the key path.
class CallReader {
public:
  [[noreturn]] static void fail(const std::string& key, const std::string& what) {
    throw GemmCallError("key '" + support::printable(key) + "': " + what);
  }

  // The JSON type of a value, for "expected an integer, got number 3.2e+42".
  static std::string type_of(const json& v) {
    if (v.is_number_float())
      return "number " + support::printable(v.dump(), 32);
    if (v.is_number_unsigned())
      return "integer " + v.dump();
    if (v.is_number_integer())
      return "integer " + v.dump();
    return v.type_name();
  }

  static const json& object(const json& v, const std::string& key) {
    if (!v.is_object())
      fail(key, "expected an object, got " + type_of(v));
    return v;
  }

  // Refuses keys not in `known`.
  static void only_keys(const json& obj, const std::string& where,
                        std::initializer_list<const char*> known) {
    for (const auto& [k, v] : obj.items()) {
      bool ok = false;
      for (const char* n : known)
        ok = ok || k == n;
      if (!ok)
        fail(where.empty() ? k : where + "." + k, "not a key of a gemm_call description");
    }
  }

  // An integer in [lo, hi], from an integer JSON number only (never a float converted).
  static std::int64_t integer(const json& v, const std::string& key, std::int64_t lo,
                              std::int64_t hi) {
    if (!v.is_number_integer())
      fail(key, "expected an integer, got " + type_of(v));
    const bool in_range = v.is_number_unsigned()
                              ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
                              : v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
    if (!in_range) {
      fail(key, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                    ", got " + type_of(v));
    }
    return v.get<std::int64_t>();
  }

  static std::vector<std::int64_t> integers(const json& v, const std::string& key,
                                            std::int64_t hi) {
    if (!v.is_array())
      fail(key, "expected an array of integers, got " + type_of(v));
    if (v.size() > static_cast<std::size_t>(kMaxTensorDims)) {
      fail(key, std::to_string(v.size()) + " entries, more than " + std::to_string(kMaxTensorDims));
    }
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.push_back(integer(v[i], key + "[" + std::to_string(i) + "]", 0, hi));
    }
    return out;
  }

  static const std::string& string(const json& v, const std::string& key) {
    if (!v.is_string())
      fail(key, "expected a string, got " + type_of(v));
    return v.get_ref<const std::string&>();
  }

  // A code of `f` in hex ("0x3f800000" or "3f800000"), within the format's width.
  static std::uint32_t code(const json& v, const std::string& key, Format f) {
    const std::string& s = string(v, key);
    std::size_t i = (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 2 : 0;
    if (s.size() == i || s.size() - i > 8)
      fail(key, "'" + support::printable(s) + "' is not a hex code");
    std::uint32_t c = 0;
    for (; i < s.size(); ++i) {
      const char ch = s[i];
      const int d = ch >= '0' && ch <= '9'   ? ch - '0'
                    : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                             : -1;
      if (d < 0)
        fail(key, "'" + support::printable(s) + "' is not a hex code");
      c = (c << 4) | static_cast<std::uint32_t>(d);
    }
    if (c & ~spec(f).code_mask()) {
      fail(key, "'" + support::printable(s) + "' is wider than a " + spec(f).torch_name + " code");
    }
    return c;
  }

  static Format dtype(const json& t, const std::string& where) {
    const auto it = t.find("dtype");
    if (it == t.end())
      fail(where + ".dtype", "missing");
    const std::string& name = string(*it, where + ".dtype");
    const auto f = parse_format(name);
    if (!f)
      fail(where + ".dtype", "'" + support::printable(name) + "' is not a dtype");
    return *f;
  }
};

// Tensor errors (layouts outside the storage, shapes that overflow) name the tensor's key.
template <class F> Tensor named(const std::string& where, F make) {
  try {
    return make();
  } catch (const ValueError& e) {
    throw GemmCallError("key '" + support::printable(where) + "': " + e.what());
  }
}

// An operand: a view of a recorded storage.
Tensor operand_from_json(const json& j, const std::string& where,
                         std::shared_ptr<std::vector<std::uint8_t>> storage) {
  using R = CallReader;
  R::object(j, where);
  R::only_keys(j, where, {"dtype", "shape", "strides", "offset"});
  const Format f = R::dtype(j, where);
  if (!j.contains("shape"))
    R::fail(where + ".shape", "missing");
  if (!j.contains("strides"))
    R::fail(where + ".strides", "missing");
  const auto shape = R::integers(j["shape"], where + ".shape", kMaxTensorElements);
  const auto strides =
      R::integers(j["strides"], where + ".strides", std::numeric_limits<std::int64_t>::max());
  const std::int64_t offset =
      j.contains("offset")
          ? R::integer(j["offset"], where + ".offset", 0, std::numeric_limits<std::int64_t>::max())
          : 0;
  return named(where,
               [&] { return Tensor::view_of(f, shape, strides, offset, std::move(storage)); });
}

// A tensor the description creates: scales, bias, scale_result, out. Its values are "bits"
// (one hex code per element, row-major) or "fill" (one code for all), else zero; "strides"
// and "offset" give it that layout in a fresh storage just large enough.
Tensor created_from_json(const json& j, const std::string& where) {
  using R = CallReader;
  R::object(j, where);
  R::only_keys(j, where, {"dtype", "shape", "strides", "offset", "bits", "fill"});
  const Format f = R::dtype(j, where);
  if (!j.contains("shape"))
    R::fail(where + ".shape", "missing");
  const auto shape = R::integers(j["shape"], where + ".shape", kMaxCallTensorElements);
  std::int64_t numel = 1;
  for (auto d : shape) {
    if (d == 0)
      numel = 0;
    else if (numel &&
             (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxCallTensorElements)) {
      R::fail(where + ".shape",
              "more than " + std::to_string(kMaxCallTensorElements) + " elements");
    }
  }
  Tensor t;
  if (j.contains("strides") || j.contains("offset")) {
    const auto strides = j.contains("strides")
                             ? R::integers(j["strides"], where + ".strides", kMaxCallTensorElements)
                             : contiguous_strides(shape);
    const std::int64_t offset =
        j.contains("offset") ? R::integer(j["offset"], where + ".offset", 0, kMaxCallTensorElements)
                             : 0;
    if (strides.size() != shape.size()) {
      R::fail(where + ".strides", std::to_string(strides.size()) + " entries for " +
                                      std::to_string(shape.size()) + " dimensions");
    }
    // The storage reaches the last element: offset + sum((size - 1) * stride) + 1, each term
    // below 2^28 * 2^28, so the sum fits in int64.
    std::int64_t elems = offset + (numel > 0 ? 1 : 0);
    for (std::size_t i = 0; numel > 0 && i < shape.size(); ++i)
      elems += (shape[i] - 1) * strides[i];
    if (elems > kMaxCallTensorElements) {
      R::fail(where, "its layout needs a storage of " + std::to_string(elems) +
                         " elements, more than " + std::to_string(kMaxCallTensorElements));
    }
    t = named(where, [&] { return Tensor::strided(f, shape, strides, offset, elems); });
  } else {
    t = named(where, [&] { return Tensor::zeros(f, shape); });
  }
  const auto bits = j.find("bits");
  const auto fill = j.find("fill");
  if (bits != j.end() && fill != j.end())
    R::fail(where, "has both 'bits' and 'fill'");
  if (bits != j.end()) {
    if (!bits->is_array())
      R::fail(where + ".bits", "expected an array of hex codes, got " + R::type_of(*bits));
    if (static_cast<std::int64_t>(bits->size()) != numel) {
      R::fail(where + ".bits",
              std::to_string(bits->size()) + " codes for " + std::to_string(numel) + " elements");
    }
    for (std::size_t i = 0; i < bits->size(); ++i) {
      t.set_bits_flat(static_cast<std::int64_t>(i),
                      R::code((*bits)[i], where + ".bits[" + std::to_string(i) + "]", f));
    }
  }
  if (fill != j.end()) {
    const std::uint32_t c = R::code(*fill, where + ".fill", f);
    for (std::int64_t i = 0; i < numel; ++i)
      t.set_bits_flat(i, c);
  }
  return t;
}

json parse_call_text(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end(), [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxCallJsonDepth) {
        throw GemmCallError("nested deeper than " + std::to_string(kMaxCallJsonDepth) + " levels");
      }
      return true;
    });
  } catch (const json::exception& e) {
    // nlohmann's description (a syntax error, a number out of range), without the echoed
    // token ("last read: '...'").
    std::string what = e.what();
    if (const auto p = what.find("; last read"); p != std::string::npos)
      what.erase(p);
    if (const auto p = what.find("] "); p != std::string::npos)
      what = what.substr(p + 2);
    throw GemmCallError("not valid JSON (" + support::printable(what, 160) + ")");
  }
}

// A shared_ptr that borrows `v` (no ownership): the tensors built from it are dropped before
// `v` is, and scaled_mm never writes an operand.
std::shared_ptr<std::vector<std::uint8_t>> borrow(const std::vector<std::uint8_t>& v) {
  return std::shared_ptr<std::vector<std::uint8_t>>(std::shared_ptr<void>(),
                                                    const_cast<std::vector<std::uint8_t>*>(&v));
}

} // namespace

void prepare_output_call(const recordings::GemmCall& c, const recordings::GemmCallOutput& o,
                         const std::string& backend, GemmCallArgs& a) {
  a = parse_gemm_call(c.call_json, borrow(c.input_storage), borrow(c.mat2_storage));
  ScaledMmCall& sc = a.call;
  sc.out = a.has_out ? &a.out : nullptr;
  sc.out_dtype = o.out_dtype;
  sc.use_fast_accum = o.fast;
  sc.splitk = parse_splitk(o.splitk);
  sc.backend = backend;
}

GemmCallArgs parse_gemm_call(std::string_view call_json,
                             std::shared_ptr<std::vector<std::uint8_t>> input_storage,
                             std::shared_ptr<std::vector<std::uint8_t>> mat2_storage) {
  using R = CallReader;
  const json call = parse_call_text(call_json);
  if (!call.is_object())
    throw GemmCallError("the description is " + R::type_of(call) + ", not an object");
  R::only_keys(call, "",
               {"M", "N", "K", "input", "mat2", "scale_a", "scale_b", "bias", "scale_result", "out",
                "profile", "requires_grad"});
  for (const char* k : {"M", "N", "K"}) {
    if (call.contains(k))
      R::integer(call[k], k, 0, kMaxGemmDim);
  }
  for (const char* k : {"input", "mat2", "scale_a", "scale_b"}) {
    if (!call.contains(k))
      R::fail(k, "missing");
  }
  GemmCallArgs a;
  a.call.input = operand_from_json(call["input"], "input", std::move(input_storage));
  a.call.mat2 = operand_from_json(call["mat2"], "mat2", std::move(mat2_storage));
  a.call.scale_a = created_from_json(call["scale_a"], "scale_a");
  a.call.scale_b = created_from_json(call["scale_b"], "scale_b");
  if (call.contains("bias") && !call["bias"].is_null()) {
    a.call.bias = created_from_json(call["bias"], "bias");
  }
  if (call.contains("scale_result") && !call["scale_result"].is_null()) {
    a.call.scale_result = created_from_json(call["scale_result"], "scale_result");
  }
  if (call.contains("out") && !call["out"].is_null()) {
    a.out = created_from_json(call["out"], "out");
    a.has_out = true;
  }
  if (call.contains("profile")) {
    // A profile name (letters, digits, '_', '-', '.'): it is echoed in scaled_mm's messages.
    const std::string& name = R::string(call["profile"], "profile");
    const bool plain = name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char ch) {
                         return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                                (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
                       });
    if (!plain)
      R::fail("profile", "'" + support::printable(name) + "' is not a profile name");
    a.call.profile = name;
  }
  if (call.contains("requires_grad")) {
    const json& rg = call["requires_grad"];
    if (!rg.is_array())
      R::fail("requires_grad", "expected an array, got " + R::type_of(rg));
    for (std::size_t i = 0; i < rg.size(); ++i) {
      const std::string key = "requires_grad[" + std::to_string(i) + "]";
      const std::string& name = R::string(rg[i], key);
      if (name == "input")
        a.call.input.set_requires_grad(true);
      else if (name == "mat2")
        a.call.mat2.set_requires_grad(true);
      else
        R::fail(key, "'" + support::printable(name) + "' is not input or mat2");
    }
  }
  return a;
}

void check_gemm_calls(const recordings::GemmCallBatch& batch, const std::string& file) {
  for (const auto& c : batch.calls) {
    try {
      parse_gemm_call(c.call_json, borrow(c.input_storage), borrow(c.mat2_storage));
    } catch (const GemmCallError& e) {
      throw GemmCallError(support::printable(file, 256) + ": gemm_call '" +
                          support::printable(c.id) + "': " + e.what());
    }
  }
}

SetResult replay_gemm_batch(const recordings::GemmBatch& batch, const std::string& file,
                            const std::string& backend) {
  SetResult s = start_set(batch.name, "gemm", batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : batch.cases) {
    note_profile(s, c.profile);
    CaseResult r;
    r.id = c.id;
    // Sizes beyond the emulator's limits or operands of the wrong length are a broken case
    // (ERROR), never an expected error class that would pass.
    const auto limit = static_cast<std::uint64_t>(kMaxGemmDim);
    if (c.M > limit || c.N > limit || c.K > limit || c.a.size() != c.M * c.K ||
        c.b.size() != c.N * c.K || c.M * c.N > static_cast<std::uint64_t>(kMaxTensorElements)) {
      r.outcome = Outcome::error;
      r.message = "case sizes M = " + std::to_string(c.M) + ", N = " + std::to_string(c.N) +
                  ", K = " + std::to_string(c.K) + " with " + std::to_string(c.a.size()) + " and " +
                  std::to_string(c.b.size()) +
                  " operand codes: over the emulator's limits or inconsistent";
      tally(s, r);
      s.results.push_back(std::move(r));
      continue;
    }
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
        opt.backend = backend;
        opt.backend_used = &s.backend;
        const Tensor acc = accumulate(ta, tb, c.fast, opt);
        result = Tensor::zeros(c.out_dtype, {M, N});
        for (std::int64_t i = 0; i < M * N; ++i) {
          result.set_bits_flat(i, epilogue(acc.bits_flat(i), c.scale_a_bits, c.scale_b_bits,
                                           c.scale_result_bits, c.out_dtype, false,
                                           profile_of(opt).gemm.scale_fold));
        }
      } else {
        ScaledMmCall call;
        call.input = ta;
        call.mat2 = tb.t();
        call.scale_a = Tensor::scalar_f32(c.scale_a_bits);
        call.scale_b = Tensor::scalar_f32(c.scale_b_bits);
        if (c.scale_result_bits)
          call.scale_result = Tensor::scalar_f32(*c.scale_result_bits);
        call.out_dtype = c.out_dtype;
        call.use_fast_accum = c.fast;
        call.profile = c.profile;
        call.splitk = parse_splitk(c.splitk);
        call.backend = backend;
        call.backend_used = &s.backend;
        result = scaled_mm(call);
      }
      if (c.expect_error.empty())
        compare_outputs(r, c.expect, result, c.out_dtype);
    });
    tally(s, r);
    s.results.push_back(std::move(r));
  }
  s.cases = batch.cases.size();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

SetResult replay_gemm_call_batch(const recordings::GemmCallBatch& batch, const std::string& file,
                                 const std::string& backend) {
  SetResult s = start_set(batch.name, "gemm_call", batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : batch.calls) {
    // A malformed description is an ERROR of each of its outputs, naming the key.
    std::string parse_error;
    try {
      const GemmCallArgs parsed =
          parse_gemm_call(c.call_json, borrow(c.input_storage), borrow(c.mat2_storage));
      note_profile(s, parsed.call.profile);
    } catch (const GemmCallError& e) {
      parse_error = support::printable(file, 256) + ": gemm_call '" + support::printable(c.id) +
                    "': " + e.what();
    }
    for (const auto& o : c.outputs) {
      CaseResult r;
      r.id = c.id + "/" + o.name;
      if (!parse_error.empty()) {
        r.outcome = Outcome::error;
        r.message = parse_error;
        tally(s, r);
        s.results.push_back(std::move(r));
        continue;
      }
      run_case(r, o.expect_error, [&] {
        GemmCallArgs a;
        prepare_output_call(c, o, backend, a);
        ScaledMmCall& sc = a.call;
        sc.backend_used = &s.backend;
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

} // namespace mmaemu::harness
