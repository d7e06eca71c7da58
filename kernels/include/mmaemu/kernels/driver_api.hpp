// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The CUDA driver API, opened with dlopen only: mmaemu has no link-time CUDA dependency and
// includes no CUDA header. The few types and constants it needs are declared here with the
// numeric values of cuda.h (CUDA 13); the functions are looked up under the names cuda.h
// maps them to (cuMemAlloc -> cuMemAlloc_v2, ...).
//
// Library ladder (seed 000, "Environment variables"): when MMAEMU_LIBCUDA_PATH is set only
// that path is tried; otherwise libcuda.so.1, then /usr/lib/wsl/lib/libcuda.so.1.
// MMAEMU_DISABLE_CUDA=1 is checked first, before any dlopen: the driver is then never
// touched. Nothing is loaded before the first call that needs the driver.

#include <cstddef>
#include <string>
#include <vector>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::kernels::driver {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;
struct CUuuid {
  unsigned char bytes[16];
};

// CUresult values (cuda.h, enum cudaError_enum).
inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorInvalidValue = 1;
inline constexpr CUresult kCudaErrorOutOfMemory = 2;
inline constexpr CUresult kCudaErrorNotInitialized = 3;
inline constexpr CUresult kCudaErrorNoDevice = 100;
inline constexpr CUresult kCudaErrorInvalidDevice = 101;
inline constexpr CUresult kCudaErrorInvalidImage = 200;
inline constexpr CUresult kCudaErrorInvalidContext = 201;
inline constexpr CUresult kCudaErrorInvalidHandle = 400;
inline constexpr CUresult kCudaErrorNotFound = 500;
inline constexpr CUresult kCudaErrorLaunchOutOfResources = 701;
inline constexpr CUresult kCudaErrorUnknown = 999;

// CUdevice_attribute values.
inline constexpr int kAttrMaxGridDimY = 6;
inline constexpr int kAttrClockRate = 13; // kHz
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
// CUfunction_attribute value.
inline constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
// Dynamic shared memory a launch may use without opting in.
inline constexpr int kDefaultDynamicSmemLimit = 48 * 1024;

// The entry points mmaemu uses, resolved once per process. cuCtxGetId is null on drivers
// older than CUDA 12.0 (context_id() then falls back to the context pointer).
struct Api {
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice dev) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attrib, CUdevice dev) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid* uuid, CUdevice dev) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice dev) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext ctx) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext* ctx) = nullptr;
  CUresult (*cuCtxGetId)(CUcontext ctx, unsigned long long* id) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* fn, CUmodule module, const char* name) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction fn, int attrib, int value) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, std::size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr ptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, std::size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, std::size_t bytes) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, std::size_t count) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params,
                             void** extra) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;
  std::string library; // the path or name that dlopen accepted
};

// A driver call that returned an error: the call, the CUresult, its name and its text.
class DriverError : public MmaemuError {
public:
  DriverError(std::string call, CUresult code, std::string error_name, std::string text);
  const char* class_name() const noexcept override { return "DriverError"; }
  CUresult code() const noexcept { return code_; }
  const std::string& call() const noexcept { return call_; }
  const std::string& error_name() const noexcept { return name_; }
  const std::string& error_text() const noexcept { return text_; }

private:
  std::string call_;
  CUresult code_;
  std::string name_;
  std::string text_;
};

// One visible device, as the loader and the registry see it.
struct Device {
  int ordinal = 0;
  std::string name;
  int cc = 0;         // major * 10 + minor
  int sm_count = 0;   // multiprocessors
  int smem_optin = 0; // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, bytes
  int max_grid_y = 65535;
  int clock_khz = 0;
  std::string uuid;       // 32 lower-case hex digits
  int driver_version = 0; // cuDriverGetVersion (13000 for 13.0)
};

// True when MMAEMU_DISABLE_CUDA=1 (read at each call).
bool cuda_disabled();

// Whether a driver library has been dlopen'ed by this process (tests check that nothing
// loads it when CUDA is disabled or never needed).
bool driver_loaded();

// The loaded and initialised (cuInit) driver. Throws BackendUnavailableError naming every
// library tried and why, or MMAEMU_DISABLE_CUDA=1 (then nothing is opened). A failed load is
// not remembered: the next call reads the environment and tries again; a successful one is
// kept for the life of the process. Thread-safe.
const Api& api();

// Like api(), but nullptr instead of throwing; `why` (if given) receives the reason.
const Api* try_api(std::string* why = nullptr);

// Throws DriverError for a failing `result` of `call` (its name, e.g. "cuMemAlloc").
void check(CUresult result, const char* call);

// The number of visible devices: 0 when MMAEMU_DISABLE_CUDA=1 (checked first, before any
// dlopen), when no driver library can be opened, or when cuInit or cuDeviceGetCount fails.
// Never throws.
int visible_device_count();

// The device at `ordinal` with its attributes (queried once, then cached). Throws
// BackendUnavailableError when no driver is usable, ValueError naming the ordinal when it is
// not below visible_device_count(), DriverError when a query fails.
const Device& device(int ordinal);

// Every visible device (empty when none). Never throws for an absent driver.
std::vector<Device> devices();

// Makes the primary context of `device` current on the calling thread (retained once per
// process and never released) and returns it. Throws DriverError.
CUcontext make_current(const Device& device);

// A process-unique id of `ctx`: cuCtxGetId where the driver has it, otherwise the context
// pointer value.
unsigned long long context_id(CUcontext ctx);

// "CUDA_ERROR_INVALID_VALUE" for 1 (through cuGetErrorName when the driver is loaded,
// otherwise "CUresult N").
std::string error_name(CUresult result);

} // namespace mmaemu::kernels::driver
