// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// accumulate: the fp32 [M, N] accumulator of a @ b.T before the scales, as the profile's
// cuBLAS computes it (fast or slow accumulation, split-K plan, non-finite inputs).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/emulator/tensor.hpp"

namespace mmaemu {

struct AccumulateOptions {
  std::string profile;                  // name; empty: $MMAEMU_PROFILE or "hopper"
  const Profile* profile_ptr = nullptr; // a Profile object (overrides `profile`)
  SplitKRequest splitk;                 // default "auto"
  std::string backend = "auto";
  Format out_dtype_for_split = Format::fp32;
  unsigned threads = 0;                // 0: all hardware threads
  bool layout_std = false;             // the call has scaled_mm's standard layout
  bool scale_result_for_split = false; // scaled_mm's scale_result is given (the live query)
  // scaled_mm's (scale_a, scale_b) bits: applied to each partial before the reduction when
  // the decision plan.alpha_before_reduction is set (the result is then already scaled).
  std::optional<std::pair<std::uint32_t, std::uint32_t>> scales_before_reduction;
  std::string* backend_used = nullptr; // receives the name of the backend that ran
};

// a is [M, K] and b is [N, K], FP8 (any layout, alignment and K). use_fast_accum has no
// default. Returns an fp32 [M, N] contiguous tensor. `decision` (optional) receives the split
// decision that was used.
Tensor accumulate(const Tensor& a, const Tensor& b, bool use_fast_accum,
                  const AccumulateOptions& opt = {}, SplitDecision* decision = nullptr);

// The profile an options object names.
const Profile& profile_of(const AccumulateOptions& opt);

// The reference-only check of a backend name (backend.hpp, reference_only_backend): "reference"
// for "auto" and "reference"; BackendUnavailableError for "cuda" and "cuda:<kernel>" and
// ValueError for others. accumulate selects through choose_backend.
std::string select_backend(const std::string& requested);

} // namespace mmaemu
