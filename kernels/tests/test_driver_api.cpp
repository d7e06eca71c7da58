// SPDX-License-Identifier: BSD-2-Clause
// The driver through dlopen: the library ladder, MMAEMU_DISABLE_CUDA, device discovery on the
// fake driver, errors that name the call. Configurations other than main()'s run in a fresh
// process (EXPECT_EXIT), since a loaded driver stays loaded.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/driver_api.hpp"

namespace {

namespace driver = mmaemu::kernels::driver;
using mmaemu::testing::EnvGuard;

// Whether this process maps a file whose path contains `needle`.
bool mapped(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(needle) != std::string::npos)
      return true;
  }
  return false;
}

// Runs `body` in a fresh process; the test fails unless it exits 0. `body` reports a failed
// check by exiting with a distinct status and a message on stderr.
#define IN_FRESH_PROCESS(body)                                                                     \
  EXPECT_EXIT(                                                                                     \
      {                                                                                            \
        body;                                                                                      \
        std::exit(0);                                                                              \
      },                                                                                           \
      ::testing::ExitedWithCode(0), "")

#define CHILD_CHECK(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "child check failed: %s (line %d)\n", #cond, __LINE__);                 \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

TEST(DriverApi, DisabledCudaNeverOpensTheDriver) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_DISABLE_CUDA", "1", 1);
    CHILD_CHECK(driver::visible_device_count() == 0);
    CHILD_CHECK(driver::devices().empty());
    std::string why;
    CHILD_CHECK(driver::try_api(&why) == nullptr);
    CHILD_CHECK(why.find("MMAEMU_DISABLE_CUDA=1") != std::string::npos);
    bool threw = false;
    try {
      driver::api();
    } catch (const mmaemu::BackendUnavailableError& e) {
      threw = std::string(e.what()).find("MMAEMU_DISABLE_CUDA") != std::string::npos;
    }
    CHILD_CHECK(threw);
    CHILD_CHECK(!driver::driver_loaded());
    CHILD_CHECK(!mapped("libcuda"));
    CHILD_CHECK(!mapped("fake_cuda"));
  });
}

TEST(DriverApi, AbsentDriverMeansNoDeviceAndANamedReason) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_LIBCUDA_PATH", "/nonexistent/libcuda.so.1", 1);
    CHILD_CHECK(driver::visible_device_count() == 0);
    CHILD_CHECK(!driver::driver_loaded());
    bool threw = false;
    try {
      driver::device(0);
    } catch (const mmaemu::BackendUnavailableError& e) {
      threw = std::string(e.what()).find("/nonexistent/libcuda.so.1") != std::string::npos;
    }
    CHILD_CHECK(threw);
    // Only the named path is tried: the system's libcuda.so.1 is never opened.
    CHILD_CHECK(!mapped("libcuda.so"));
  });
}

TEST(DriverApi, FailedLoadIsRetriedWithTheNewEnvironment) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_LIBCUDA_PATH", "/nonexistent/libcuda.so.1", 1);
    CHILD_CHECK(driver::visible_device_count() == 0);
    ::setenv("MMAEMU_LIBCUDA_PATH", MMAEMU_FAKE_CUDA_PATH, 1);
    CHILD_CHECK(driver::visible_device_count() == 2);
    CHILD_CHECK(driver::driver_loaded());
  });
}

TEST(DriverApi, CuInitFailureMeansNoDevice) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_DEVICES", "0", 1);
    CHILD_CHECK(driver::visible_device_count() == 0);
    std::string why;
    CHILD_CHECK(driver::try_api(&why) == nullptr);
    CHILD_CHECK(why.find("cuInit") != std::string::npos);
    CHILD_CHECK(why.find("CUDA_ERROR_NO_DEVICE") != std::string::npos);
  });
}

TEST(DriverApi, FakeDevicesAreListedWithTheirAttributes) {
  IN_FRESH_PROCESS({
    ::setenv("MMAEMU_FAKE_CUDA_DEVICES", "3", 1);
    ::setenv("MMAEMU_FAKE_CUDA_CC", "89", 1);
    ::setenv("MMAEMU_FAKE_CUDA_SMEM_OPTIN", "101376", 1);
    ::setenv("MMAEMU_FAKE_CUDA_UUID", "00112233445566778899aabbccddeef0", 1);
    const auto all = driver::devices();
    CHILD_CHECK(all.size() == 3);
    CHILD_CHECK(all[0].ordinal == 0 && all[2].ordinal == 2);
    CHILD_CHECK(all[0].cc == 89);
    CHILD_CHECK(all[0].smem_optin == 101376);
    CHILD_CHECK(all[0].sm_count == 132);
    CHILD_CHECK(all[0].max_grid_y == 65535);
    CHILD_CHECK(all[0].driver_version == 13000);
    CHILD_CHECK(all[0].uuid == "00112233445566778899aabbccddeef0");
    CHILD_CHECK(all[1].uuid == "00112233445566778899aabbccddeef1");
    CHILD_CHECK(all[0].name == "mmaemu fake GPU sm_89");
    CHILD_CHECK(driver::api().library == MMAEMU_FAKE_CUDA_PATH);
  });
}

TEST(DriverApi, DeviceOrdinalOutOfRangeIsAValueError) {
  ASSERT_EQ(driver::visible_device_count(), 2);
  EXPECT_THROW(driver::device(2), mmaemu::ValueError);
  EXPECT_THROW(driver::device(-1), mmaemu::ValueError);
  try {
    driver::device(7);
  } catch (const mmaemu::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
}

TEST(DriverApi, ErrorsNameTheCallAndTheResult) {
  ASSERT_GT(driver::visible_device_count(), 0);
  try {
    driver::check(driver::kCudaErrorInvalidValue, "cuMemAlloc");
    FAIL() << "no exception";
  } catch (const driver::DriverError& e) {
    EXPECT_EQ(e.code(), 1);
    EXPECT_EQ(e.call(), "cuMemAlloc");
    EXPECT_EQ(e.error_name(), "CUDA_ERROR_INVALID_VALUE");
    const std::string what = e.what();
    EXPECT_NE(what.find("cuMemAlloc"), std::string::npos) << what;
    EXPECT_NE(what.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(driver::check(driver::kCudaSuccess, "cuInit"));
  EXPECT_EQ(driver::error_name(driver::kCudaErrorInvalidImage), "CUDA_ERROR_INVALID_IMAGE");
}

TEST(DriverApi, PrimaryContextsAreCurrentAndDistinctPerDevice) {
  const auto& d0 = driver::device(0);
  const auto& d1 = driver::device(1);
  const driver::CUcontext c0 = driver::make_current(d0);
  const driver::CUcontext c1 = driver::make_current(d1);
  EXPECT_NE(c0, c1);
  EXPECT_NE(driver::context_id(c0), driver::context_id(c1));
  driver::CUcontext current = nullptr;
  ASSERT_EQ(driver::api().cuCtxGetCurrent(&current), 0);
  EXPECT_EQ(current, c1);
  EXPECT_EQ(driver::make_current(d0), c0); // retained once, reused
}

TEST(DriverApi, FakeRefusesLargeDynamicSmemWithoutOptIn) {
  // The loader relies on the driver's rule; the fake must enforce it like a real driver.
  const auto& d = driver::device(0);
  driver::make_current(d);
  const driver::Api& a = driver::api();
  driver::CUmodule mod = nullptr;
  const std::string image = mmaemu::testing::fake_fatbin_image("h4");
  ASSERT_EQ(a.cuModuleLoadData(&mod, image.data()), 0);
  driver::CUfunction fn = nullptr;
  ASSERT_EQ(a.cuModuleGetFunction(&fn, mod, "mmaemu_h4_e4m3e4m3"), 0);
  driver::CUdeviceptr buf = 0;
  ASSERT_EQ(a.cuMemAlloc(&buf, 4096), 0);
  driver::CUdeviceptr pa = buf, pb = buf, pc = buf;
  int m = 1, n = 1, k = 16;
  void* params[] = {&pa, &pb, &pc, &m, &n, &k};
  EXPECT_EQ(a.cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 73728, nullptr, params, nullptr),
            driver::kCudaErrorInvalidValue);
  EXPECT_EQ(a.cuFuncSetAttribute(fn, driver::kFuncAttrMaxDynamicSharedSizeBytes, 73728), 0);
  EXPECT_EQ(a.cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 73728, nullptr, params, nullptr), 0);
  EXPECT_EQ(a.cuFuncSetAttribute(fn, driver::kFuncAttrMaxDynamicSharedSizeBytes, 1 << 20),
            driver::kCudaErrorInvalidValue);
  EXPECT_EQ(a.cuMemFree(buf), 0);
  EXPECT_EQ(a.cuModuleUnload(mod), 0);
  EXPECT_EQ(a.cuModuleLoadData(&mod, "not an image"), driver::kCudaErrorInvalidImage);
}

TEST(DriverApi, EventsMeasureElapsedTime) {
  driver::make_current(driver::device(0));
  const driver::Api& a = driver::api();
  driver::CUevent e0 = nullptr, e1 = nullptr;
  ASSERT_EQ(a.cuEventCreate(&e0, 0), 0);
  ASSERT_EQ(a.cuEventCreate(&e1, 0), 0);
  ASSERT_EQ(a.cuEventRecord(e0, nullptr), 0);
  ASSERT_EQ(a.cuEventRecord(e1, nullptr), 0);
  ASSERT_EQ(a.cuEventSynchronize(e1), 0);
  float ms = -1;
  ASSERT_EQ(a.cuEventElapsedTime(&ms, e0, e1), 0);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(a.cuEventDestroy(e0), 0);
  EXPECT_EQ(a.cuEventDestroy(e1), 0);
}

} // namespace
