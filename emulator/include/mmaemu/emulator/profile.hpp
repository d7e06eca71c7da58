// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A Profile is a reference platform (GPU, SM count, cuBLASLt version, caller, workspace,
// split-K table, what its cuBLAS rejects), as data: emulator/data/profiles.json and
// emulator/data/splitk/<table>.json.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu {

// One recorded split-K decision: for this call, the platform's cuBLASLt chose S parts.
struct SplitKEntry {
  std::int64_t M = 0, N = 0, K = 0;
  Format a = Format::e4m3, b = Format::e4m3, out = Format::bf16;
  bool fast = false;
  int S = 1;
  std::string scheme = "none";
  bool verified = false; // replayed on hardware (a GEMM recording confirms the plan)
  std::string evidence;  // the recording or query it came from
};

struct SplitKTable {
  std::string id;
  std::string note;
  std::vector<SplitKEntry> entries;
};

// An envelope: a rule that infers S = 1 for calls inside it when the table has no entry.
struct SplitKEnvelope {
  std::int64_t min_mn = 0; // M * N at least this
  std::int64_t max_k = 0;  // K at most this
  bool validated = false;  // passed its held-out test (else UnvalidatedEnvelopeWarning)
  std::string evidence;
};

// How the split-K partials of a sequential scheme (contiguous, serial) are merged: fp32 adds
// in slice order starting from partial 0, or from the last slice back. The pairwise scheme is
// its own order (a binary tree).
enum class PartialMerge { forward, reverse };

// How the two operand scales meet the fp32 sum: folded into one fp32 factor first,
// fp32(fp32(scale_a * scale_b) * sum), or two multiplies, fp32(fp32(sum * scale_a) * scale_b).
enum class ScaleFold { fold_once, two_multiplies };

const char* partial_merge_name(PartialMerge m);
const char* scale_fold_name(ScaleFold f);

// The GEMM-level choices that differ between platforms (cuBLASLt versions, GPUs), as data.
// Their evidence is in emulator/data/evidence.json (docs/semantics.md shows it per profile).
struct GemmModel {
  // Split-K slices are `ceil(ceil(K / split_grain) / S) * split_grain` long, contiguous from
  // k = 0; the last takes what remains (there may be fewer than S non-empty slices).
  int split_grain = 16;
  // Slow accumulation (use_fast_accum=False) cuts each slice into k blocks of slow_block from
  // the slice's start, each a chain from +0, their totals added in fp32 in k order. true: the
  // preset's slow_chunk (none: slow accumulation is not characterised and raises).
  bool slow_block_from_preset = true;
  std::optional<int> slow_block; // when !slow_block_from_preset; none: flat (one chain a slice)
  PartialMerge merge = PartialMerge::forward;
  ScaleFold scale_fold = ScaleFold::fold_once;
  // The evidence source these values were measured by (an id of emulator/data/evidence.json,
  // which says why each profile has its values), or "".
  std::string evidence;
};

// A call that the profile's cuBLAS rejects although torch's checks pass.
struct RejectRule {
  std::optional<Format> a, b, out; // none: any
  std::string message;
};

struct Profile {
  std::string name;
  std::string preset;
  std::string gpu_name;
  std::string capability; // "8.9"
  int sm_count = 0;
  std::string cublaslt_version;
  std::string caller; // "torch._scaled_mm" or "transformer_engine"
  std::string torch_version;
  std::int64_t workspace_bytes = 0;
  int align = 16;
  SplitKTable splitk_table;
  std::vector<std::string> split_schemes; // the S > 1 schemes of this platform
  std::vector<RejectRule> rejects;
  Maturity maturity = Maturity::custom;
  std::string splitk_maturity;
  std::optional<SplitKEnvelope> envelope;
  GemmModel gemm;

  // The rejection message if the profile's cuBLAS rejects this format combination.
  std::optional<std::string> rejects_call(Format a, Format b, Format out) const;
};

// Slow accumulation on this profile with this preset: whether it is characterised, and its k
// block (none: flat, one chain over each slice).
bool slow_accumulation_characterised(const Profile& profile, const Preset& preset);
std::optional<int> slow_block_of(const Profile& profile, const Preset& preset);

// A shipped profile by name; ValueError for an unknown name (the message lists the names).
const Profile& get_profile(std::string_view name);

// The profile named by `name`, or by $MMAEMU_PROFILE when empty, or "hopper".
const Profile& get_profile_or_default(std::string_view name = {});

std::vector<std::string> list_profiles();

// Parses a profile / split-K table from JSON text (the data-file format); ValueError with
// the field name on malformed data.
Profile parse_profile_json(const std::string& json_text);
SplitKTable parse_splitk_table_json(const std::string& json_text);

} // namespace mmaemu
