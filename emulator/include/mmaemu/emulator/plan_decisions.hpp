// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Every structural choice of the GEMM plan and epilogue that no hardware recording has yet
// confirmed is a named, swappable function here (docs/semantics.md lists them with their
// status). The mutation matrix and tests swap them with ScopedDecisions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"

namespace mmaemu::model {

using KRange = std::pair<std::size_t, std::size_t>; // [k0, k1)

struct PlanDecisions {
  // plan.split_layout: the K ranges of the S parts of a split, at the profile's grain
  // (GemmModel::split_grain).
  std::vector<KRange> (*split_layout)(std::size_t K, int S, int grain);
  // plan.slow_chunks: the chunks of a part under slow accumulation (chains from +0 each).
  std::vector<KRange> (*slow_chunks)(KRange part, int chunk);
  // plan.promotion: the fp32 accumulator after promoting one chunk result into it.
  std::uint32_t (*promote)(std::uint32_t acc, std::uint32_t chunk);
  // plan.reduction: the S partials (fp32 bits, in part order) combined by the scheme.
  std::uint32_t (*reduce)(const std::uint32_t* partials, int S, const std::string& scheme);
  // plan.alpha_before_reduction: scale each partial before the reduction.
  bool alpha_before_reduction;
  // epilogue.scale: the fp32 result from the accumulator and the two scales.
  std::uint32_t (*scale)(std::uint32_t acc, std::uint32_t scale_a, std::uint32_t scale_b);
  // epilogue.scale_result: an FP8 output's scale_result applied to the fp32 result.
  std::uint32_t (*scale_result)(std::uint32_t d, std::uint32_t scale_result);
  // epilogue.convert: the fp32 result rounded to the output dtype.
  std::uint32_t (*convert)(std::uint32_t d, Format out);
};

// The decisions in force (process-wide).
const PlanDecisions& decisions();

// The shipped decisions.
const PlanDecisions& default_decisions();

// Swaps decisions for the lifetime of the object (tests, mutants). Not thread-safe against
// concurrent GEMMs.
class ScopedDecisions {
public:
  explicit ScopedDecisions(const PlanDecisions& d);
  ~ScopedDecisions();
  ScopedDecisions(const ScopedDecisions&) = delete;
  ScopedDecisions& operator=(const ScopedDecisions&) = delete;

private:
  PlanDecisions saved_;
};

struct DecisionInfo {
  const char* id;
  const char* choice;
};

// Every named decision of this file. Their status is not typed here: it is computed from the
// evidence registry (evidence.hpp, emulator/data/evidence.json), which holds every id of this
// list (a test checks it), and docs/semantics.md is generated from it.
const std::vector<DecisionInfo>& list_decisions();

// The shipped functions, by name (mutants build alternatives next to them).
std::vector<KRange> split_layout_contiguous(std::size_t K, int S, int grain);
std::vector<KRange> slow_chunks_from_part_start(KRange part, int chunk);
std::uint32_t promote_fp32_add(std::uint32_t acc, std::uint32_t chunk);
std::uint32_t reduce_fp32_by_scheme(const std::uint32_t* partials, int S,
                                    const std::string& scheme);
std::uint32_t scale_alpha_first(std::uint32_t acc, std::uint32_t scale_a, std::uint32_t scale_b);
// The alternative scale fold of a profile (ScaleFold::two_multiplies): fp32(fp32(acc * scale_a)
// * scale_b).
std::uint32_t scale_two_multiplies(std::uint32_t acc, std::uint32_t scale_a, std::uint32_t scale_b);
// The profile's scale fold: decisions().scale for fold_once, scale_two_multiplies otherwise.
std::uint32_t apply_scale(ScaleFold fold, std::uint32_t acc, std::uint32_t scale_a,
                          std::uint32_t scale_b);
std::uint32_t scale_result_multiply(std::uint32_t d, std::uint32_t scale_result);
std::uint32_t convert_rne_fp8_satfinite(std::uint32_t d, Format out);

} // namespace mmaemu::model
