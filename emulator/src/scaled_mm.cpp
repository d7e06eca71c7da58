// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/scaled_mm.hpp"

#include "mmaemu/emulator/backend.hpp"

#include "mmaemu/emulator/plan_decisions.hpp"

namespace mmaemu {

std::uint32_t epilogue(std::uint32_t acc, std::uint32_t scale_a, std::uint32_t scale_b,
                       std::optional<std::uint32_t> scale_result, Format out, bool scaled_already,
                       ScaleFold fold) {
  const model::PlanDecisions& dec = model::decisions();
  const bool folded = fold == ScaleFold::fold_once;
  std::uint32_t d = scaled_already ? acc
                    : folded       ? dec.scale(acc, scale_a, scale_b)
                                   : model::scale_two_multiplies(acc, scale_a, scale_b);
  if (is_fp8(out) && scale_result)
    d = dec.scale_result(d, *scale_result);
  return dec.convert(d, out);
}

Tensor scaled_mm(const ScaledMmCall& call) {
  const Profile& profile =
      call.profile_ptr ? *call.profile_ptr : get_profile_or_default(call.profile);
  validate_scaled_mm(call, profile);
  for (auto [t, name] :
       {std::pair{&call.input, "input"}, std::pair{&call.mat2, "mat2"},
        std::pair{&call.scale_a, "scale_a"}, std::pair{&call.scale_b, "scale_b"}}) {
    if (t->is_meta()) {
      throw ValueError(std::string("scaled_mm: ") + name +
                       " is a meta tensor (a shape without storage): explain() takes it, "
                       "scaled_mm needs its elements");
    }
  }
  if (call.scale_result && call.scale_result->is_meta()) {
    throw ValueError("scaled_mm: scale_result is a meta tensor (a shape without storage)");
  }
  const Format out_dtype = result_dtype(call);
  const std::int64_t M = call.input.size(0), K = call.input.size(1), N = call.mat2.size(1);

  AccumulateOptions opt;
  opt.profile_ptr = &profile;
  opt.splitk = call.splitk;
  opt.backend = call.backend;
  opt.backend_used = call.backend_used;
  opt.out_dtype_for_split = out_dtype;
  opt.threads = call.threads;
  opt.layout_std = true;
  opt.scale_result_for_split = call.scale_result.has_value();
  const std::uint32_t sa = call.scale_a.bits_flat(0);
  const std::uint32_t sb = call.scale_b.bits_flat(0);
  const bool prescale = model::decisions().alpha_before_reduction;
  if (prescale)
    opt.scales_before_reduction = std::make_pair(sa, sb);

  Tensor result = Tensor::zeros(out_dtype, {M, N});
  if (K == 0) {
    // torch zero-fills the output and runs no kernel; the split-K decision is still made.
    const ChainBackend chosen = choose_backend(
        {call.backend, &get_preset(profile.preset), {call.input.dtype(), call.mat2.dtype()}});
    if (call.backend_used)
      *call.backend_used = chosen.name;
    SplitKQuery q{M,   N, K, call.input.dtype(), call.mat2.dtype(), out_dtype, call.use_fast_accum,
                  true};
    q.scale_result = call.scale_result.has_value();
    resolve_splitk(q, profile, call.splitk);
  } else if (M > 0 && N > 0) {
    const Tensor acc = accumulate(call.input, call.mat2.t(), call.use_fast_accum, opt);
    std::optional<std::uint32_t> sr;
    if (call.scale_result)
      sr = call.scale_result->bits_flat(0);
    for (std::int64_t i = 0; i < M * N; ++i) {
      result.set_bits_flat(
          i, epilogue(acc.bits_flat(i), sa, sb, sr, out_dtype, prescale, profile.gemm.scale_fold));
    }
  }
  if (call.out) {
    // out= is resized to (M, N); its previous contents never matter.
    if (!call.out->defined() || call.out->shape() != result.shape() || !call.out->is_contiguous() ||
        call.out->dtype() != out_dtype) {
      *call.out = result;
    } else {
      for (std::int64_t i = 0; i < M * N; ++i)
        call.out->set_bits_flat(i, result.bits_flat(i));
      return *call.out;
    }
  }
  return result;
}

Tensor scaled_mm(const Tensor& input, const Tensor& mat2, const Tensor& scale_a,
                 const Tensor& scale_b, const std::optional<Tensor>& bias,
                 const std::optional<Tensor>& scale_result, std::optional<Format> out_dtype,
                 bool use_fast_accum, Tensor* out, const std::string& profile,
                 const SplitKRequest& splitk, const std::string& backend) {
  ScaledMmCall c;
  c.input = input;
  c.mat2 = mat2;
  c.scale_a = scale_a;
  c.scale_b = scale_b;
  c.bias = bias;
  c.scale_result = scale_result;
  c.out_dtype = out_dtype;
  c.use_fast_accum = use_fast_accum;
  c.out = out;
  c.profile = profile;
  c.splitk = splitk;
  c.backend = backend;
  return scaled_mm(c);
}

} // namespace mmaemu
