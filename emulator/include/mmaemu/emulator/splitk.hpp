// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Split-K requests and decisions: which S parts cuBLASLt runs a call in, and where that
// decision came from (explicit, workspace0, table, live-query, envelope).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace mmaemu {

// An explicit split: S = 1 (scheme "none"), or S > 1 with "contiguous" (hopper profiles),
// "serial" or "pairwise" (ada profiles).
struct SplitK {
  int S = 1;
  std::string scheme = "none";
};

// What a call asks for: "auto" (from the profile) or an explicit SplitK.
struct SplitKRequest {
  bool is_auto = true;
  SplitK split;

  static SplitKRequest automatic() { return {}; }
  static SplitKRequest explicit_split(int S, std::string scheme = "none") {
    return {false, SplitK{S, std::move(scheme)}};
  }
};

// Parses "auto", "1", "S,contiguous", "S,serial", "S,pairwise"; ValueError naming the text.
SplitKRequest parse_splitk(const std::string& text);
std::string splitk_request_text(const SplitKRequest& r);

struct SplitDecision {
  int S = 1;
  std::string scheme = "none";
  std::string source;    // "explicit", "workspace0", "table", "live-query", "envelope"
  bool verified = false; // this kind of decision was replayed on hardware
  std::string table_id;
  std::string note;
  std::string evidence;          // the evidence id it rests on (live-query: the mapping row's)
  std::vector<Warning> warnings; // the warnings this decision emits (or would, when dry)
};

struct SplitKQuery {
  std::int64_t M = 0, N = 0, K = 0;
  Format a_dtype = Format::e4m3, b_dtype = Format::e4m3, out_dtype = Format::bf16;
  bool use_fast_accum = false;
  bool layout_std = true; // the standard scaled_mm layout (tables are keyed by it)
  // scale_result is given: the live query sets D_SCALE_POINTER, as torch does (the tables
  // are not keyed by it).
  bool scale_result = false;
};

// The split-K decision for a call on the profile's platform, in the order explicit,
// workspace0, table, live-query, envelope. strict (default: MMAEMU_SPLITK_STRICT=1)
// disables the envelope. dry: the warnings are returned but not emitted, so a later call
// still gets its one-time UnverifiedSplitWarning / UnvalidatedEnvelopeWarning.
// Throws ValueError (bad S, a scheme of another preset), UnsupportedFeatureError (S > 1 on a
// profile without split schemes) and SplitKUnknownError ("auto" cannot decide).
SplitDecision resolve_splitk(const SplitKQuery& q, const Profile& profile,
                             const SplitKRequest& splitk, std::optional<bool> strict = std::nullopt,
                             bool dry = false);
// The live-query step of resolve_splitk: asks the platform itself (cuBLASLt's heuristic through
// dlopen: mmaemu::kernels::install_splitk_live_query, which the mmaemu CLI and the Python
// module install) for a call. Returns the decision, or nothing with `why` set. The emulator
// opens no CUDA library; with no function installed (the emulator library alone) the step is
// skipped. A decision with S > 1 that is not verified emits UnverifiedSplitWarning.
using SplitKLiveQuery =
    std::function<std::optional<SplitDecision>(const SplitKQuery&, const Profile&, std::string&)>;

// Installs `fn` for every later resolve_splitk (an empty function removes it); thread-safe.
void set_splitk_live_query(SplitKLiveQuery fn);

} // namespace mmaemu
