// SPDX-License-Identifier: BSD-2-Clause
// The mmaemu command installs the split-K live query: on the fake libcuda (an "NVIDIA H200")
// and the fake libcublasLt of kernels/tests, `explain` and `gemm` with splitk="auto" take
// their split from cuBLASLt's answer where the live map covers it, and name the answer in
// SplitKUnknownError where it does not.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.hpp"
#include "fake_cuda_env.hpp"
#include "temp_dir.hpp"

namespace {

using mmaemu::testing::CliEnv;
using mmaemu::testing::TempDir;
using testing::HasSubstr;
using testing::Not;

class SplitKLiveCli : public ::testing::Test {
protected:
  // The fake driver as an H200, the fake cuBLASLt 13.1.0 answering `answer`
  // (ALGO_ID,TILE_ID,STAGES_ID,SPLITK_NUM,REDUCTION_SCHEME).
  CliEnv h200(const std::string& answer) const {
    CliEnv e = mmaemu::testing::fake_cuda_env(dir_.path());
    e["MMAEMU_FAKE_CUDA_NAME"] = "NVIDIA H200";
    e["MMAEMU_CUBLASLT_PATH"] = MMAEMU_FAKE_CUBLASLT_PATH;
    e["MMAEMU_FAKE_CUBLASLT_ANSWER"] = answer;
    return e;
  }
  static mmaemu::testing::CliResult run(const CliEnv& env, const std::vector<std::string>& args) {
    return mmaemu::testing::run_command(MMAEMU_BIN, env, args);
  }
  TempDir dir_{"splitk_live_cli"};
};

TEST_F(SplitKLiveCli, ExplainTakesAMappedSplitFromCublasLt) {
  const auto r = run(h200("66,21,36,2,2"), {"explain", "2048", "5760", "1920", "--profile", "h200",
                                            "--backend", "reference"});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("split       S=2 scheme=contiguous source=live-query verified=no"));
  EXPECT_THAT(r.out, HasSubstr("answered ALGO_ID 66, TILE_ID 21, STAGES_ID 36, SPLITK_NUM 2, "
                               "reduction compute_type"));
  EXPECT_THAT(r.out, HasSubstr("evidence bitequiv-h100-cublaslt-13.1.1"));
  EXPECT_THAT(r.out, HasSubstr("UnverifiedSplitWarning"));
}

TEST_F(SplitKLiveCli, AnUnmappedAnswerIsNamedAndNothingIsGuessed) {
  const auto r = run(h200("67,21,36,1,0"), {"explain", "2048", "5760", "1920", "--profile", "h200",
                                            "--backend", "reference"});
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("SplitKUnknownError"));
  EXPECT_THAT(r.out, HasSubstr("live-query: cuBLASLt 13.1.0 on NVIDIA H200 (sm_90) answered "
                               "ALGO_ID 67"));
  EXPECT_THAT(r.out, Not(HasSubstr("source=live-query")));
}

TEST_F(SplitKLiveCli, GemmRunsWithTheLiveDecision) {
  const auto r = run(h200("66,21,36,1,0"), {"gemm", "--M", "16", "--N", "16", "--K", "256",
                                            "--profile", "h200", "--backend", "reference"});
  EXPECT_EQ(r.status, 0) << r.all();
  const auto without = run(mmaemu::testing::no_driver_env(dir_.path()),
                           {"gemm", "--M", "16", "--N", "16", "--K", "256", "--profile", "h200",
                            "--backend", "reference"});
  EXPECT_EQ(without.status, 1) << without.all();
  EXPECT_THAT(without.all(), HasSubstr("live-query: no CUDA device is visible"));
}

} // namespace
