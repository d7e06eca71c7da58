// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The memory budget of a replay (docs/recordings.md, "Budgets"): a recording declares its
// cost before anything is allocated, and a file may cost no more than a bounded multiple of
// its own size, so that a small file can never cost gigabytes (a compressed dataset of zeros,
// a gemm_call that creates 2^28-element tensors or views a small storage with stride 0).
//
// What is checked, each before the allocation it bounds:
// - decoded data: every dataset and attribute of a file, as held in memory (with
//   kCaseOverheadBytes per case of an mma set for its ID and its replay result), at most
//   decoded_budget(file bytes); a declared chunk no more than that either;
// - the work of one case or call: the operand copies, the accumulator, the split-K partials,
//   the result, out= and the tensors a call description creates (gemm_work_bytes), at most
//   work_budget(file bytes); and M * N * K at most kMaxGemmMacs for kind gemm and gemm_call.
// Together they keep a replay (each process: mmaemu and its reader child) under
// kReplayBoundBaseBytes + kReplayBoundFactor * file bytes, which a test measures.

#include <cstdint>
#include <string>

namespace mmaemu::recordings {

inline constexpr std::uint64_t kMiB = 1ull << 20;
// The bound a replay keeps, peak resident memory of each process (stated in the docs): the
// decoded budget, the work budget, the file's image and the process itself.
inline constexpr std::uint64_t kReplayBoundBaseBytes = 320 * kMiB;
inline constexpr std::uint64_t kReplayBoundFactor = 10;
// The decoded data of a file: 16 MiB plus the file's size (deflate may expand a dataset
// 1000-fold; beyond 16 MiB a file must hold what it declares).
inline constexpr std::uint64_t kDecodedBudgetBaseBytes = 16 * kMiB;
// The work of one case or call: 256 MiB plus 8 times the file's size. A hardware recording
// holds each output's M x N expected words (deflated to about 2 bytes each), its work is
// about 16 bytes an output element: the factor 8 admits it whatever its size. The base admits
// the largest recorded call (tools/h200, evo2: 2048 x 5760 x 1920, 219 MB of work) even from
// a file that holds its operands only (`recordings fill`, before the outputs exist).
inline constexpr std::uint64_t kWorkBudgetBaseBytes = 256 * kMiB;
inline constexpr std::uint64_t kWorkBudgetFactor = 8;
// What one case of an mma set costs in memory beyond its codes: its ID (a string in the
// batch and its copy in the replay's result) and its result record.
inline constexpr std::uint64_t kCaseOverheadBytes = 192;
// The split-K parts assumed for a split that names none ("auto": the profile's table decides
// when the call runs).
inline constexpr std::uint64_t kAssumedAutoSplitParts = 4;

// The decoded bytes a file of `file_bytes` bytes may hold (at most kMaxDecodedBytes).
std::uint64_t decoded_budget(std::uint64_t file_bytes);

// The bytes one case or call of a file of `file_bytes` bytes may allocate while it runs.
std::uint64_t work_budget(std::uint64_t file_bytes);

// The split-K parts of a recorded split ("1": 1, "S,scheme": S, anything else
// kAssumedAutoSplitParts); never 0.
std::uint64_t split_parts(const std::string& splitk);

// What a GEMM of M x K by K x N with `parts` split-K parts allocates while it runs, in bytes,
// saturating at UINT64_MAX: two copies of each operand's codes (the sanitised rows and the
// originals), and M x N binary32 words for the accumulator, the result, out= and each part.
// `created_bytes` (the tensors a call creates) is added.
std::uint64_t gemm_work_bytes(std::uint64_t M, std::uint64_t N, std::uint64_t K,
                              std::uint64_t parts, std::uint64_t created_bytes = 0);

// "M x N x K with S parts needs B bytes, over the budget of W bytes of a replay of this file
// (256 MiB plus 8 times the file's N bytes)": the message of a case over work_budget, or
// empty.
std::string work_over_budget(std::uint64_t M, std::uint64_t N, std::uint64_t K, std::uint64_t parts,
                             std::uint64_t created_bytes, std::uint64_t file_bytes);

} // namespace mmaemu::recordings
