// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// How the replay engine books a set's results (private to the replay library): every result
// counted once by outcome, after the set's xfail; each unit (a case, a gemm_call call) one
// letter, the worst outcome of its results; the comparator's class of each failed result
// counted. Nothing downstream (the tiers, `mmaemu replay`) derives these again.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/harness/replay.hpp"

namespace mmaemu::harness::detail {

// The indices of 0..n-1 that `f` selects, in order.
std::vector<std::size_t> selected(std::size_t n, const CaseFilter& f);

// The message of a case whose call was refused at an earlier case of the set.
std::string same_call_message(const std::string& first_id);

class SetBooking {
public:
  SetBooking(const std::string& name, const char* kind, const std::string& preset,
             const recordings::Attributes& attrs, const std::string& file, std::size_t units_total);

  SetResult& result() { return s_; }

  // Why none of the set runs, or empty: out of scope (scope = out), or not a hardware
  // recording (computed_by on the file or the set) when `opt.hardware_only`.
  std::string not_run_reason(const ReplayOptions& opt, const std::string& file_not_hardware) const;

  // Starts the next unit: a case (mma, gemm) or a call (gemm_call).
  void unit(const std::string& id);
  // A result of the current unit.
  void add(CaseResult c);
  // A unit that is not run: UNSUPPORTED with `why`, once per output (gemm_call) or once.
  void unit_not_run(const std::string& id, const std::vector<std::string>& outputs,
                    const std::string& why);

  // Closes the last unit; the set's result with its seconds.
  SetResult finish();

private:
  void close_unit();

  SetResult s_;
  std::chrono::steady_clock::time_point t0_;
  std::optional<outcome::ExpectedFailure> xfail_;
  std::string declaration_error_; // a set attribute that cannot be honoured
  std::string scope_reason_;      // the attribute scope_reason
  std::string set_not_hardware_;  // the set's own computed_by, as a reason
  bool open_ = false, any_ = false;
  Outcome worst_ = Outcome::pass;
  std::string unit_id_;
};

// The GEMM-level sets (replay_gemm.cpp) and the mma sets (replay.cpp) with a file-level
// reason not to run them (`file_not_hardware`, honoured with opt.hardware_only).
SetResult replay_mma(const recordings::MmaBatch& batch, const std::string& file,
                     const ReplayOptions& opt, const std::string& file_not_hardware);
SetResult replay_gemm(const recordings::GemmBatch& batch, const std::string& file,
                      const ReplayOptions& opt, const std::string& file_not_hardware);
SetResult replay_gemm_call(const recordings::GemmCallBatch& batch,
                           const std::vector<GemmCallDesc>* calls, const std::string& file,
                           const ReplayOptions& opt, const std::string& file_not_hardware);

} // namespace mmaemu::harness::detail
