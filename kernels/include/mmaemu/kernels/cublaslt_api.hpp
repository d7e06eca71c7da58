// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The few cuBLASLt entry points mmaemu uses, declared here (no CUDA header), and the one
// implementation of the heuristic query torch._scaled_mm makes: the matmul descriptor of
// torch's scaled_gemm (shared/scaled-mm-facts.md, "The cuBLASLt call"), one requested result,
// and the chosen algorithm's configuration. The split-K live query (splitk_live_query.hpp) and
// the H200 probe (tools/h200/probe) both use it, so there is one descriptor to review.
//
// The values are cublasLt.h's (CUDA 13; unchanged since 12.0); kernels/tests checks them
// against the header where the toolkit is installed. This file needs only the C++ standard
// library and <dlfcn.h>: tools/h200/run.sh compiles it on a machine without this project's
// build.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::kernels::cublaslt {

using Status = int; // cublasStatus_t
inline constexpr Status kStatusSuccess = 0;

// cudaDataType_t (library_types.h).
inline constexpr int kTypeR32F = 0;
inline constexpr int kTypeR16F = 2;
inline constexpr int kTypeR16BF = 14;
inline constexpr int kTypeR8FE4M3 = 28;
inline constexpr int kTypeR8FE5M2 = 29;

// cublasComputeType_t, cublasOperation_t.
inline constexpr int kCompute32F = 68;
inline constexpr int kOpN = 0;
inline constexpr int kOpT = 1;

// cublasLtMatmulDescAttributes_t.
inline constexpr int kDescTransA = 3;
inline constexpr int kDescTransB = 4;
inline constexpr int kDescAScalePointer = 17;
inline constexpr int kDescBScalePointer = 18;
inline constexpr int kDescDScalePointer = 20;
inline constexpr int kDescFastAccum = 25;

// cublasLtMatmulPreferenceAttributes_t.
inline constexpr int kPrefMaxWorkspaceBytes = 1;

// cublasLtMatmulAlgoConfigAttributes_t.
inline constexpr int kConfigId = 0;
inline constexpr int kConfigTileId = 1;
inline constexpr int kConfigSplitkNum = 2;
inline constexpr int kConfigReductionScheme = 3;
inline constexpr int kConfigStagesId = 6;

// cublasLtReductionScheme_t.
inline constexpr unsigned kReductionNone = 0;
inline constexpr unsigned kReductionInplace = 1;
inline constexpr unsigned kReductionComputeType = 2;
inline constexpr unsigned kReductionOutputType = 4;

// Opaque handles (pointers to cuBLASLt's own objects; never dereferenced here).
struct Context;
struct MatmulDescObject;
struct MatrixLayoutObject;
struct PreferenceObject;
using Handle = Context*;
using MatmulDesc = MatmulDescObject*;
using MatrixLayout = MatrixLayoutObject*;
using Preference = PreferenceObject*;

// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t, layout-compatible.
struct Algo {
  std::uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  std::size_t workspace_size;
  Status state;
  float waves_count;
  int reserved[4];
};
static_assert(sizeof(HeuristicResult) == 96, "cublasLtMatmulHeuristicResult_t is 96 bytes");

// The entry points, as dlsym returns them (or a test's stubs). status_name is optional
// (cublasLtGetStatusName); every other one is required.
struct Api {
  std::size_t (*get_version)() = nullptr;
  Status (*create)(Handle* handle) = nullptr;
  Status (*destroy)(Handle handle) = nullptr;
  Status (*desc_create)(MatmulDesc* desc, int compute_type, int scale_type) = nullptr;
  Status (*desc_set)(MatmulDesc desc, int attr, const void* buf, std::size_t size) = nullptr;
  Status (*desc_destroy)(MatmulDesc desc) = nullptr;
  Status (*layout_create)(MatrixLayout* layout, int type, std::uint64_t rows, std::uint64_t cols,
                          std::int64_t ld) = nullptr;
  Status (*layout_destroy)(MatrixLayout layout) = nullptr;
  Status (*pref_create)(Preference* pref) = nullptr;
  Status (*pref_set)(Preference pref, int attr, const void* buf, std::size_t size) = nullptr;
  Status (*pref_destroy)(Preference pref) = nullptr;
  Status (*heuristic)(Handle handle, MatmulDesc desc, MatrixLayout a, MatrixLayout b,
                      MatrixLayout c, MatrixLayout d, Preference pref, int requested,
                      HeuristicResult* results, int* returned) = nullptr;
  Status (*algo_config_get)(const Algo* algo, int attr, void* buf, std::size_t size,
                            std::size_t* written) = nullptr;
  const char* (*status_name)(Status status) = nullptr;
};

// Resolves every entry point of `api` from the dlopen handle `lib`. Returns the names of the
// required symbols that are missing ("cublasLtCreate, cublasLtMatmulAlgoGetHeuristic"), or an
// empty string when all were found.
std::string resolve_symbols(void* lib, Api& api);

// The cudaDataType_t of an mmaemu dtype name (e4m3, e5m2, bf16, fp16, fp32).
std::optional<int> data_type_of(std::string_view dtype);

// One torch._scaled_mm call as cuBLASLt sees it. Dtypes are cudaDataType_t values.
struct HeuristicQuery {
  std::int64_t M = 0, N = 0, K = 0;
  int a_type = kTypeR8FE4M3; // mat1 (input)
  int b_type = kTypeR8FE4M3; // mat2
  int out_type = kTypeR16BF;
  bool fast_accum = false;
  bool scale_result = false;   // D_SCALE_POINTER is set
  std::uint64_t workspace = 0; // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
};

// The heuristic's one answer. When !ok, `error` names the failing step and its status.
struct HeuristicAnswer {
  bool ok = false;
  std::string error;
  int algo_id = -1;
  int splitk_num = 0;
  unsigned reduction_scheme = 0; // CUBLASLT_REDUCTION_SCHEME_*
  unsigned tile_id = 0, stages_id = 0;
  float waves = 0;
};

// "none", "inplace", "compute_type", "output_type", else "unknown(N)".
std::string reduction_scheme_name(unsigned scheme);

// Asks the heuristic for one call as torch's scaled_gemm sets it up: cuBLAS A = mat2 (m = N,
// transa T, ld K), B = mat1 (n = M, transb N, ld K), C/D m x n (ld m), k = K; compute 32F,
// scale type 32F; A_SCALE_POINTER (torch's scale_b) and B_SCALE_POINTER (scale_a), and
// D_SCALE_POINTER with scale_result: the heuristic reads only their alignment, so they point at
// a 256-byte-aligned host placeholder; FAST_ACCUM (int8); C of Half for an FP8 output, else the
// output type; MAX_WORKSPACE_BYTES = q.workspace; one requested result. Reads ALGO_ID, TILE_ID,
// SPLITK_NUM, REDUCTION_SCHEME and STAGES_ID of the returned algorithm. Every object it
// creates is destroyed on every path. Never throws for a cuBLASLt failure: the answer says.
HeuristicAnswer ask_heuristic(const Api& api, Handle handle, const HeuristicQuery& q);

// "cublasLtCreate returned CUBLAS_STATUS_NOT_INITIALIZED (1)" (the name where the library
// has cublasLtGetStatusName).
std::string status_text(const Api& api, std::string_view step, Status s);

// cublasLtGetVersion's value (major * 10000 + minor * 100 + patch) as "13.1.0".
std::string version_text(std::size_t version);

} // namespace mmaemu::kernels::cublaslt
