// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Replaying recordings: every case on a backend, compared bit for bit with the recorded
// output through the one comparator.

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
  std::string message;  // for error outcomes
};

struct SetResult {
  std::string file;    // the recording it came from
  std::string name;    // the batch (set) name
  std::string preset;
  std::string gpu;
  std::size_t cases = 0, passed = 0, failed = 0, errors = 0;
  double seconds = 0.0;
  std::vector<CaseResult> results;  // every case, in recording order
};

struct ReplayResult {
  std::vector<SetResult> sets;
  std::size_t passed = 0, failed = 0, errors = 0;
};

// Backends that replay can use here. "auto" and "reference" select the CPU reference model;
// anything else throws BackendUnavailableError naming the backend.
std::string resolve_backend(const std::string& requested);

// Replays one batch on the reference model.
SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file);

// Replays GEMM-level cases (kind "gemm") through scaled_mm or accumulate + epilogue: a case
// passes when every output matches bit for bit, or when the expected error class is raised.
SetResult replay_gemm_batch(const recordings::GemmBatch& batch, const std::string& file);

// Replays exact recorded calls (kind "gemm_call"): one result per recorded output.
SetResult replay_gemm_call_batch(const recordings::GemmCallBatch& batch, const std::string& file);

// Reads and replays every file. Throws recordings::RecordingError for an unreadable file
// before anything is replayed (all files are read first).
ReplayResult replay_files(const std::vector<std::filesystem::path>& files,
                          const std::function<void(const SetResult&)>& on_set = {});

}  // namespace mmaemu::harness
