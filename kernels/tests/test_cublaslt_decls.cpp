// SPDX-License-Identifier: BSD-2-Clause
// The values cublaslt_api.hpp declares for itself are cublasLt.h's (built only where the CUDA
// toolkit's header is found; nothing is linked: the library is opened with dlopen only).

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "mmaemu/kernels/cublaslt_api.hpp"

namespace lt = mmaemu::kernels::cublaslt;

static_assert(lt::kStatusSuccess == CUBLAS_STATUS_SUCCESS);
static_assert(lt::kTypeR32F == CUDA_R_32F && lt::kTypeR16F == CUDA_R_16F &&
              lt::kTypeR16BF == CUDA_R_16BF && lt::kTypeR8FE4M3 == CUDA_R_8F_E4M3 &&
              lt::kTypeR8FE5M2 == CUDA_R_8F_E5M2);
static_assert(lt::kCompute32F == CUBLAS_COMPUTE_32F);
static_assert(lt::kOpN == CUBLAS_OP_N && lt::kOpT == CUBLAS_OP_T);
static_assert(lt::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA &&
              lt::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB &&
              lt::kDescAScalePointer == CUBLASLT_MATMUL_DESC_A_SCALE_POINTER &&
              lt::kDescBScalePointer == CUBLASLT_MATMUL_DESC_B_SCALE_POINTER &&
              lt::kDescDScalePointer == CUBLASLT_MATMUL_DESC_D_SCALE_POINTER &&
              lt::kDescFastAccum == CUBLASLT_MATMUL_DESC_FAST_ACCUM);
static_assert(lt::kPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(lt::kConfigId == CUBLASLT_ALGO_CONFIG_ID &&
              lt::kConfigTileId == CUBLASLT_ALGO_CONFIG_TILE_ID &&
              lt::kConfigSplitkNum == CUBLASLT_ALGO_CONFIG_SPLITK_NUM &&
              lt::kConfigReductionScheme == CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME &&
              lt::kConfigStagesId == CUBLASLT_ALGO_CONFIG_STAGES_ID);
static_assert(lt::kReductionNone == CUBLASLT_REDUCTION_SCHEME_NONE &&
              lt::kReductionInplace == CUBLASLT_REDUCTION_SCHEME_INPLACE &&
              lt::kReductionComputeType == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE &&
              lt::kReductionOutputType == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
static_assert(sizeof(lt::Algo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(lt::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(lt::HeuristicResult, workspace_size) ==
              offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(lt::HeuristicResult, state) ==
              offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(offsetof(lt::HeuristicResult, waves_count) ==
              offsetof(cublasLtMatmulHeuristicResult_t, wavesCount));
// Enumerations pass as int in the C ABI the function table assumes.
static_assert(sizeof(cublasStatus_t) == sizeof(int) && sizeof(cudaDataType_t) == sizeof(int) &&
              sizeof(cublasComputeType_t) == sizeof(int) &&
              sizeof(cublasLtMatmulDescAttributes_t) == sizeof(int) &&
              sizeof(cublasLtMatmulAlgoConfigAttributes_t) == sizeof(int));

// cublasLtGetVersion is major * 10000 + minor * 100 + patch (cublas_api.h's CUBLAS_VERSION).
TEST(CublasLtDecls, VersionTextIsMajorMinorPatch) {
  EXPECT_EQ(lt::version_text(130100), "13.1.0");
  EXPECT_EQ(lt::version_text(120803), "12.8.3");
  EXPECT_EQ(lt::version_text(CUBLAS_VERSION), std::to_string(CUBLAS_VER_MAJOR) + "." +
                                                  std::to_string(CUBLAS_VER_MINOR) + "." +
                                                  std::to_string(CUBLAS_VER_PATCH));
}
