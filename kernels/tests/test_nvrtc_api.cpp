// SPDX-License-Identifier: BSD-2-Clause
// NVRTC through dlopen, on the fake NVRTC: the fixed options, options that contradict them,
// compile errors that carry the log, the library ladder.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/nvrtc_api.hpp"

namespace {

namespace nvrtc = mmaemu::kernels::nvrtc;
using mmaemu::testing::EnvGuard;

TEST(NvrtcApi, FixedOptionsNameTheArchitecture) {
  const auto o = nvrtc::fixed_options(90);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0], "--fmad=false");
  EXPECT_EQ(o[1], "-default-device");
  EXPECT_EQ(o[2], "--std=c++17");
  EXPECT_EQ(o[3], "--gpu-architecture=sm_90");
  EXPECT_EQ(nvrtc::fixed_options(120)[3], "--gpu-architecture=sm_120");
  EXPECT_THROW(nvrtc::fixed_options(7), mmaemu::ValueError);
  EXPECT_THROW(nvrtc::fixed_options(1000), mmaemu::ValueError);
}

TEST(NvrtcApi, OptionsThatContradictTheFixedOnesAreRefused) {
  for (const char* bad :
       {"--fmad=true", "-fmad=false", "--gpu-architecture=sm_80", "-arch=sm_80", "-arch",
        "--std=c++20", "-std=c++14", "-use_fast_math", "--use_fast_math", ""}) {
    try {
      nvrtc::check_extra_options({"-lineinfo", bad});
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const mmaemu::ValueError& e) {
      if (*bad) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_NO_THROW(nvrtc::check_extra_options({"-lineinfo", "-DMMAEMU_V1_DEC=1", "--ftz=false"}));
}

TEST(NvrtcApi, CompileUsesTheFixedOptionsThenTheExtraOnes) {
  const auto r = nvrtc::compile("t.cu", "extern \"C\" __global__ void f() {}",
                                {{"h.cuh", "#pragma once\n"}}, 89, {"-lineinfo"});
  EXPECT_EQ(r.cubin.rfind("MMAEMU-FAKE-IMAGE nvrtc t.cu sm_89", 0), 0u) << r.cubin;
  EXPECT_EQ(r.log, "fake nvrtc: t.cu for sm_89");
  auto last = mmaemu::testing::fake_symbol<const char* (*)()>(MMAEMU_FAKE_NVRTC_PATH,
                                                              "mmaemu_fake_nvrtc_last_options");
  ASSERT_NE(last, nullptr);
  EXPECT_STREQ(last(), "--fmad=false -default-device --std=c++17 --gpu-architecture=sm_89 "
                       "-lineinfo");
  EXPECT_TRUE(nvrtc::nvrtc_loaded());
  EXPECT_EQ(nvrtc::nvrtc_library(), MMAEMU_FAKE_NVRTC_PATH);
  EXPECT_EQ(nvrtc::nvrtc_version(), std::make_pair(13, 0));
}

TEST(NvrtcApi, CompileFailureCarriesTheLog) {
  EnvGuard env;
  env.set("MMAEMU_FAKE_NVRTC_FAIL", "1");
  try {
    nvrtc::compile("broken.cu", "x", {}, 90);
    FAIL() << "no exception";
  } catch (const nvrtc::NvrtcError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("broken.cu"), std::string::npos) << what;
    EXPECT_NE(what.find("sm_90"), std::string::npos) << what;
    EXPECT_NE(what.find("fake compile failure"), std::string::npos) << what;
    EXPECT_NE(e.log().find("broken.cu(1): error"), std::string::npos) << e.log();
  }
}

TEST(NvrtcApi, ForcedPathIsTheOnlyOneTried) {
  EXPECT_EXIT(
      {
        ::setenv("MMAEMU_NVRTC_PATH", "/nonexistent/libnvrtc.so.13", 1);
        std::string why;
        const bool ok = nvrtc::nvrtc_available(&why);
        const bool named = why.find("/nonexistent/libnvrtc.so.13") != std::string::npos;
        const bool only = why.find("libnvrtc.so.12") == std::string::npos;
        bool threw = false;
        try {
          nvrtc::compile("a.cu", "", {}, 90);
        } catch (const mmaemu::BackendUnavailableError&) {
          threw = true;
        }
        std::exit(!ok && named && only && threw && !nvrtc::nvrtc_loaded() ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
