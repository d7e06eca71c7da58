// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Replaying recordings: every case on a backend, compared bit for bit with the recorded
// output through the one comparator, judged in the one outcome vocabulary (outcome.hpp).
// `mmaemu replay` and the replay tiers (T1, T2, T3) use the same functions, so that a set's
// attributes mean the same everywhere:
//   scope = out          the set is not run: every case is UNSUPPORTED ("out of scope (n/a)",
//                        with the attribute scope_reason), never PASS or FAIL;
//   expect_error = CLASS the hardware (or torch) refused the set: a case passes where the
//                        emulator refuses it with exactly that mmaemu error class, and fails
//                        where it computes a result or raises another class. A refusal is one
//                        event per distinct call (the same call with other operand values is
//                        refused the same way): it is judged once, at the first case of that
//                        call; the other cases of the call are UNSUPPORTED ("the same call as
//                        <id>"), so that one exception never books thousands of passes;
//   xfail = REASON       a documented disagreement (with xfail_evidence, required): a case
//                        that fails is XFAIL, one that passes is XPASS, which fails the run.
// A file whose attribute computed_by says it was computed (`mmaemu gemm --write`) is not a
// hardware recording: with ReplayOptions::hardware_only (the tiers) every case of it is
// UNSUPPORTED with that reason, never a hardware PASS.
//
// One pass per recording: each file is read once (hashed while read), each gemm_call
// description parsed once into a typed call (gemm_call.hpp) that every output uses, and a
// --shard filter selects case indices without copying a batch.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/outcome/outcome.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::harness {

// The one vocabulary, under the names the harness has always used.
using outcome::Outcome;
using outcome::outcome_name;

struct CaseResult {
  std::string id;
  Outcome outcome = Outcome::pass;
  std::uint32_t expected = 0;
  std::uint32_t actual = 0;
  Mismatch why = Mismatch::none;
  std::string message; // for error, unsupported and expected-error outcomes
};

// The comparator's classes of a set's failed results (each result by its first mismatch).
struct MismatchCounts {
  std::size_t value = 0, zero_sign = 0, nan_payload = 0;
};

struct SetResult {
  std::string file;   // the recording it came from
  std::string name;   // the batch (set) name
  std::string kind;   // "mma", "gemm" or "gemm_call"
  std::string preset; // mma: the preset; gemm kinds: "gemm" or "gemm_call"
  std::string gpu;
  std::string backend;               // the backend that computed the cases ("reference", "cuda:h4")
  std::string scope;                 // the attribute scope ("out": not run), or empty
  std::string expect_error;          // the set's attribute expect_error, or empty
  std::string xfail;                 // the set's attribute xfail (the reason), or empty
  std::vector<std::string> profiles; // gemm kinds: the profiles its cases name, in first order
  // Per result (a gemm_call output): the counts of `results` by outcome.
  std::size_t cases = 0, passed = 0, failed = 0, errors = 0, unsupported = 0, xfailed = 0,
              xpassed = 0;
  // Per unit (a case; a gemm_call call): the units the filter selected, one letter each (the
  // worst outcome of its results, outcome_letter), and their counts by outcome.
  std::string letters;
  outcome::Tally units;
  std::size_t units_total = 0; // units of the set before the filter
  std::size_t outputs = 0;     // results that judged a recorded output
  MismatchCounts mismatches;
  double seconds = 0.0;
  std::vector<CaseResult> results; // every result, in recording order

  // `results` counted by outcome.
  outcome::Tally tally() const;
};

// What a replay read of one file: its bytes' digest, or why it could not be read.
struct FileInfo {
  std::string file; // as given
  std::string sha256;
  std::uint64_t bytes = 0;
  std::string error;        // non-empty: unreadable (one line naming the file); no sets
  std::string not_hardware; // non-empty: why it is no hardware recording (computed_by)
  std::size_t cases = 0;    // cases (gemm_call: calls) it holds
};

// A recording that could not be read; the other files are still replayed.
struct UnreadableFile {
  std::string file;
  std::string message; // one line, naming the file
};

struct ReplayResult {
  std::vector<FileInfo> files; // every file, in the order given
  std::vector<SetResult> sets;
  std::vector<UnreadableFile> unreadable;
  std::size_t passed = 0, failed = 0, errors = 0, unsupported = 0, xfailed = 0, xpassed = 0;
  // Every result by outcome, an unreadable file counted as an ERROR (for the one verdict rule).
  outcome::Tally tally() const;
};

// Which cases of each set a run takes: those with index % stride == first (--shard k/N is
// first k-1, stride N; gemm_call sets are filtered by call). The default takes every case.
struct CaseFilter {
  std::size_t first = 0, stride = 1;
  bool all() const { return stride <= 1; }
  bool selects(std::size_t i) const { return all() || i % stride == first; }
};

struct ReplayOptions {
  std::string backend = "reference";
  CaseFilter filter;
  // The tiers: a file that says it was computed (computed_by) is UNSUPPORTED, not replayed.
  bool hardware_only = false;
  // T2: called with a file's sha256 before it is parsed; a non-empty answer refuses the file
  // (FileInfo::error is that answer) without parsing it.
  std::function<std::string(const std::string& sha256)> check_sha256;
  // The reference backend computes an FP8 mma set twice: with the code users run
  // (model::dot_rows, ChainPath::automatic: the vectorised binary32 kernel where it applies)
  // and with the block-FMA model itself (ChainPath::model), the arithmetic the mutation matrix
  // flips. A case passes only when both give the recorded bits, so that T1 judges the model's
  // decisions and the fast path alike. Empty: model::dot_rows with ChainPath::model; tests set
  // it to show that a disagreement fails the case.
  std::function<void(const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c,
                     std::size_t rows, std::size_t K, const Preset& p, model::FormatPair fmt,
                     std::uint32_t* out)>
      model_rows;
};

// Checks a backend name before any file is read: the backend that will be asked for
// ("reference", "auto", "cuda", "cuda:<kernel>"; "auto" resolves to "reference" without a
// CUDA selector or device). Throws BackendUnavailableError for an explicit CUDA backend this
// machine or build cannot run and ValueError for an unknown name. Each set then selects its
// backend for its own preset: a CUDA kernel runs the mma cases whose chain starts from +0
// over finite codes (kernel ABI v1) and marks the others UNSUPPORTED; GEMM-level sets run
// scaled_mm / accumulate with the backend.
std::string resolve_backend(const std::string& requested);

// A recording read for replay: the file read once (its sha256 computed while it is read),
// parsed, and every gemm_call description parsed once into its typed call.
struct ReplayRecording {
  FileInfo info;
  recordings::Recording rec;
  std::vector<std::vector<GemmCallDesc>> calls; // [gemm_call batch][call]
};

// Reads a recording for replay; a malformed gemm_call description makes the whole file
// unreadable. Never throws for what the file holds: a file that cannot be read, parsed or
// described has info.error (one line naming the file and, for a description, the call and
// the key), with info.sha256 when its bytes were read; `check_sha256` as in ReplayOptions.
ReplayRecording
read_recording_for_replay(const std::filesystem::path& path,
                          const std::function<std::string(const std::string&)>& check_sha256 = {});

// The sets of a recording with the options; `on_set` sees each set as it is done.
std::vector<SetResult> replay_recording(const ReplayRecording& r, const ReplayOptions& opt,
                                        const std::function<void(const SetResult&)>& on_set = {});

// One set of each kind with its attributes honoured (above). `calls` are the batch's typed
// calls (read_recording_for_replay); without them each call is parsed here, once, and a
// malformed one is an ERROR of each of its outputs. The short forms take every case.
SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file,
                       const ReplayOptions& opt);
SetResult replay_gemm_set(const recordings::GemmBatch& batch, const std::string& file,
                          const ReplayOptions& opt);
SetResult replay_gemm_call_set(const recordings::GemmCallBatch& batch,
                               const std::vector<GemmCallDesc>* calls, const std::string& file,
                               const ReplayOptions& opt);
SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file,
                       const std::string& backend = "reference");
SetResult replay_gemm_set(const recordings::GemmBatch& batch, const std::string& file,
                          const std::string& backend = "reference");
SetResult replay_gemm_call_set(const recordings::GemmCallBatch& batch, const std::string& file,
                               const std::string& backend = "reference");

// The one loop over files of `mmaemu replay` and the replay tiers: each file read once and
// replayed set by set; `on_file` gets each file with its sets when it is done (an unreadable
// file has FileInfo::error and no sets), and the sets are not kept. Never throws for what the
// files hold.
void replay_each_file(const std::vector<std::filesystem::path>& files, const ReplayOptions& opt,
                      const std::function<void(const SetResult&)>& on_set,
                      const std::function<void(FileInfo&, std::vector<SetResult>&)>& on_file);

// replay_each_file, everything kept: a file that cannot be read (missing, not a regular file,
// not a valid recording) is listed in `unreadable` (and passed to on_unreadable) and the
// others are still replayed.
ReplayResult replay_files(const std::vector<std::filesystem::path>& files,
                          const std::function<void(const SetResult&)>& on_set = {},
                          const std::function<void(const UnreadableFile&)>& on_unreadable = {},
                          const ReplayOptions& opt = {});

} // namespace mmaemu::harness
