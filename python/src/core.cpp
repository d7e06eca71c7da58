// SPDX-License-Identifier: BSD-2-Clause
// mmaemu._core: the C++ core as the Python package sees it. Every function takes plain values
// and arrays (the package's _tensors.py converts torch and NumPy), runs the C++ with the GIL
// released, and returns ("ok", value, warnings) or ("error", (class, message), warnings)
// (bridge.hpp): the package raises the seed's classes and emits the warnings.

#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bridge.hpp"
#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/explain.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/kernels/cublaslt_library.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/kernels/splitk_live_query.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace py = pybind11;
using mmaemu::py_bridge::array_of;
using mmaemu::py_bridge::guarded;
using mmaemu::py_bridge::tensor_from_spec;

namespace mmaemu::py_bridge {
int run_cli(const std::vector<std::string>& argv); // cli.cpp
} // namespace mmaemu::py_bridge

namespace {

using namespace mmaemu;

Format format_arg(const std::string& name, const char* what) {
  const auto f = parse_format(name);
  if (!f)
    throw ValueError(std::string(what) + ": unknown format '" + name + "'");
  return *f;
}

std::optional<Tensor> optional_tensor(py::handle h, const char* what) {
  if (h.is_none())
    return std::nullopt;
  return tensor_from_spec(h, what);
}

py::dict split_dict(const SplitDecision& d) {
  py::dict o;
  o["S"] = d.S;
  o["scheme"] = d.scheme;
  o["source"] = d.source;
  o["verified"] = d.verified;
  o["table_id"] = d.table_id;
  o["note"] = d.note;
  py::list w;
  for (const auto& x : d.warnings)
    w.append(py::make_tuple(warning_class_name(x.cls), x.message));
  o["warnings"] = w;
  return o;
}

py::dict preset_dict(const Preset& p) {
  py::dict o;
  o["name"] = p.name;
  o["nfma"] = p.nfma;
  o["frac"] = p.frac;
  o["frac_out"] = p.frac_out;
  o["rounding"] = block_rounding_name(p.rounding);
  o["min_exp"] = p.min_exp;
  o["late_c"] = p.late_c;
  o["slow_chunk"] = p.slow_chunk ? py::object(py::int_(*p.slow_chunk)) : py::object(py::none());
  o["inputs"] = preset_inputs_name(p.inputs);
  o["half_out"] = half_output_name(p.half_out);
  o["maturity"] = maturity_name(p.maturity);
  o["validated_scope"] = p.validated_scope;
  o["evidence"] = p.evidence;
  return o;
}

py::object opt_format(const std::optional<Format>& f) {
  return f ? py::object(py::str(format_name(*f))) : py::object(py::none());
}

py::dict profile_dict(const Profile& p) {
  py::dict o;
  o["name"] = p.name;
  o["preset"] = p.preset;
  o["gpu_name"] = p.gpu_name;
  o["capability"] = p.capability;
  o["sm_count"] = p.sm_count;
  o["cublaslt_version"] = p.cublaslt_version;
  o["caller"] = p.caller;
  o["torch_version"] = p.torch_version;
  o["workspace_bytes"] = p.workspace_bytes;
  o["align"] = p.align;
  py::list entries;
  for (const auto& e : p.splitk_table.entries) {
    py::dict d;
    d["M"] = e.M;
    d["N"] = e.N;
    d["K"] = e.K;
    d["a"] = format_name(e.a);
    d["b"] = format_name(e.b);
    d["out"] = format_name(e.out);
    d["fast"] = e.fast;
    d["S"] = e.S;
    d["scheme"] = e.scheme;
    d["verified"] = e.verified;
    d["evidence"] = e.evidence;
    entries.append(d);
  }
  py::dict table;
  table["id"] = p.splitk_table.id;
  table["note"] = p.splitk_table.note;
  table["entries"] = entries;
  o["splitk_table"] = table;
  o["split_schemes"] = p.split_schemes;
  py::list rejects;
  for (const auto& r : p.rejects) {
    py::dict d;
    d["a"] = opt_format(r.a);
    d["b"] = opt_format(r.b);
    d["out"] = opt_format(r.out);
    d["message"] = r.message;
    rejects.append(d);
  }
  o["rejects"] = rejects;
  o["maturity"] = maturity_name(p.maturity);
  o["splitk_maturity"] = p.splitk_maturity;
  if (p.envelope) {
    py::dict e;
    e["min_mn"] = p.envelope->min_mn;
    e["max_k"] = p.envelope->max_k;
    e["validated"] = p.envelope->validated;
    e["evidence"] = p.envelope->evidence;
    o["envelope"] = e;
  } else {
    o["envelope"] = py::none();
  }
  py::dict g;
  g["split_grain"] = p.gemm.split_grain;
  if (p.gemm.slow_block_from_preset)
    g["slow_block"] = "preset";
  else if (p.gemm.slow_block)
    g["slow_block"] = *p.gemm.slow_block;
  else
    g["slow_block"] = "flat";
  g["merge"] = partial_merge_name(p.gemm.merge);
  g["scale_fold"] = scale_fold_name(p.gemm.scale_fold);
  g["evidence"] = p.gemm.evidence;
  o["gemm"] = g;
  return o;
}

// The call of scaled_mm / explain from the package's arguments.
ScaledMmCall make_call(py::handle input, py::handle mat2, py::handle scale_a, py::handle scale_b,
                       py::handle bias, py::handle scale_result,
                       const std::optional<std::string>& out_dtype, bool use_fast_accum,
                       const std::string& profile, const std::string& splitk,
                       const std::string& backend) {
  ScaledMmCall call;
  call.input = tensor_from_spec(input, "input");
  call.mat2 = tensor_from_spec(mat2, "mat2");
  call.scale_a = tensor_from_spec(scale_a, "scale_a");
  call.scale_b = tensor_from_spec(scale_b, "scale_b");
  call.bias = optional_tensor(bias, "bias");
  call.scale_result = optional_tensor(scale_result, "scale_result");
  if (out_dtype)
    call.out_dtype = format_arg(*out_dtype, "out_dtype");
  call.use_fast_accum = use_fast_accum;
  call.profile = profile;
  call.splitk = parse_splitk(splitk);
  call.backend = backend;
  return call;
}

// Preset from a name or from the fields of a Python Preset (a dict).
Preset preset_arg(py::handle h) {
  if (py::isinstance<py::str>(h))
    return get_preset(h.cast<std::string>());
  const auto d = h.cast<py::dict>();
  const std::string rounding = d["rounding"].cast<std::string>();
  BlockRounding r = BlockRounding::toward_zero;
  if (rounding == block_rounding_name(BlockRounding::nearest_even))
    r = BlockRounding::nearest_even;
  else if (rounding != block_rounding_name(BlockRounding::toward_zero))
    throw ValueError("Preset.rounding: '" + rounding + "' is not " +
                     block_rounding_name(BlockRounding::toward_zero) + " or " +
                     block_rounding_name(BlockRounding::nearest_even));
  std::optional<int> chunk;
  if (!d["slow_chunk"].is_none())
    chunk = d["slow_chunk"].cast<int>();
  // inputs and half_out are optional keys (a dict of an older Preset has neither).
  PresetInputs inputs = PresetInputs::fp8;
  if (d.contains("inputs")) {
    const std::string v = d["inputs"].cast<std::string>();
    bool found = false;
    for (PresetInputs i :
         {PresetInputs::fp8, PresetInputs::fp16, PresetInputs::bf16, PresetInputs::tf32}) {
      if (v == preset_inputs_name(i)) {
        inputs = i;
        found = true;
      }
    }
    if (!found)
      throw ValueError("Preset.inputs: '" + v + "' is not fp8, fp16, bf16 or tf32");
  }
  HalfOutput half = HalfOutput::none;
  if (d.contains("half_out")) {
    const std::string v = d["half_out"].cast<std::string>();
    bool found = false;
    for (HalfOutput h :
         {HalfOutput::none, HalfOutput::block_then_nearest, HalfOutput::sum_to_nearest}) {
      if (v == half_output_name(h)) {
        half = h;
        found = true;
      }
    }
    if (!found) {
      throw ValueError("Preset.half_out: '" + v +
                       "' is not none, block_then_nearest or sum_to_nearest");
    }
  }
  Preset p =
      make_custom_preset(d["name"].cast<std::string>(), d["nfma"].cast<int>(),
                         d["frac"].cast<int>(), d["frac_out"].cast<int>(), r,
                         d["min_exp"].cast<int>(), d["late_c"].cast<bool>(), chunk, inputs, half);
  return p;
}

py::list kernel_status_list(const std::vector<kernels::KernelStatus>& statuses) {
  py::list out;
  for (const auto& s : statuses) {
    py::dict d;
    d["kernel"] = s.kernel;
    d["backend"] = s.backend;
    d["preset"] = s.preset;
    d["device"] = s.device;
    d["device_name"] = s.device_name;
    d["cc"] = s.cc;
    d["available"] = s.available;
    d["validated_here"] = s.validated_here;
    d["tested"] = s.tested;
    d["source"] = s.source;
    d["fatbin_reason"] = s.fatbin_reason;
    d["skip"] = s.skip;
    d["failure"] = s.failure;
    py::list gates;
    for (const auto& g : s.gates) {
      py::dict x;
      x["gate"] = g.gate;
      x["version"] = g.version;
      x["passed"] = g.passed;
      x["cached"] = g.cached;
      x["detail"] = g.detail;
      gates.append(x);
    }
    d["gates"] = gates;
    out.append(d);
  }
  return out;
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "mmaemu's C++ core (use the package mmaemu, not this module)";
  // Touches no driver: a CUDA kernel is looked at only when a call asks for a backend, and
  // cuBLASLt only when splitk="auto" reaches the live query. sys.path's folders are where
  // torch's cuBLASLt wheel is looked for (strings only: nothing is opened at import).
  kernels::install_cuda_backend();
  kernels::install_splitk_live_query();
  {
    std::vector<std::string> dirs;
    for (py::handle p : py::module_::import("sys").attr("path")) {
      if (py::isinstance<py::str>(p) && !p.cast<std::string>().empty())
        dirs.push_back(p.cast<std::string>());
    }
    kernels::cublaslt::set_site_dirs(std::move(dirs));
  }
  py_bridge::install_warning_sink();
  m.attr("version") = MMAEMU_VERSION;

  m.def("scaled_mm",
        [](py::handle input, py::handle mat2, py::handle scale_a, py::handle scale_b,
           py::handle bias, py::handle scale_result, std::optional<std::string> out_dtype,
           bool use_fast_accum, std::optional<std::string> out_fmt, std::string profile,
           std::string splitk, std::string backend, bool explain_only) {
          ScaledMmCall call;
          Tensor out, result;
          CallPlan plan;
          std::string used;
          return guarded(
              [&] {
                call = make_call(input, mat2, scale_a, scale_b, bias, scale_result, out_dtype,
                                 use_fast_accum, profile, splitk, backend);
                if (out_fmt) {
                  out = Tensor::zeros(format_arg(*out_fmt, "out"), {0});
                  call.out = &out;
                }
                call.backend_used = &used;
              },
              [&] {
                if (explain_only)
                  plan = explain(call);
                else
                  result = scaled_mm(call);
              },
              [&]() -> py::object {
                if (explain_only)
                  return py::str(call_plan_json(plan));
                return py::make_tuple(array_of(result), format_name(result.dtype()), used);
              });
        });

  m.def("accumulate", [](py::handle a, py::handle b, bool fast, std::string profile,
                         std::string splitk, std::string backend, std::string out_dtype_for_split) {
    Tensor ta, tb, result;
    AccumulateOptions opt;
    SplitDecision decision;
    std::string used;
    return guarded(
        [&] {
          ta = tensor_from_spec(a, "a");
          tb = tensor_from_spec(b, "b");
          opt.profile = profile;
          opt.splitk = parse_splitk(splitk);
          opt.backend = backend;
          opt.out_dtype_for_split = format_arg(out_dtype_for_split, "out_dtype_for_split");
          opt.backend_used = &used;
        },
        [&] { result = accumulate(ta, tb, fast, opt, &decision); },
        [&]() -> py::object {
          return py::make_tuple(array_of(result), split_dict(decision), used);
        });
  });

  m.def("resolve_splitk", [](std::int64_t M, std::int64_t N, std::int64_t K, std::string a,
                             std::string b, std::string out, bool fast, std::string profile,
                             std::string splitk, bool layout_std, std::optional<bool> strict,
                             bool dry) {
    SplitDecision d;
    return guarded(
        nullptr,
        [&] {
          SplitKQuery q{M,
                        N,
                        K,
                        format_arg(a, "a_dtype"),
                        format_arg(b, "b_dtype"),
                        format_arg(out, "out_dtype"),
                        fast,
                        layout_std};
          d = resolve_splitk(q, get_profile_or_default(profile), parse_splitk(splitk), strict, dry);
        },
        [&]() -> py::object { return split_dict(d); });
  });

  m.def("dot", [](py::array_t<std::uint8_t, py::array::c_style> a,
                  py::array_t<std::uint8_t, py::array::c_style> b, py::object c, py::handle preset,
                  std::string fmt_a, std::string fmt_b) {
    Preset p;
    model::FormatPair fmt;
    std::optional<py::array_t<std::uint32_t, py::array::c_style>> cc;
    std::vector<std::uint32_t> out;
    const std::uint8_t* pa = nullptr;
    const std::uint8_t* pb = nullptr;
    const std::uint32_t* pc = nullptr;
    std::size_t rows = 0, K = 0;
    return guarded(
        [&] {
          p = preset_arg(preset);
          fmt = {format_arg(fmt_a, "fmt"), format_arg(fmt_b, "fmt")};
          if (!is_fp8(fmt.a) || !is_fp8(fmt.b))
            throw ValueError("fmt: '" + fmt_a + "', '" + fmt_b + "' are not e4m3 or e5m2");
          if (a.ndim() != 2 || b.ndim() != 2 || a.shape(0) != b.shape(0) ||
              a.shape(1) != b.shape(1))
            throw ValueError("a and b: same shape [..., K] needed");
          if (!c.is_none()) {
            cc = c.cast<py::array_t<std::uint32_t, py::array::c_style>>();
            if (cc->size() != a.shape(0))
              throw ValueError("c: shape a.shape[:-1] needed");
            pc = cc->data();
          }
          rows = static_cast<std::size_t>(a.shape(0));
          K = static_cast<std::size_t>(a.shape(1));
          out.assign(rows, 0);
          pa = a.data();
          pb = b.data();
        },
        [&] { model::dot_rows(pa, pb, pc, rows, K, p, fmt, out.data()); },
        [&]() -> py::object {
          py::array_t<std::uint32_t> r(static_cast<py::ssize_t>(rows));
          std::copy(out.begin(), out.end(), r.mutable_data());
          return r;
        });
  });

  // The 16-bit and tf32 chain (model.dot for fp16, bf16, tf32): codes as uint32 [rows][K],
  // c as uint32 values of format acc (fp32 bits or fp16 codes) or None.
  m.def("dot_codes", [](py::array_t<std::uint32_t, py::array::c_style> a,
                        py::array_t<std::uint32_t, py::array::c_style> b, py::object c,
                        py::handle preset, std::string fmt_a, std::string fmt_b, std::string acc) {
    Preset p;
    model::FormatPair fmt;
    Format accf = Format::fp32;
    std::optional<py::array_t<std::uint32_t, py::array::c_style>> cc;
    std::vector<std::uint32_t> out;
    const std::uint32_t* pa = nullptr;
    const std::uint32_t* pb = nullptr;
    const std::uint32_t* pc = nullptr;
    std::size_t rows = 0, K = 0;
    return guarded(
        [&] {
          p = preset_arg(preset);
          fmt = {format_arg(fmt_a, "fmt"), format_arg(fmt_b, "fmt")};
          accf = format_arg(acc, "acc");
          model::check_codes_call(p, fmt, accf, "dot");
          if (a.ndim() != 2 || b.ndim() != 2 || a.shape(0) != b.shape(0) ||
              a.shape(1) != b.shape(1))
            throw ValueError("a and b: same shape [..., K] needed");
          if (!c.is_none()) {
            cc = c.cast<py::array_t<std::uint32_t, py::array::c_style>>();
            if (cc->size() != a.shape(0))
              throw ValueError("c: shape a.shape[:-1] needed");
            pc = cc->data();
          }
          rows = static_cast<std::size_t>(a.shape(0));
          K = static_cast<std::size_t>(a.shape(1));
          out.assign(rows, 0);
          pa = a.data();
          pb = b.data();
        },
        [&] { model::dot_codes_rows(pa, pb, pc, rows, K, p, fmt, accf, out.data()); },
        [&]() -> py::object {
          py::array_t<std::uint32_t> r(static_cast<py::ssize_t>(rows));
          std::copy(out.begin(), out.end(), r.mutable_data());
          return r;
        });
  });

  // Exact codes (as uint32) of binary64 values that are values of fmt: e4m3, e5m2, fp16,
  // bf16 or tf32 (model.dot's float64 form; tf32 also from float32 values).
  m.def("codes_of", [](py::array_t<double, py::array::c_style> v, std::string fmt) {
    std::vector<std::uint32_t> codes;
    return guarded(
        nullptr,
        [&] {
          const Format f = format_arg(fmt, "fmt");
          if (!is_fp8(f) && !is_hmma_input(f))
            throw ValueError("fmt: '" + fmt + "' is not e4m3, e5m2, fp16, bf16 or tf32");
          const double* p = v.data();
          codes.resize(static_cast<std::size_t>(v.size()));
          for (std::size_t i = 0; i < codes.size(); ++i) {
            const std::uint32_t code = encode_binary64_bits(f, p[i], Overflow::infinity);
            const double back = decode_to_double(f, code);
            const bool same = (back != back && p[i] != p[i]) ||
                              (back == p[i] && std::signbit(back) == std::signbit(p[i]));
            if (!same) {
              throw ValueError("a value at flat index " + std::to_string(i) + " (" +
                               std::to_string(p[i]) + ") is not a " + fmt + " value");
            }
            codes[i] = code;
          }
        },
        [&]() -> py::object {
          py::array_t<std::uint32_t> r(static_cast<py::ssize_t>(codes.size()));
          std::copy(codes.begin(), codes.end(), r.mutable_data());
          return r;
        });
  });

  // Exact FP8 codes of binary64 values that are FP8 values (model.dot's float64 form).
  m.def("fp8_codes_of", [](py::array_t<double, py::array::c_style> v, std::string fmt) {
    std::vector<std::uint8_t> codes;
    return guarded(
        nullptr,
        [&] {
          const Format f = format_arg(fmt, "fmt");
          if (!is_fp8(f))
            throw ValueError("fmt: '" + fmt + "' is not e4m3 or e5m2");
          const double* p = v.data();
          codes.resize(static_cast<std::size_t>(v.size()));
          for (std::size_t i = 0; i < codes.size(); ++i) {
            const std::uint32_t code = encode_binary64_bits(f, p[i], Overflow::infinity);
            const double back = decode_to_double(f, code);
            const bool same = (back != back && p[i] != p[i]) ||
                              (back == p[i] && std::signbit(back) == std::signbit(p[i]));
            if (!same) {
              throw ValueError("a float64 value at flat index " + std::to_string(i) + " (" +
                               std::to_string(p[i]) + ") is not a " + fmt + " value");
            }
            codes[i] = static_cast<std::uint8_t>(code);
          }
        },
        [&]() -> py::object {
          py::array_t<std::uint8_t> r(static_cast<py::ssize_t>(codes.size()));
          std::copy(codes.begin(), codes.end(), r.mutable_data());
          return r;
        });
  });

  m.def("get_preset", [](std::string name, bool quiet) {
    const Preset* p = nullptr;
    return guarded(
        nullptr, [&] { p = quiet ? &get_preset_quiet(name) : &get_preset(name); },
        [&]() -> py::object { return preset_dict(*p); });
  });
  m.def("check_preset", [](py::dict fields) {
    Preset p;
    return guarded([&] { p = preset_arg(fields); }, nullptr,
                   [&]() -> py::object { return preset_dict(p); });
  });
  m.def("list_presets", [] { return list_presets(); });
  m.def("get_profile", [](std::string name) {
    const Profile* p = nullptr;
    return guarded(
        nullptr, [&] { p = &get_profile_or_default(name); },
        [&]() -> py::object { return profile_dict(*p); });
  });
  m.def("list_profiles", [] { return list_profiles(); });

  m.def("cuda_unavailable_reason", [] {
    py::gil_scoped_release nogil;
    return kernels::cuda_unavailable_reason();
  });
  m.def("device_identity", [](int ordinal) {
    std::string name;
    int sm = 0, cc = 0;
    return guarded(
        nullptr,
        [&] {
          const auto& d = kernels::driver::device(ordinal);
          name = d.name;
          sm = d.sm_count;
          cc = d.cc;
        },
        [&]() -> py::object { return py::make_tuple(name, sm, cc); });
  });
  m.def("kernel_names", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& s : kernels::kernel_specs())
      out.emplace_back(s.name, s.preset);
    return out;
  });
  m.def("kernel_statuses", [](int ordinal, std::vector<std::string> names, bool force) {
    std::vector<kernels::KernelStatus> st;
    return guarded(
        nullptr, [&] { st = kernels::kernel_statuses(ordinal, names, force); },
        [&]() -> py::object { return kernel_status_list(st); });
  });

  // The one bit comparator over two integer arrays of the same size (flat, C order).
  m.def("compare_bits", [](py::array expected, py::array actual, std::string fmt, std::string nan) {
    std::vector<std::size_t> counts(4, 0);
    std::vector<std::tuple<std::size_t, std::uint32_t, std::uint32_t, std::string>> first;
    return guarded(
        nullptr,
        [&] {
          const Format f = format_arg(fmt, "dtype");
          if (nan != "bits" && nan != "mask")
            throw ValueError("nan: '" + nan + "' is not 'bits' or 'mask'");
          const NanPolicy pol = nan == "bits" ? NanPolicy::bits : NanPolicy::mask;
          const auto item = expected.itemsize();
          if (actual.itemsize() != item || actual.size() != expected.size() ||
              item != spec(f).width / 8)
            throw ValueError("compare_bits: arrays of different element size or count");
          const auto* pe = static_cast<const std::uint8_t*>(expected.data());
          const auto* pa = static_cast<const std::uint8_t*>(actual.data());
          auto load = [item](const std::uint8_t* p, std::size_t i) {
            std::uint32_t v = 0;
            std::memcpy(&v, p + i * static_cast<std::size_t>(item), static_cast<std::size_t>(item));
            return v;
          };
          const auto n = static_cast<std::size_t>(expected.size());
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t e = load(pe, i), a = load(pa, i);
            const Mismatch mm = compare_bits(e, a, f, pol);
            counts[static_cast<std::size_t>(mm)] += 1;
            if (mm != Mismatch::none && first.size() < 10)
              first.emplace_back(i, e, a, mismatch_name(mm));
          }
        },
        [&]() -> py::object {
          py::dict c;
          c[mismatch_name(Mismatch::zero_sign)] = counts[1];
          c[mismatch_name(Mismatch::nan_payload)] = counts[2];
          c[mismatch_name(Mismatch::value)] = counts[3];
          return py::make_tuple(c, first);
        });
  });
  m.def("decompose_bits", [](std::uint32_t code, std::string fmt) {
    return decompose_bits(code, format_arg(fmt, "fmt"));
  });

  // The instruction-level batches of a recording (tests replay them through the API).
  m.def("read_recording_mma", [](std::string path) {
    recordings::Recording rec;
    return guarded(
        nullptr, [&] { rec = recordings::read_recording(path); },
        [&]() -> py::object {
          py::list out;
          for (const auto& b : rec.mma) {
            py::dict d;
            d["name"] = b.name;
            d["fmt_a"] = format_name(b.fmt_a);
            d["fmt_b"] = format_name(b.fmt_b);
            d["preset"] = b.preset;
            d["K"] = b.K;
            d["c_policy"] = b.c_policy;
            d["ids"] = b.ids;
            d["acc"] = format_name(b.acc);
            const auto n = static_cast<py::ssize_t>(b.size());
            const auto K = static_cast<py::ssize_t>(b.K);
            py::array_t<std::uint32_t> c(n), e(n);
            if (!b.wide()) {
              py::array_t<std::uint8_t> a({n, K}), bb({n, K});
              std::copy(b.a.begin(), b.a.end(), a.mutable_data());
              std::copy(b.b.begin(), b.b.end(), bb.mutable_data());
              d["a"] = a;
              d["b"] = bb;
            } else if (b.fmt_a == Format::tf32) {
              // tf32 operands as their binary32 containers (uint32; view as float32).
              py::array_t<std::uint32_t> a({n, K}), bb({n, K});
              std::transform(b.a_wide.begin(), b.a_wide.end(), a.mutable_data(),
                             tf32_container_of_code);
              std::transform(b.b_wide.begin(), b.b_wide.end(), bb.mutable_data(),
                             tf32_container_of_code);
              d["a"] = a;
              d["b"] = bb;
            } else {
              py::array_t<std::uint16_t> a({n, K}), bb({n, K}); // fp16 / bf16 codes
              std::copy(b.a_wide.begin(), b.a_wide.end(), a.mutable_data());
              std::copy(b.b_wide.begin(), b.b_wide.end(), bb.mutable_data());
              d["a"] = a;
              d["b"] = bb;
            }
            std::copy(b.c.begin(), b.c.end(), c.mutable_data());
            std::copy(b.expect.begin(), b.expect.end(), e.mutable_data());
            d["c"] = c;
            d["expect"] = e;
            out.append(d);
          }
          return out;
        });
  });

  m.def("reset_warnings_once", [] { reset_warnings_once(); });
  m.def("cli", [](std::vector<std::string> argv) {
    py::gil_scoped_release nogil;
    return py_bridge::run_cli(argv);
  });
}
