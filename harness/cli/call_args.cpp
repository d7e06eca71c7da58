// SPDX-License-Identifier: BSD-2-Clause
#include "call_args.hpp"

#include <cstdlib>

#include "mmaemu/emulator/encode_bits.hpp"
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
  cmd.add_option("--splitk", args.splitk, "auto | 1 | S,contiguous | S,serial | S,pairwise")
      ->capture_default_str();
  cmd.add_option("--backend", args.backend, "auto | reference | cuda | cuda:<v1|v4|v9|tc3|h1|h4>")
      ->capture_default_str();
  cmd.add_option("--device", args.device, "auto | cpu | cuda | cuda:N")->capture_default_str();
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
  c.splitk = parse_splitk(args.splitk);
  c.backend = args.backend;
  return c;
}

} // namespace mmaemu::cli
