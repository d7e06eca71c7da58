// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// explain: validates a scaled_mm call and reports what it would do, without computing it.
// Never throws for an invalid call: the error is reported in CallPlan::validation.

#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/emulator/splitk.hpp"

namespace mmaemu {

// One modelling decision a call relies on, with its status (evidence.hpp).
struct PlanEvidence {
  std::string id;
  std::string level; // "instruction", "GEMM", "API"
  std::string title;
  std::string choice;               // on the call's profile
  std::string status;               // "confirmed", "consistent", "contradicted", "unverified"
  std::string text;                 // "consistent with bitequiv (H100, cuBLASLt 13.1.1)", ...
  std::vector<std::string> sources; // evidence source ids
  std::string why;
};

struct CallPlan {
  bool ok = true;
  std::string error_class; // when !ok: "ReferenceRejectsError", "ValueError", ...
  std::string error_message;
  std::string profile;
  std::string preset;
  std::string preset_maturity;
  std::string profile_maturity;
  std::optional<SplitDecision> split; // absent when validation failed before the split
  std::string backend;                // "reference"
  std::vector<std::string> fallbacks; // why each backend before the chosen one was skipped
  std::vector<Warning> warnings;      // the warnings the call would emit
  std::vector<std::string> notes;
  std::string out_dtype;
  bool use_fast_accum = false;
  std::int64_t M = 0, N = 0, K = 0;
  // The decisions the call relies on (once it passed validation) and one summary line per
  // level ("GEMM level: 6 consistent with bitequiv (H100, cuBLASLt 13.1.1), 2 unverified").
  // The split-K decisions are listed only when the split is known.
  std::vector<PlanEvidence> evidence;
  std::vector<std::string> evidence_summary;
};

// Takes meta tensors (Tensor::meta): a call of any size is validated without allocating it;
// sizes over the emulator's limits (tensor.hpp) are reported as the ValueError scaled_mm raises.
CallPlan explain(const ScaledMmCall& call);

// The plan as JSON text (sorted keys).
std::string call_plan_json(const CallPlan& plan);

} // namespace mmaemu
