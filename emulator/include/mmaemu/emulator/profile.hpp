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

  // The rejection message if the profile's cuBLAS rejects this format combination.
  std::optional<std::string> rejects_call(Format a, Format b, Format out) const;
};

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
