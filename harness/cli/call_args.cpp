// SPDX-License-Identifier: BSD-2-Clause
#include "call_args.hpp"

#include <cstdlib>

#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::cli {

void add_call_options(CLI::App& cmd, CallArgs& args) {
  cmd.add_option("--a", args.a, "input dtype: e4m3 | e5m2")->capture_default_str();
  cmd.add_option("--b", args.b, "mat2 dtype: e4m3 | e5m2")->capture_default_str();
  cmd.add_option("--out", args.out,
                 "output dtype: float32 | bfloat16 | float16 | e4m3 | e5m2 (torch's names "
                 "too); default: the input's dtype, as torch");
  cmd.add_flag("--fast", args.fast, "use_fast_accum=True");
  cmd.add_option("--scale-a", args.scale_a, "scale_a (decimal or 0x binary32 bits)")
      ->capture_default_str();
  cmd.add_option("--scale-b", args.scale_b, "scale_b")->capture_default_str();
  cmd.add_option("--scale-result", args.scale_result, "scale_result (FP8 outputs)");
  cmd.add_option("--profile", args.profile, "profile name (default $MMAEMU_PROFILE or hopper)");
  cmd.add_option("--splitk", args.splitk,
                 "auto | 1 | S,contiguous | S,serial | S,pairwise (auto needs the profile's "
                 "split-K data: none is recorded yet, so pass 1 or an explicit split)")
      ->capture_default_str();
  cmd.add_option("--backend", args.backend, backend_help())->capture_default_str();
  cmd.add_option("--device", args.device,
                 "auto | cpu | cuda | cuda:0: cpu is --backend reference, cuda a CUDA backend "
                 "(operands are copied to the GPU per call)")
      ->capture_default_str();
}

std::string backend_help() {
  std::string kernels;
  for (const auto& s : kernels::known_kernel_names()) {
    if (kernels::find_kernel_spec(s))
      kernels += (kernels.empty() ? "" : "|") + std::string(s);
  }
  std::string text = "auto | reference | cuda | cuda:<" + kernels + ">";
  const auto absent = kernels::absent_kernel_names();
  if (!absent.empty()) {
    std::string names;
    for (const auto& a : absent)
      names += (names.empty() ? "" : ", ") + std::string(a);
    text += " (not in this build: " + names + ", the gated tensor-core designs)";
  }
  return text;
}

namespace {

bool known_kernel(const std::string& k) {
  for (const auto& s : kernels::known_kernel_names()) {
    if (s == k)
      return true;
  }
  return false;
}

void check_one_backend(const std::string& option, const std::string& name) {
  if (name == "auto" || name == "reference" || name == "cuda")
    return;
  if (name.rfind("cuda:", 0) == 0 && known_kernel(name.substr(5)))
    return;
  const std::string why = name.rfind("cuda:", 0) == 0
                              ? "is not a CUDA kernel (" + kernels::kernel_names_text() + ")"
                              : "is not auto, reference, cuda or cuda:<kernel>";
  throw ValueError(option + ": '" + support::printable(name) + "' " + why);
}

} // namespace

void check_backend_name(const std::string& option, const std::string& name) {
  check_one_backend(option, name);
  if (name == "auto") {
    if (const char* env = std::getenv("MMAEMU_BACKEND"); env && *env)
      check_one_backend("MMAEMU_BACKEND", env);
  }
}

std::string backend_for_device(const std::string& device, const std::string& backend) {
  if (device == "auto")
    return backend;
  const std::string eff = effective_backend_name(backend);
  const bool cuda_backend = eff == "cuda" || eff.rfind("cuda:", 0) == 0;
  if (device == "cpu") {
    if (cuda_backend) {
      throw ValueError("--device cpu contradicts --backend " + support::printable(eff) +
                       " (a CUDA backend); give one of them");
    }
    return "reference";
  }
  int ordinal = -1;
  try {
    ordinal = parse_cuda_device("--device", device);
  } catch (const ValueError&) {
    throw ValueError("--device: '" + support::printable(device) +
                     "' is not auto, cpu, cuda, cuda:N or N");
  }
  if (eff == "reference") {
    throw ValueError("--device " + support::printable(device) +
                     " contradicts --backend reference (the CPU); give one of them");
  }
  if (const std::string why = kernels::cuda_unavailable_reason(); !why.empty()) {
    throw BackendUnavailableError("--device " + support::printable(device) +
                                  " is unavailable: " + why);
  }
  if (ordinal != 0) {
    throw BackendUnavailableError("--device " + support::printable(device) +
                                  " is unavailable: the CUDA backends run on device 0 "
                                  "(CUDA_VISIBLE_DEVICES chooses which GPU that is)");
  }
  return cuda_backend ? eff : "cuda";
}

std::string absent_kernel_message(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (known_kernel(n) && !kernels::find_kernel_spec(n))
      return "--kernels: " + n + " is unavailable: " + kernels::absent_kernel_reason(n);
  }
  return {};
}

int parse_cuda_device(const std::string& option, const std::string& text) {
  std::string digits = text;
  if (text == "cuda")
    return 0;
  if (text.rfind("cuda:", 0) == 0)
    digits = text.substr(5);
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    throw ValueError(option + ": '" + support::printable(text) +
                     "' is not a CUDA device (cuda, cuda:N or N, N = 0, 1, ...)");
  }
  return std::stoi(digits);
}

std::string splitk_unknown_message(const std::string& message) {
  // The emulator's message starts with the fix in Python's spelling (splitk.cpp): say it in
  // the command line's.
  const std::string head = "pass splitk=1 (or S with a scheme of the profile: ";
  if (message.rfind(head, 0) == 0) {
    const auto end = message.find("): ", head.size());
    if (end != std::string::npos) {
      std::string schemes = message.substr(head.size(), end - head.size());
      for (std::size_t at = 0; (at = schemes.find(", ", at)) != std::string::npos; at += 6)
        schemes.replace(at, 2, " or S,");
      return "pass --splitk 1 (or --splitk S," + schemes + "): " + message.substr(end + 3);
    }
  }
  return message;
}

std::uint32_t parse_f32(const std::string& text, const std::string& what) {
  if (text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(text.substr(2), &used, 16);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() - 2 || v > 0xFFFFFFFFul) {
      throw ValueError(what + ": '" + support::printable(text) +
                       "' is not binary32 bits (0x + 8 hex digits)");
    }
    return static_cast<std::uint32_t>(v);
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw ValueError(what + ": '" + support::printable(text) + "' is not a number");
  }
  return encode_binary64_bits(Format::fp32, v, Overflow::infinity);
}

Format parse_dtype(const std::string& text, const std::string& what) {
  const auto f = parse_format(text);
  if (!f) {
    throw ValueError(what + ": '" + support::printable(text) +
                     "' is not a dtype (float32, bfloat16, float16, e4m3, e5m2 or torch's names)");
  }
  return *f;
}

ScaledMmCall make_call(const CallArgs& args, const Tensor* a_rows, const Tensor* b_rows) {
  check_gemm_size(args.M, args.N, args.K);
  // Names first: an unknown profile or backend is a usage error, never a call that raises.
  try {
    get_profile_or_default(args.profile);
  } catch (const ValueError& e) {
    throw ValueError(std::string(args.profile.empty() ? "MMAEMU_PROFILE" : "--profile") + ": " +
                     e.what());
  }
  check_backend_name("--backend", args.backend);
  ScaledMmCall c;
  const Format fa = parse_dtype(args.a, "--a");
  const Format fb = parse_dtype(args.b, "--b");
  c.input = a_rows ? *a_rows : Tensor::meta(fa, {args.M, args.K});
  const Tensor b = b_rows ? *b_rows : Tensor::meta(fb, {args.N, args.K});
  c.mat2 = b.t(); // [K, N] column-major, as w.t() of a row-major weight
  c.scale_a = Tensor::scalar_f32(parse_f32(args.scale_a, "--scale-a"));
  c.scale_b = Tensor::scalar_f32(parse_f32(args.scale_b, "--scale-b"));
  if (!args.scale_result.empty()) {
    c.scale_result = Tensor::scalar_f32(parse_f32(args.scale_result, "--scale-result"));
  }
  if (!args.out.empty())
    c.out_dtype = parse_dtype(args.out, "--out");
  c.use_fast_accum = args.fast;
  c.profile = args.profile;
  try {
    c.splitk = parse_splitk(args.splitk);
  } catch (const ValueError& e) {
    throw ValueError(std::string("--splitk: ") + e.what());
  }
  c.backend = backend_for_device(args.device, args.backend);
  return c;
}

} // namespace mmaemu::cli
