// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Replaying recordings: every case on a backend, compared bit for bit with the recorded
// output through the one comparator. `mmaemu replay` and the replay tiers (T1, T2) use the
// same functions, so that a set's attributes mean the same everywhere:
//   scope = out          the set is not run: every case is UNSUPPORTED ("out of scope (n/a)",
//                        with the attribute scope_reason), never PASS or FAIL;
//   expect_error = CLASS the hardware (or torch) refused the set: a case passes where the
//                        emulator refuses it with exactly that mmaemu error class, and fails
//                        where it computes a result or raises another class.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::harness {

enum class Outcome { pass, fail, error, unsupported, xfail };
const char* outcome_name(Outcome o);

struct CaseResult {
  std::string id;
  Outcome outcome = Outcome::pass;
  std::uint32_t expected = 0;
  std::uint32_t actual = 0;
  Mismatch why = Mismatch::none;
  std::string message; // for error, unsupported and expected-error outcomes
};

struct SetResult {
  std::string file;   // the recording it came from
  std::string name;   // the batch (set) name
  std::string preset; // mma: the preset; gemm kinds: "gemm" or "gemm_call"
  std::string gpu;
  std::string backend;               // the backend that computed the cases ("reference", "cuda:h4")
  std::string scope;                 // the attribute scope ("out": not run), or empty
  std::string expect_error;          // the set's attribute expect_error, or empty
  std::vector<std::string> profiles; // gemm kinds: the profiles its cases name, in first order
  std::size_t cases = 0, passed = 0, failed = 0, errors = 0, unsupported = 0;
  double seconds = 0.0;
  std::vector<CaseResult> results; // every case (gemm_call: every output), in recording order
};

// A recording that could not be read; the other files are still replayed.
struct UnreadableFile {
  std::string file;
  std::string message; // one line, naming the file
};

struct ReplayResult {
  std::vector<SetResult> sets;
  std::vector<UnreadableFile> unreadable;
  std::size_t passed = 0, failed = 0, errors = 0, unsupported = 0;
  // Cases that ran on the emulator and were judged (PASS or FAIL): zero means nothing was
  // tested.
  std::size_t tested() const { return passed + failed; }
};

// Checks a backend name before any file is read: the backend that will be asked for
// ("reference", "auto", "cuda", "cuda:<kernel>"; "auto" resolves to "reference" without a
// CUDA selector or device). Throws BackendUnavailableError for an explicit CUDA backend this
// machine or build cannot run and ValueError for an unknown name. Each set then selects its
// backend for its own preset: a CUDA kernel runs the mma cases whose chain starts from +0
// over finite codes (kernel ABI v1) and marks the others UNSUPPORTED; GEMM-level sets run
// scaled_mm / accumulate with the backend.
std::string resolve_backend(const std::string& requested);

// Reads a recording for replay: read_recording, then every gemm_call description checked
// (check_gemm_calls), so that a malformed description makes the whole file unreadable.
// Throws recordings::RecordingError or GemmCallError naming the file.
recordings::Recording read_recording_for_replay(const std::filesystem::path& path);

// Replays one mma batch on the reference model, honouring scope and expect_error (above).
// An unknown preset or any other refusal of the emulator is an ERROR of every case (unless it
// is the expected error); it never throws for what the batch holds.
SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file,
                       const std::string& backend = "reference");

// The GEMM-level kinds with the set attributes honoured: scope = out as above; a set's
// expect_error applies to every case (gemm) or output (gemm_call) that names none itself.
SetResult replay_gemm_set(const recordings::GemmBatch& batch, const std::string& file,
                          const std::string& backend = "reference");
SetResult replay_gemm_call_set(const recordings::GemmCallBatch& batch, const std::string& file,
                               const std::string& backend = "reference");

// The raw GEMM replays (no set attributes): kind "gemm" through scaled_mm or accumulate +
// epilogue, a case passes when every output matches bit for bit, or when its expected error
// class is raised; kind "gemm_call" gives one result per recorded output.
SetResult replay_gemm_batch(const recordings::GemmBatch& batch, const std::string& file,
                            const std::string& backend = "reference");
SetResult replay_gemm_call_batch(const recordings::GemmCallBatch& batch, const std::string& file,
                                 const std::string& backend = "reference");

// Reads and replays the files one after the other, every set through the functions above.
// A file that cannot be read (missing, not a regular file, not a valid recording) is listed
// in `unreadable` (and passed to on_unreadable) and the others are still replayed. Never
// throws for what the files hold.
ReplayResult replay_files(const std::vector<std::filesystem::path>& files,
                          const std::function<void(const SetResult&)>& on_set = {},
                          const std::function<void(const UnreadableFile&)>& on_unreadable = {},
                          const std::string& backend = "reference");

} // namespace mmaemu::harness
