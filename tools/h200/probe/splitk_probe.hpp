// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The split-K probe (issue #12, docs/h200.md): for a call of torch._scaled_mm, the matmul
// descriptor torch sets up (shared/scaled-mm-facts.md), cublasLtMatmulAlgoGetHeuristic with one
// requested result and the profile's workspace, and the chosen algorithm's split-K count,
// reduction scheme, tile and stages: kernels::cublaslt::ask_heuristic, the query the split-K
// live query makes. libcublasLt is opened with dlopen, never linked; the function table can be
// a stub (tests). Needs no CUDA header; a CUDA driver and a device to answer.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/kernels/cublaslt_api.hpp"
#include "probe_fields.hpp"

namespace mmaemu::h200 {

// The cuBLASLt entry points the probe uses (the real ones from dlsym, or a test's stubs): the
// library's own declarations (kernels/include/mmaemu/kernels/cublaslt_api.hpp), so that the
// probe and the split-K live query build one descriptor.
using LtApi = kernels::cublaslt::Api;
using LtHandle = kernels::cublaslt::Handle;
using kernels::cublaslt::reduction_scheme_name;

// Why nothing could be asked: the probe exits 4 with this text.
struct Unavailable {
  std::string what;
};

// Opens the CUDA driver (libcuda.so.1) and libcublasLt (`lib`, default libcublasLt.so.13, then
// .so.12, then .so) and resolves every entry point. The handles stay open for the process.
// On failure: the library or symbol that is missing.
std::optional<Unavailable> load_lt_api(LtApi& api, const std::string& lib = "");

// One call of the grid, in mmaemu's dtype names (e4m3, e5m2, bf16, fp16, fp32).
struct ProbeQuery {
  std::int64_t M = 0, N = 0, K = 0;
  std::string a = "e4m3", b = "e4m3", out = "bf16";
  bool fast = false;
  bool scale_result = false;
  std::uint64_t workspace = 32ull << 20;
};

struct ProbeAnswer {
  ProbeQuery q;
  bool ok = false;
  std::string error; // the failing step and cuBLAS status when !ok
  int algo_id = -1;
  int splitk_num = 0;
  unsigned reduction_scheme = 0; // CUBLASLT_REDUCTION_SCHEME_*
  unsigned tile_id = 0, stages_id = 0;
  float waves = 0;
};

// Asks the heuristic for one call as torch's scaled_gemm sets it up
// (kernels::cublaslt::ask_heuristic: cuBLAS A = mat2, B = mat1, scale pointers, FAST_ACCUM, C of
// Half for an FP8 output, workspace preference `q.workspace`, one requested result).
ProbeAnswer probe_one(const LtApi& api, LtHandle handle, const ProbeQuery& q);

// Parses query lines "M N K a b out fast scale_result" ('#' comments, blank lines); throws
// std::runtime_error naming the line.
std::vector<ProbeQuery> parse_queries(const std::string& text, std::uint64_t workspace);

// The answer in plain fields, with `evidence` naming the library version, algorithm, tile and
// stages.
ProbeFields fields_of(const ProbeAnswer& a, std::size_t cublaslt_version);

// The answers as JSON (the format tools/h200/record.py --probe and the table filler read).
std::string answers_json(const std::vector<ProbeAnswer>& answers, const std::string& library,
                         std::size_t version);

} // namespace mmaemu::h200
