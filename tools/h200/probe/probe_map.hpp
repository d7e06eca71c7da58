// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// From the probe's answer (what cuBLASLt's heuristic picked) to a split-K table entry of the
// profile (tools/h200/fill_table.py applies the same rule). No CUDA header: the probe's answer
// arrives as plain fields. The live-query step of resolve_splitk has its own, stricter mapping
// (kernels/data/splitk_live_map.json: only measured algorithms).

#include <optional>
#include <string>

#include "mmaemu/emulator/profile.hpp"
#include "probe_fields.hpp"

namespace mmaemu::h200 {

struct MappedSplit {
  std::optional<SplitKEntry> entry; // none: not representable (why says so)
  std::string why;
};

// S = 1 (or 0, which cuBLASLt also uses for "not split") -> S 1, scheme none. S > 1 with partials
// in fp32 (reduction compute_type; inplace or output_type with an fp32 output) -> S, scheme
// "contiguous" (the hopper preset's plan: the split layout is still an unverified modelling
// decision, so verified is false). Anything else (a failed query, partials rounded to a 16-bit
// or FP8 output type, an unknown scheme or dtype, a scale_result query: the table is not keyed
// by it) has no entry.
MappedSplit table_entry_from_probe(const ProbeFields& p);

} // namespace mmaemu::h200
