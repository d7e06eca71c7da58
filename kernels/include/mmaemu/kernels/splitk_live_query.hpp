// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The live-query step of resolve_splitk (splitk="auto"): ask the platform's own cuBLASLt which
// algorithm its heuristic picks for the call, as torch._scaled_mm asks it, and turn the answer
// into a split decision only where the live map (splitk_live_map.hpp) has a measured row.
//
// In order, each step declining with a reason that resolve_splitk puts into its
// SplitKUnknownError when nothing later decides:
//   1. MMAEMU_DISABLE_CUDA=1: nothing is opened;
//   2. the CUDA driver (driver_api.hpp's ladder) and a visible device; without one, cuBLASLt
//      is never opened (the process maps no libcublasLt);
//   3. a visible device that is the profile's GPU: its name, SM count and compute capability;
//   4. libcublasLt (cublaslt_library.hpp's ladder), whose version must agree with the
//      profile's cuBLASLt version on the components the profile records ("13 (CUDA 13)": the
//      major; "12.8.3.14": 12.8.3, what cublasLtGetVersion reports);
//   5. the device's primary context made current (the caller's context is restored after), a
//      cuBLASLt handle for the device (created once, kept), and the heuristic
//      (cublaslt_api.hpp's ask_heuristic) with the profile's workspace;
//   6. the live map.

#include <optional>
#include <string>

#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/kernels/splitk_live_map.hpp"

namespace mmaemu::kernels {

struct LiveQueryResult {
  bool asked = false; // the heuristic was called and answered
  LiveAnswer answer;  // valid when asked
  std::optional<SplitDecision> decision;
  std::string why; // why there is no decision
};

// One live query for `q` on profile `p`. Never throws for an absent or failing driver or
// library: the result says why. Thread-safe (queries are serialised).
LiveQueryResult live_splitk_query(const SplitKQuery& q, const Profile& p,
                                  const LiveMap& map = shipped_live_map());

// The function resolve_splitk calls (the SplitKLiveQuery signature).
std::optional<SplitDecision> splitk_live_query(const SplitKQuery& q, const Profile& p,
                                               std::string& why);

// Installs splitk_live_query as resolve_splitk's live-query step. Opens nothing: the driver and
// cuBLASLt are looked at when a call first reaches that step.
void install_splitk_live_query();

} // namespace mmaemu::kernels
