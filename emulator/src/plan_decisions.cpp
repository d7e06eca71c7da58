// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/plan_decisions.hpp"

#include <algorithm>

#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/f32_arith.hpp"

namespace mmaemu::model {

std::vector<KRange> split_layout_contiguous(std::size_t K, int S, int grain_) {
  // S contiguous parts of ceil(ceil(K / grain) / S) * grain elements (the grain is the
  // profile's: 16, torch's K granularity, or cuBLASLt 13.1.1's k step of 128 on sm_90); the
  // last part takes what is left, so there may be fewer than S non-empty parts. By
  // ceil(ceil(x / a) / b) = ceil(x / (a * b)) this is ceil(K / S) rounded up to the grain.
  std::vector<KRange> parts;
  const auto grain = static_cast<std::size_t>(grain_);
  const std::size_t per = ((K + S - 1) / S + grain - 1) / grain * grain;
  std::size_t k = 0;
  for (int s = 0; s < S; ++s) {
    const std::size_t k1 = (s == S - 1) ? K : std::min(K, k + per);
    parts.emplace_back(k, k1);
    k = k1;
  }
  return parts;
}

std::vector<KRange> slow_chunks_from_part_start(KRange part, int chunk) {
  std::vector<KRange> out;
  for (std::size_t k = part.first; k < part.second; k += static_cast<std::size_t>(chunk)) {
    out.emplace_back(k, std::min(part.second, k + static_cast<std::size_t>(chunk)));
  }
  return out;
}

std::uint32_t promote_fp32_add(std::uint32_t acc, std::uint32_t chunk) {
  return f32_add_bits(acc, chunk);
}

std::uint32_t reduce_fp32_by_scheme(const std::uint32_t* partials, int S,
                                    const std::string& scheme) {
  if (S == 1)
    return partials[0];
  if (scheme == "pairwise") {
    std::vector<std::uint32_t> level(partials, partials + S);
    while (level.size() > 1) {
      std::vector<std::uint32_t> next;
      for (std::size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(f32_add_bits(level[i], level[i + 1]));
      if (level.size() % 2)
        next.push_back(level.back());
      level.swap(next);
    }
    return level[0];
  }
  // contiguous and serial: one fp32 accumulator, parts in order.
  std::uint32_t acc = partials[0];
  for (int s = 1; s < S; ++s)
    acc = f32_add_bits(acc, partials[s]);
  return acc;
}

std::uint32_t scale_alpha_first(std::uint32_t acc, std::uint32_t scale_a, std::uint32_t scale_b) {
  const std::uint32_t alpha = f32_mul_bits(scale_a, scale_b);
  return f32_mul_bits(alpha, acc);
}

std::uint32_t scale_two_multiplies(std::uint32_t acc, std::uint32_t scale_a,
                                   std::uint32_t scale_b) {
  return f32_mul_bits(f32_mul_bits(acc, scale_a), scale_b);
}

std::uint32_t apply_scale(ScaleFold fold, std::uint32_t acc, std::uint32_t scale_a,
                          std::uint32_t scale_b) {
  return fold == ScaleFold::fold_once ? decisions().scale(acc, scale_a, scale_b)
                                      : scale_two_multiplies(acc, scale_a, scale_b);
}

std::uint32_t scale_result_multiply(std::uint32_t d, std::uint32_t scale_result) {
  return f32_mul_bits(d, scale_result);
}

std::uint32_t convert_rne_fp8_satfinite(std::uint32_t d, Format out) {
  const Overflow ov = is_fp8(out) ? Overflow::saturate : Overflow::infinity;
  return encode_binary32_bits(out, d, ov);
}

namespace {

PlanDecisions make_default() {
  PlanDecisions d{};
  d.split_layout = split_layout_contiguous;
  d.slow_chunks = slow_chunks_from_part_start;
  d.promote = promote_fp32_add;
  d.reduce = reduce_fp32_by_scheme;
  d.alpha_before_reduction = false;
  d.scale = scale_alpha_first;
  d.scale_result = scale_result_multiply;
  d.convert = convert_rne_fp8_satfinite;
  return d;
}

PlanDecisions& current() {
  static PlanDecisions d = make_default();
  return d;
}

} // namespace

const PlanDecisions& decisions() {
  return current();
}

const PlanDecisions& default_decisions() {
  static const PlanDecisions d = make_default();
  return d;
}

ScopedDecisions::ScopedDecisions(const PlanDecisions& d) : saved_(current()) {
  current() = d;
}
ScopedDecisions::~ScopedDecisions() {
  current() = saved_;
}

const std::vector<DecisionInfo>& list_decisions() {
  static const std::vector<DecisionInfo> v = {
      {"plan.fast_chain", "use_fast_accum=True: one chain of the preset over each slice from +0"},
      {"plan.split_layout",
       "S contiguous slices of ceil(ceil(K/g)/S)*g from k = 0 at the profile's grain g, the "
       "last takes the rest; each slice is a chain (or slow blocks) from +0"},
      {"plan.slow_chunks",
       "use_fast_accum=False: k blocks of the profile's slow block (128) from each slice's "
       "start, each a chain from +0"},
      {"plan.promotion",
       "each block total added to an fp32 accumulator (starting at +0) with an IEEE fp32 add, "
       "round to nearest even, in k order"},
      {"plan.reduction",
       "contiguous and serial: fp32 adds of the partials in the profile's merge order (slice "
       "order); pairwise: an fp32 binary tree; the partials and the reduction are fp32"},
      {"plan.alpha_before_reduction", "false: alpha is applied once, after the reduction"},
      {"plan.nonfinite", "NaN/Inf codes are replaced by +0 before the chain; the outputs of "
                         "rows/columns that held them are patched by the non-finite rule"},
      {"epilogue.scale", "the profile's scale fold: alpha = fp32(scale_a * scale_b), then "
                         "D = fp32(alpha * acc)"},
      {"epilogue.scale_result",
       "FP8 outputs only: D = fp32(D * scale_result) after the scales; ignored otherwise"},
      {"epilogue.convert",
       "round to nearest even into the output dtype; fp16/bf16 overflow to Inf; FP8 outputs "
       "saturate to +-max finite (satfinite); NaN -> canonical NaN; signed zeros kept"},
  };
  return v;
}

} // namespace mmaemu::model
