// SPDX-License-Identifier: BSD-2-Clause
// main() of the loader tests: the fake driver and NVRTC are the libraries the loader opens
// (two devices, sm_90), the cache folder is a fresh temporary one, and death tests re-execute
// the binary (threadsafe style), so a test that needs another driver configuration or no
// driver at all runs in a process that has loaded nothing.

#include <stdlib.h>

#include <gtest/gtest.h>

#include "temp_dir.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  static mmaemu::testing::TempDir cache("loader-cache");
  ::setenv("MMAEMU_LIBCUDA_PATH", MMAEMU_FAKE_CUDA_PATH, 1);
  ::setenv("MMAEMU_NVRTC_PATH", MMAEMU_FAKE_NVRTC_PATH, 1);
  ::setenv("MMAEMU_FAKE_CUDA_DEVICES", "2", 1);
  ::setenv("MMAEMU_CACHE_DIR", cache.path().c_str(), 1);
  for (const char* v :
       {"MMAEMU_DISABLE_CUDA", "MMAEMU_TEST_FORCE_FAIL", "MMAEMU_FATBIN_DIR", "MMAEMU_FAKE_CUDA_CC",
        "MMAEMU_FAKE_CUDA_SMEM_OPTIN", "MMAEMU_FAKE_CUDA_UUID", "MMAEMU_FAKE_CUDA_WRONG",
        "MMAEMU_FAKE_CUDA_MAX_GRID_Y", "MMAEMU_FAKE_NVRTC_FAIL"})
    ::unsetenv(v);
  return RUN_ALL_TESTS();
}
