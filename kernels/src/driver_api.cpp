// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/driver_api.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "library_ladder.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels::driver {

namespace {

struct State {
  std::mutex mu;
  std::atomic<bool> loaded{false}; // dlopen succeeded (the handle is never closed)
  std::unique_ptr<Api> api;        // set once the symbols resolved
  CUresult init_result = kCudaSuccess;
  bool initialised = false; // cuInit was called (init_result says how it went)
  std::map<int, std::unique_ptr<Device>> devices;
  std::map<int, CUcontext> primary;
};

State& state() {
  static State* s = new State; // never destroyed: handles outlive static destructors
  return *s;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::vector<std::string> candidates() {
  const std::string forced = env_or_empty("MMAEMU_LIBCUDA_PATH");
  if (!forced.empty())
    return {forced};
  return {"libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"};
}

template <class Fn> bool resolve(void* lib, const char* symbol, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  if (!out) {
    missing += missing.empty() ? "" : ", ";
    missing += symbol;
    return false;
  }
  return true;
}

template <class Fn> void resolve_optional(void* lib, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
}

// Resolves every entry point of `lib`; the names in `missing` otherwise.
std::unique_ptr<Api> resolve_all(void* lib, std::string& missing) {
  auto a = std::make_unique<Api>();
  resolve(lib, "cuInit", a->cuInit, missing);
  resolve(lib, "cuDriverGetVersion", a->cuDriverGetVersion, missing);
  resolve(lib, "cuDeviceGetCount", a->cuDeviceGetCount, missing);
  resolve(lib, "cuDeviceGet", a->cuDeviceGet, missing);
  resolve(lib, "cuDeviceGetName", a->cuDeviceGetName, missing);
  resolve(lib, "cuDeviceGetAttribute", a->cuDeviceGetAttribute, missing);
  resolve_optional(lib, "cuDeviceGetUuid_v2", a->cuDeviceGetUuid);
  if (!a->cuDeviceGetUuid)
    resolve(lib, "cuDeviceGetUuid", a->cuDeviceGetUuid, missing);
  resolve(lib, "cuDevicePrimaryCtxRetain", a->cuDevicePrimaryCtxRetain, missing);
  resolve(lib, "cuDevicePrimaryCtxRelease_v2", a->cuDevicePrimaryCtxRelease, missing);
  resolve(lib, "cuCtxSetCurrent", a->cuCtxSetCurrent, missing);
  resolve(lib, "cuCtxGetCurrent", a->cuCtxGetCurrent, missing);
  resolve_optional(lib, "cuCtxGetId", a->cuCtxGetId);
  resolve(lib, "cuModuleLoadData", a->cuModuleLoadData, missing);
  resolve(lib, "cuModuleUnload", a->cuModuleUnload, missing);
  resolve(lib, "cuModuleGetFunction", a->cuModuleGetFunction, missing);
  resolve(lib, "cuFuncSetAttribute", a->cuFuncSetAttribute, missing);
  resolve(lib, "cuMemAlloc_v2", a->cuMemAlloc, missing);
  resolve(lib, "cuMemFree_v2", a->cuMemFree, missing);
  resolve(lib, "cuMemcpyHtoD_v2", a->cuMemcpyHtoD, missing);
  resolve(lib, "cuMemcpyDtoH_v2", a->cuMemcpyDtoH, missing);
  resolve(lib, "cuMemsetD8_v2", a->cuMemsetD8, missing);
  resolve(lib, "cuLaunchKernel", a->cuLaunchKernel, missing);
  resolve(lib, "cuCtxSynchronize", a->cuCtxSynchronize, missing);
  resolve(lib, "cuEventCreate", a->cuEventCreate, missing);
  resolve(lib, "cuEventRecord", a->cuEventRecord, missing);
  resolve(lib, "cuEventSynchronize", a->cuEventSynchronize, missing);
  resolve_optional(lib, "cuEventElapsedTime_v2", a->cuEventElapsedTime);
  if (!a->cuEventElapsedTime)
    resolve(lib, "cuEventElapsedTime", a->cuEventElapsedTime, missing);
  resolve(lib, "cuEventDestroy_v2", a->cuEventDestroy, missing);
  resolve(lib, "cuGetErrorName", a->cuGetErrorName, missing);
  resolve(lib, "cuGetErrorString", a->cuGetErrorString, missing);
  return a;
}

std::string name_of(const Api* a, CUresult r) {
  const char* s = nullptr;
  if (a && a->cuGetErrorName && a->cuGetErrorName(r, &s) == kCudaSuccess && s)
    return s;
  return "CUresult " + std::to_string(r);
}

std::string text_of(const Api* a, CUresult r) {
  const char* s = nullptr;
  if (a && a->cuGetErrorString && a->cuGetErrorString(r, &s) == kCudaSuccess && s)
    return s;
  return "unknown error";
}

// Loads and initialises under s.mu; nullptr with `why` on failure.
const Api* load_locked(State& s, std::string& why) {
  if (!s.api) {
    std::string tried;
    detail::open_first_library(
        candidates(), tried, [&] { s.loaded = true; },
        [&](void* lib, const std::string& path) -> std::string {
          std::string missing;
          auto a = resolve_all(lib, missing);
          if (!missing.empty())
            return "missing symbols " + missing; // not a usable driver
          a->library = path;
          s.api = std::move(a);
          return {};
        });
    if (!s.api) {
      why = "no usable CUDA driver library (" + tried + ")";
      return nullptr;
    }
  }
  if (!s.initialised) {
    s.init_result = s.api->cuInit(0);
    s.initialised = true;
  }
  if (s.init_result != kCudaSuccess) {
    why = "cuInit failed in " + support::printable(s.api->library, 256) + ": " +
          name_of(s.api.get(), s.init_result) + " (" + text_of(s.api.get(), s.init_result) + ")";
    return nullptr;
  }
  return s.api.get();
}

std::string hex(const unsigned char* p, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

} // namespace

DriverError::DriverError(std::string call, CUresult code, std::string error_name, std::string text)
    : MmaemuError(call + " failed: " + error_name + " (" + text + ")"), call_(std::move(call)),
      code_(code), name_(std::move(error_name)), text_(std::move(text)) {}

bool cuda_disabled() {
  const char* v = std::getenv("MMAEMU_DISABLE_CUDA");
  return v && std::string(v) == "1";
}

bool driver_loaded() {
  return state().loaded.load();
}

const Api* try_api(std::string* why) {
  if (cuda_disabled()) {
    if (why)
      *why = "MMAEMU_DISABLE_CUDA=1";
    return nullptr;
  }
  State& s = state();
  std::lock_guard lock(s.mu);
  std::string reason;
  const Api* a = load_locked(s, reason);
  if (!a && why)
    *why = reason;
  return a;
}

const Api& api() {
  std::string why;
  const Api* a = try_api(&why);
  if (!a)
    throw BackendUnavailableError("CUDA driver unavailable: " + why);
  return *a;
}

std::string error_name(CUresult result) {
  State& s = state();
  std::lock_guard lock(s.mu);
  return name_of(s.api.get(), result);
}

void check(CUresult result, const char* call) {
  if (result == kCudaSuccess)
    return;
  const Api* a = nullptr;
  {
    State& s = state();
    std::lock_guard lock(s.mu);
    a = s.api.get();
  }
  throw DriverError(call, result, name_of(a, result), text_of(a, result));
}

int visible_device_count() {
  if (cuda_disabled())
    return 0;
  const Api* a = try_api();
  if (!a)
    return 0;
  int n = 0;
  if (a->cuDeviceGetCount(&n) != kCudaSuccess || n < 0)
    return 0;
  return n;
}

const Device& device(int ordinal) {
  const Api& a = api();
  const int n = visible_device_count();
  if (ordinal < 0 || ordinal >= n) {
    throw ValueError("device ordinal " + std::to_string(ordinal) + " is not visible (" +
                     std::to_string(n) + " device(s))");
  }
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    auto it = s.devices.find(ordinal);
    if (it != s.devices.end())
      return *it->second;
  }
  auto d = std::make_unique<Device>();
  d->ordinal = ordinal;
  CUdevice dev = 0;
  check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(a.cuDeviceGetName(name, static_cast<int>(sizeof name - 1), dev), "cuDeviceGetName");
  d->name = support::printable(name, 255);
  auto attr = [&](int which, const char* what) {
    int v = 0;
    check(a.cuDeviceGetAttribute(&v, which, dev), what);
    return v;
  };
  const int major = attr(kAttrComputeCapabilityMajor, "cuDeviceGetAttribute(CC major)");
  const int minor = attr(kAttrComputeCapabilityMinor, "cuDeviceGetAttribute(CC minor)");
  d->cc = major * 10 + minor;
  d->sm_count = attr(kAttrMultiprocessorCount, "cuDeviceGetAttribute(multiprocessor count)");
  d->smem_optin =
      attr(kAttrMaxSharedMemoryPerBlockOptin, "cuDeviceGetAttribute(max shared memory optin)");
  d->max_grid_y = attr(kAttrMaxGridDimY, "cuDeviceGetAttribute(max grid dim y)");
  d->clock_khz = attr(kAttrClockRate, "cuDeviceGetAttribute(clock rate)");
  CUuuid uuid{};
  check(a.cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
  d->uuid = hex(uuid.bytes, sizeof uuid.bytes);
  check(a.cuDriverGetVersion(&d->driver_version), "cuDriverGetVersion");
  std::lock_guard lock(s.mu);
  auto [it, inserted] = s.devices.emplace(ordinal, std::move(d));
  (void)inserted;
  return *it->second;
}

std::vector<Device> devices() {
  std::vector<Device> out;
  const int n = visible_device_count();
  for (int i = 0; i < n; ++i)
    out.push_back(device(i));
  return out;
}

CUcontext make_current(const Device& d) {
  const Api& a = api();
  State& s = state();
  CUcontext ctx = nullptr;
  {
    std::lock_guard lock(s.mu);
    auto it = s.primary.find(d.ordinal);
    if (it != s.primary.end())
      ctx = it->second;
  }
  if (!ctx) {
    CUdevice dev = 0;
    check(a.cuDeviceGet(&dev, d.ordinal), "cuDeviceGet");
    check(a.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    std::lock_guard lock(s.mu);
    auto [it, inserted] = s.primary.emplace(d.ordinal, ctx);
    if (!inserted) {
      // Another thread retained it first: keep one retain count.
      a.cuDevicePrimaryCtxRelease(dev);
      ctx = it->second;
    }
  }
  CUcontext current = nullptr;
  check(a.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != ctx)
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return ctx;
}

unsigned long long context_id(CUcontext ctx) {
  const Api& a = api();
  if (a.cuCtxGetId) {
    unsigned long long id = 0;
    if (a.cuCtxGetId(ctx, &id) == kCudaSuccess)
      return id;
  }
  return static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(ctx));
}

} // namespace mmaemu::kernels::driver
