// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// mmaemu::scaled_mm: torch._scaled_mm of torch 2.7.1 (same names, order and defaults),
// computed with the numerics of the profile's platform.

#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/emulator/tensor.hpp"

namespace mmaemu {

// The arguments of a scaled_mm call (torch's names; `out` is an optional output tensor).
struct ScaledMmCall {
  Tensor input;                       // [M, K] FP8, row-major
  Tensor mat2;                        // [K, N] FP8, column-major
  Tensor scale_a, scale_b;            // one-element fp32
  std::optional<Tensor> bias;         // must be absent (UnsupportedFeatureError)
  std::optional<Tensor> scale_result; // one-element fp32, FP8 outputs only
  std::optional<Format> out_dtype;    // default: input's dtype
  bool use_fast_accum = false;
  Tensor* out = nullptr;
  std::string profile; // empty: $MMAEMU_PROFILE or "hopper"
  const Profile* profile_ptr = nullptr;
  SplitKRequest splitk; // "auto"
  std::string backend = "auto";
  std::string* backend_used = nullptr; // receives the backend that ran (when one ran)
  unsigned threads = 0;
};

// validate_scaled_mm, then the computation; ValueError for meta tensors (no storage), before
// anything of the call's size is allocated.
Tensor scaled_mm(const ScaledMmCall& call);

// torch's positional form.
Tensor scaled_mm(const Tensor& input, const Tensor& mat2, const Tensor& scale_a,
                 const Tensor& scale_b, const std::optional<Tensor>& bias = std::nullopt,
                 const std::optional<Tensor>& scale_result = std::nullopt,
                 std::optional<Format> out_dtype = std::nullopt, bool use_fast_accum = false,
                 Tensor* out = nullptr, const std::string& profile = "",
                 const SplitKRequest& splitk = {}, const std::string& backend = "auto");

// One validation rule of scaled_mm, in torch's order (scaled-mm-facts.md).
struct ScaledMmRule {
  const char* id;
  const char* description;
  // Throws the rule's error class if the call breaks it.
  void (*check)(const ScaledMmCall& call, const Profile& profile);
};

// The rules, in the order they are checked.
const std::vector<ScaledMmRule>& scaled_mm_rules();

// Runs every rule; throws the first violation (ReferenceRejectsError, UnsupportedFeatureError
// or ValueError), then check_gemm_size (ValueError: the emulator's size limits, tensor.hpp).
// Does not decide split-K. Meta tensors (shapes only) are accepted.
void validate_scaled_mm(const ScaledMmCall& call, const Profile& profile);

// The dtype of the result: out_dtype, or out's dtype, or input's dtype.
Format result_dtype(const ScaledMmCall& call);

// The epilogue on one fp32 accumulator value: scales (unless already applied before the
// reduction) by the profile's scale fold, scale_result for FP8 outputs, rounding to the output
// dtype.
std::uint32_t epilogue(std::uint32_t acc, std::uint32_t scale_a, std::uint32_t scale_b,
                       std::optional<std::uint32_t> scale_result, Format out, bool scaled_already,
                       ScaleFold fold = ScaleFold::fold_once);

} // namespace mmaemu
