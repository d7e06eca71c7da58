// SPDX-License-Identifier: BSD-2-Clause
// The strict parser of gemm_call descriptions (docs/recordings.md) into a typed call, and the
// building of a call's arguments from it. A description is parsed once; every output of the
// call builds its arguments from the typed call, without reading JSON again.

#include <algorithm>
#include <atomic>
#include <limits>
#include <nlohmann/json.hpp>

#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/recordings/budget.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/json_input.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::harness {

namespace {

using nlohmann::json;
using support::JsonLocation;
using support::JsonObjectReader;

std::atomic<std::uint64_t> g_parses{0};

constexpr const char* kCallSchema = "a gemm_call description";
// A description is never longer than the recording that holds it; it nests 3 levels.
constexpr support::JsonLimits kCallJsonLimits{support::kMaxRecordingBytes, kMaxCallJsonDepth};

// A shape or strides: at most kMaxTensorDims integers in [0, hi].
std::vector<std::int64_t> call_integers(const json& v, const JsonLocation& at, std::int64_t hi) {
  if (!v.is_array())
    at.fail("expected an array of integers, got " + support::type_of(v));
  if (v.size() > static_cast<std::size_t>(kMaxTensorDims))
    at.fail(std::to_string(v.size()) + " entries, more than " + std::to_string(kMaxTensorDims));
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(support::json_integer(v[i], at.index(i), 0, hi));
  return out;
}

// A code of `f` in hex ("0x3f800000" or "3f800000"), within the format's width.
std::uint32_t call_code(const json& v, const JsonLocation& at, Format f) {
  const std::string& s = support::json_string(v, at, true);
  std::size_t i = (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 2 : 0;
  if (s.size() == i || s.size() - i > 8)
    at.fail("'" + support::printable(s) + "' is not a hex code");
  std::uint32_t c = 0;
  for (; i < s.size(); ++i) {
    const char ch = s[i];
    const int d = ch >= '0' && ch <= '9'   ? ch - '0'
                  : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                           : -1;
    if (d < 0)
      at.fail("'" + support::printable(s) + "' is not a hex code");
    c = (c << 4) | static_cast<std::uint32_t>(d);
  }
  if (c & ~spec(f).code_mask())
    at.fail("'" + support::printable(s) + "' is wider than a " + spec(f).torch_name + " code");
  return c;
}

Format call_dtype(JsonObjectReader& r) {
  const std::string name = r.string("dtype", true);
  const auto f = parse_format(name);
  if (!f)
    r.fail("dtype", "'" + support::printable(name) + "' is not a dtype");
  return *f;
}

// Tensor errors (layouts outside the storage, shapes that overflow) name the tensor's key.
template <class F> auto named(const std::string& where, F make) {
  try {
    return make();
  } catch (const ValueError& e) {
    throw GemmCallError("key '" + support::printable(where) + "': " + e.what());
  }
}

// Stands in for a storage's bytes when a layout is checked against its size: never read.
std::uint8_t g_no_bytes = 0;

// An operand: a view of a recorded storage of `storage_bytes` bytes, checked against it.
CallOperand operand_from_json(const json& j, const JsonLocation& at, std::size_t storage_bytes) {
  JsonObjectReader r(j, at, kCallSchema);
  r.only_keys({"dtype", "shape", "strides", "offset"});
  CallOperand op;
  op.dtype = call_dtype(r);
  op.shape = call_integers(r.value("shape"), r.at("shape"), kMaxTensorElements);
  op.strides =
      call_integers(r.value("strides"), r.at("strides"), std::numeric_limits<std::int64_t>::max());
  op.offset = r.optional_integer("offset", 0, std::numeric_limits<std::int64_t>::max()).value_or(0);
  // The same check as the view the call builds later (Tensor::view_of), without a storage.
  named(at.path(), [&] {
    return Tensor::borrow(op.dtype, op.shape, op.strides, op.offset, &g_no_bytes, storage_bytes,
                          nullptr);
  });
  return op;
}

// A tensor the description creates: scales, bias, scale_result, out. Its values are "bits"
// (one hex code per element, row-major) or "fill" (one code for all), else zero; "strides"
// and "offset" give it that layout in a fresh storage just large enough. Checked here,
// allocated only when a call is built (CreatedTensor::make).
CreatedTensor created_from_json(const json& j, const JsonLocation& at, bool scale = false) {
  JsonObjectReader r(j, at, kCallSchema);
  r.only_keys({"dtype", "shape", "strides", "offset", "bits", "fill"});
  CreatedTensor t;
  t.where = at.path();
  t.dtype = call_dtype(r);
  t.shape = call_integers(r.value("shape"), r.at("shape"), kMaxCallTensorElements);
  std::int64_t numel = 1;
  for (auto d : t.shape) {
    if (d == 0)
      numel = 0;
    else if (numel &&
             (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxCallTensorElements)) {
      r.fail("shape", "more than " + std::to_string(kMaxCallTensorElements) + " elements");
    }
  }
  const json* strides = r.find("strides");
  const json* offset = r.find("offset");
  if (strides || offset) {
    t.laid_out = true;
    t.strides = strides ? call_integers(*strides, r.at("strides"), kMaxCallTensorElements)
                        : contiguous_strides(t.shape);
    t.offset =
        offset ? support::json_integer(*offset, r.at("offset"), 0, kMaxCallTensorElements) : 0;
    if (t.strides.size() != t.shape.size()) {
      r.fail("strides", std::to_string(t.strides.size()) + " entries for " +
                            std::to_string(t.shape.size()) + " dimensions");
    }
    // The storage reaches the last element: offset + sum((size - 1) * stride) + 1, each term
    // below 2^28 * 2^28, so the sum fits in int64.
    std::int64_t elems = t.offset + (numel > 0 ? 1 : 0);
    for (std::size_t i = 0; numel > 0 && i < t.shape.size(); ++i)
      elems += (t.shape[i] - 1) * t.strides[i];
    if (elems > kMaxCallTensorElements) {
      at.fail("its layout needs a storage of " + std::to_string(elems) + " elements, more than " +
              std::to_string(kMaxCallTensorElements));
    }
    t.storage_elems = elems;
    // What Tensor::strided checks, against a storage of that size.
    named(t.where, [&] {
      return Tensor::borrow(t.dtype, t.shape, t.strides, t.offset, &g_no_bytes,
                            static_cast<std::size_t>(elems) * (spec(t.dtype).width / 8), nullptr);
    });
  } else {
    // What Tensor::zeros checks.
    named(t.where, [&] { return Tensor::meta(t.dtype, t.shape); });
  }
  const json* bits = r.find("bits");
  const json* fill = r.find("fill");
  if (bits && fill)
    at.fail("has both 'bits' and 'fill'");
  // A scale must have one element (scaled_mm's rules refuse any other from its shape alone):
  // checked here, before its values are read or a storage is made for them.
  t.shape_only = scale && numel != 1;
  if (bits) {
    if (!bits->is_array())
      r.fail("bits", "expected an array of hex codes, got " + support::type_of(*bits));
    if (static_cast<std::int64_t>(bits->size()) != numel) {
      r.fail("bits",
             std::to_string(bits->size()) + " codes for " + std::to_string(numel) + " elements");
    }
    if (!t.shape_only)
      t.bits.reserve(bits->size());
    for (std::size_t i = 0; i < bits->size(); ++i) {
      const std::uint32_t c = call_code((*bits)[i], r.at("bits").index(i), t.dtype);
      if (!t.shape_only)
        t.bits.push_back(c);
    }
  }
  if (fill)
    t.fill = call_code(*fill, r.at("fill"), t.dtype);
  return t;
}

// A shared_ptr that borrows `v` (no ownership): the tensors built from it are dropped before
// `v` is, and scaled_mm never writes an operand.
std::shared_ptr<std::vector<std::uint8_t>> borrow(const std::vector<std::uint8_t>& v) {
  return std::shared_ptr<std::vector<std::uint8_t>>(std::shared_ptr<void>(),
                                                    const_cast<std::vector<std::uint8_t>*>(&v));
}

std::string call_where(const std::string& file, const std::string& id) {
  return support::printable(file, 256) + ": gemm_call '" + support::printable(id) + "': ";
}

} // namespace

Tensor CreatedTensor::make() const {
  if (shape_only)
    return named(where, [&] { return Tensor::meta(dtype, shape); });
  Tensor t = named(where, [&] {
    return laid_out ? Tensor::strided(dtype, shape, strides, offset, storage_elems)
                    : Tensor::zeros(dtype, shape);
  });
  for (std::size_t i = 0; i < bits.size(); ++i)
    t.set_bits_flat(static_cast<std::int64_t>(i), bits[i]);
  if (fill) {
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i)
      t.set_bits_flat(i, *fill);
  }
  return t;
}

std::uint64_t CreatedTensor::bytes() const {
  if (shape_only)
    return 0;
  std::uint64_t elems = 1;
  if (laid_out) {
    elems = static_cast<std::uint64_t>(storage_elems);
  } else {
    for (auto d : shape)
      elems *= static_cast<std::uint64_t>(d); // at most 2^28 in all (created_from_json)
  }
  return elems * (spec(dtype).width / 8);
}

namespace {

// The call's cost, from its shapes alone, before anything is allocated (budget.hpp). Operands
// that are not matrices of matching inner sizes make scaled_mm refuse the call from their
// shapes, before it allocates anything: only the created tensors count then.
void check_call_budget(const GemmCallDesc& d, const CallBudget& budget) {
  std::uint64_t created = d.scale_a.bytes() + d.scale_b.bytes();
  for (const auto* t : {&d.bias, &d.scale_result, &d.out}) {
    if (*t)
      created += (*t)->bytes();
  }
  std::uint64_t M = 0, N = 0, K = 0;
  if (d.input.shape.size() == 2 && d.mat2.shape.size() == 2 &&
      d.input.shape[1] == d.mat2.shape[0]) {
    M = static_cast<std::uint64_t>(d.input.shape[0]);
    K = static_cast<std::uint64_t>(d.input.shape[1]);
    N = static_cast<std::uint64_t>(d.mat2.shape[1]);
    std::uint64_t macs = 0;
    if (__builtin_mul_overflow(M, N, &macs) || __builtin_mul_overflow(macs, K, &macs) ||
        macs > recordings::kMaxGemmMacs) {
      throw GemmCallError("over budget: M * N * K = " + std::to_string(M) + " * " +
                          std::to_string(N) + " * " + std::to_string(K) + " is over the limit of " +
                          std::to_string(recordings::kMaxGemmMacs) +
                          " multiply-accumulates of a call (2^36, as kind gemm)");
    }
  }
  const std::string over =
      recordings::work_over_budget(M, N, K, budget.split_parts, created, budget.file_bytes);
  if (!over.empty())
    throw GemmCallError("over budget: " + over);
}

} // namespace

namespace {

// A profile name (letters, digits, '_', '-', '.'): it is echoed in scaled_mm's messages.
bool plain_profile_name(const std::string& name) {
  return name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char ch) {
           return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
         });
}

GemmCallDesc read_call(std::string_view call_json, std::size_t input_bytes, std::size_t mat2_bytes,
                       const CallBudget& budget) {
  const json call = support::parse_json_input(call_json, "", kCallJsonLimits);
  if (!call.is_object())
    throw GemmCallError("the description is " + support::type_of(call) + ", not an object");
  JsonObjectReader r(call, JsonLocation(), kCallSchema);
  r.only_keys({"M", "N", "K", "input", "mat2", "scale_a", "scale_b", "bias", "scale_result", "out",
               "profile", "requires_grad"});
  for (const char* k : {"M", "N", "K"})
    r.optional_integer(k, 0, kMaxGemmDim);
  for (const char* k : {"input", "mat2", "scale_a", "scale_b"})
    r.value(k);
  GemmCallDesc d;
  d.input = operand_from_json(r.value("input"), r.at("input"), input_bytes);
  d.mat2 = operand_from_json(r.value("mat2"), r.at("mat2"), mat2_bytes);
  d.scale_a = created_from_json(r.value("scale_a"), r.at("scale_a"), true);
  d.scale_b = created_from_json(r.value("scale_b"), r.at("scale_b"), true);
  // The optional tensors: absent or null for none.
  auto optional_tensor = [&](const char* k, bool scale) -> std::optional<CreatedTensor> {
    const json* v = r.find(k);
    if (!v || v->is_null())
      return std::nullopt;
    return created_from_json(*v, r.at(k), scale);
  };
  d.bias = optional_tensor("bias", false);
  d.scale_result = optional_tensor("scale_result", true);
  d.out = optional_tensor("out", false);
  if (const auto name = r.optional_string("profile", true)) {
    if (!plain_profile_name(*name))
      r.fail("profile", "'" + support::printable(*name) + "' is not a profile name");
    d.profile = *name;
  }
  if (const json* rg = r.optional_array("requires_grad")) {
    for (std::size_t i = 0; i < rg->size(); ++i) {
      const JsonLocation at = r.at("requires_grad").index(i);
      const std::string& name = support::json_string((*rg)[i], at, true);
      if (name == "input")
        d.input_requires_grad = true;
      else if (name == "mat2")
        d.mat2_requires_grad = true;
      else
        at.fail("'" + support::printable(name) + "' is not input or mat2");
    }
  }
  check_call_budget(d, budget);
  return d;
}

} // namespace

GemmCallDesc parse_gemm_call_desc(std::string_view call_json, std::size_t input_bytes,
                                  std::size_t mat2_bytes, const CallBudget& budget) {
  g_parses.fetch_add(1, std::memory_order_relaxed);
  try {
    return read_call(call_json, input_bytes, mat2_bytes, budget);
  } catch (const support::JsonInputError& e) {
    throw GemmCallError(e.what());
  }
}

GemmCallArgs make_call_args(const GemmCallDesc& d,
                            std::shared_ptr<std::vector<std::uint8_t>> input_storage,
                            std::shared_ptr<std::vector<std::uint8_t>> mat2_storage) {
  GemmCallArgs a;
  a.call.input = named("input", [&] {
    return Tensor::view_of(d.input.dtype, d.input.shape, d.input.strides, d.input.offset,
                           std::move(input_storage));
  });
  a.call.mat2 = named("mat2", [&] {
    return Tensor::view_of(d.mat2.dtype, d.mat2.shape, d.mat2.strides, d.mat2.offset,
                           std::move(mat2_storage));
  });
  a.call.scale_a = d.scale_a.make();
  a.call.scale_b = d.scale_b.make();
  if (d.bias)
    a.call.bias = d.bias->make();
  if (d.scale_result)
    a.call.scale_result = d.scale_result->make();
  if (d.out) {
    a.out = d.out->make();
    a.has_out = true;
  }
  a.call.profile = d.profile;
  if (d.input_requires_grad)
    a.call.input.set_requires_grad(true);
  if (d.mat2_requires_grad)
    a.call.mat2.set_requires_grad(true);
  return a;
}

GemmCallArgs parse_gemm_call(std::string_view call_json,
                             std::shared_ptr<std::vector<std::uint8_t>> input_storage,
                             std::shared_ptr<std::vector<std::uint8_t>> mat2_storage) {
  const std::size_t in = input_storage ? input_storage->size() : 0;
  const std::size_t m2 = mat2_storage ? mat2_storage->size() : 0;
  const GemmCallDesc d = parse_gemm_call_desc(call_json, in, m2, {in + m2, 1});
  return make_call_args(d, std::move(input_storage), std::move(mat2_storage));
}

GemmCallDesc parse_recorded_call(const recordings::GemmCall& c, const std::string& file,
                                 std::uint64_t file_bytes) {
  CallBudget budget{file_bytes, 1};
  for (const auto& o : c.outputs)
    budget.split_parts = std::max(budget.split_parts, recordings::split_parts(o.splitk));
  try {
    return parse_gemm_call_desc(c.call_json, c.input_storage.size(), c.mat2_storage.size(), budget);
  } catch (const GemmCallError& e) {
    throw GemmCallError(call_where(file, c.id) + e.what());
  }
}

std::vector<GemmCallDesc> parse_gemm_calls(const recordings::GemmCallBatch& batch,
                                           const std::string& file, std::uint64_t file_bytes) {
  std::vector<GemmCallDesc> out;
  out.reserve(batch.calls.size());
  for (const auto& c : batch.calls)
    out.push_back(parse_recorded_call(c, file, file_bytes));
  return out;
}

void prepare_output_call(const recordings::GemmCall& c, const GemmCallDesc& d,
                         const recordings::GemmCallOutput& o, const std::string& backend,
                         GemmCallArgs& a) {
  a = make_call_args(d, borrow(c.input_storage), borrow(c.mat2_storage));
  ScaledMmCall& sc = a.call;
  sc.out = a.has_out ? &a.out : nullptr;
  sc.out_dtype = o.out_dtype;
  sc.use_fast_accum = o.fast;
  sc.splitk = parse_splitk(o.splitk);
  sc.backend = backend;
}

std::uint64_t gemm_call_parse_count() {
  return g_parses.load(std::memory_order_relaxed);
}

} // namespace mmaemu::harness
