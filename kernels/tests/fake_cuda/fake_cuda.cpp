// SPDX-License-Identifier: BSD-2-Clause
// libmmaemu_fake_cuda.so: the subset of the CUDA driver API that libmmaemu_kernels uses, with
// the driver's C ABI and symbol names, for tests on machines without a GPU. Devices are
// simulated; "device memory" is host memory; any module image the driver would recognise by
// its first bytes (an ELF cubin, a fatbin, or a test image starting with MMAEMU-FAKE-IMAGE)
// loads, and its functions are the ABI v1 kernels compiled against the host shim, run by
// cuLaunchKernel through mmaemu::kernels::host::launch. Launches are synchronous.
//
// Environment (read at cuInit):
//   MMAEMU_FAKE_CUDA_DEVICES      number of devices (default 1; 0: cuInit fails with
//                                 CUDA_ERROR_NO_DEVICE)
//   MMAEMU_FAKE_CUDA_CC           compute capability of every device, major*10+minor (90)
//   MMAEMU_FAKE_CUDA_SMEM_OPTIN   opt-in shared memory per block in bytes (232448)
//   MMAEMU_FAKE_CUDA_UUID         32 hex digits, device 0's UUID (others: last byte + ordinal)
//   MMAEMU_FAKE_CUDA_MAX_GRID_Y   grid.y limit (65535)
//   MMAEMU_FAKE_CUDA_NAME         every device's name (default "mmaemu fake GPU sm_<cc>")
//   MMAEMU_FAKE_CUDA_SMS          multiprocessors per device (132)
// and at each launch:
//   MMAEMU_FAKE_CUDA_WRONG=1      flips the lowest bit of C[0] after the kernel ran
// A launch's mma.sync emulates the device's compute capability where the host shim has a model
// of it (sm_70 ... sm_90), else sm_89; $MMAEMU_SHIM_MMA_ARCH, when set, wins.
// Counters for tests: the mmaemu_fake_cuda_* functions at the end (int (*)(), except
// last_image_size).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/host/host_kernels.hpp"
#include "mmaemu/kernels/host/launch.hpp"

using namespace mmaemu::kernels::driver;

// The opaque handle types of driver_api.hpp, defined here.
namespace mmaemu::kernels::driver {
struct CUctx_st {
  int device = 0;
  unsigned long long id = 0;
  int retains = 0;
};
struct CUmod_st {
  std::size_t image_size = 0;
  CUctx_st* ctx = nullptr;
};
struct CUfunc_st {
  std::string symbol;
  mmaemu::kernels::host::KernelEntry entry = nullptr;
  int max_dynamic_smem = kDefaultDynamicSmemLimit;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point at{};
  bool recorded = false;
};
} // namespace mmaemu::kernels::driver

namespace {

constexpr CUresult kLaunchFailed = 719;
constexpr CUresult kIllegalAddress = 700;

struct FakeDevice {
  int cc = 90;
  int sm_count = 132;
  std::string name;
  int smem_optin = 232448;
  int max_grid_y = 65535;
  unsigned char uuid[16] = {};
  CUctx_st primary;
};

struct State {
  std::mutex mu;
  bool initialised = false;
  std::vector<std::unique_ptr<FakeDevice>> devices;
  std::map<std::uintptr_t, std::size_t> allocations; // base -> bytes
  std::map<CUmod_st*, std::vector<std::unique_ptr<CUfunc_st>>> modules;
  std::atomic<int> launches{0};
  std::atomic<unsigned> max_grid_y_seen{0};
  std::atomic<int> module_loads{0};
  std::atomic<unsigned long long> last_image_size{0};
  std::atomic<int> set_attribute_calls{0};
};

State& state() {
  static State* s = new State;
  return *s;
}

thread_local CUctx_st* t_current = nullptr;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return (end && *end == '\0') ? static_cast<int>(x) : fallback;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// Compares the image's first bytes with `magic` one at a time, stopping at the first
// difference, so a short NUL-terminated buffer is never read past its terminator.
bool starts_with(const unsigned char* p, const char* magic, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<unsigned char>(magic[i]))
      return false;
  }
  return true;
}

// The size of a recognised image, 0 for anything else.
std::size_t image_size(const void* image) {
  const auto* p = static_cast<const unsigned char*>(image);
  static const char kFake[] = "MMAEMU-FAKE-IMAGE";
  if (starts_with(p, kFake, sizeof kFake - 1))
    return std::strlen(reinterpret_cast<const char*>(p));
  if (starts_with(p,
                  "\x7f"
                  "ELF\x02",
                  5)) {
    // ELF64: the section or the program header table ends the file.
    std::uint64_t phoff = 0, shoff = 0;
    std::uint16_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
    std::memcpy(&phoff, p + 0x20, 8);
    std::memcpy(&shoff, p + 0x28, 8);
    std::memcpy(&phentsize, p + 0x36, 2);
    std::memcpy(&phnum, p + 0x38, 2);
    std::memcpy(&shentsize, p + 0x3A, 2);
    std::memcpy(&shnum, p + 0x3C, 2);
    const std::uint64_t sh_end = shoff + std::uint64_t{shentsize} * shnum;
    const std::uint64_t ph_end = phoff + std::uint64_t{phentsize} * phnum;
    return static_cast<std::size_t>(sh_end > ph_end ? sh_end : ph_end);
  }
  if (starts_with(p, "\x50\xed\x55\xba", 4)) {
    std::uint16_t header = 0;
    std::uint64_t body = 0;
    std::memcpy(&header, p + 6, 2);
    std::memcpy(&body, p + 8, 8);
    return static_cast<std::size_t>(header + body);
  }
  return 0;
}

// Whether [ptr, ptr + bytes) lies inside one allocation (under s.mu).
bool inside_allocation(const State& s, std::uintptr_t ptr, std::size_t bytes) {
  auto it = s.allocations.upper_bound(ptr);
  if (it == s.allocations.begin())
    return false;
  --it;
  return ptr >= it->first && ptr + bytes <= it->first + it->second;
}

CUresult need_context() {
  return t_current ? kCudaSuccess : kCudaErrorInvalidContext;
}

FakeDevice* device_at(CUdevice d) {
  State& s = state();
  if (d < 0 || static_cast<std::size_t>(d) >= s.devices.size())
    return nullptr;
  return s.devices[static_cast<std::size_t>(d)].get();
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return kCudaErrorInvalidValue;
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.initialised)
    return s.devices.empty() ? kCudaErrorNoDevice : kCudaSuccess;
  s.initialised = true;
  const int n = env_int("MMAEMU_FAKE_CUDA_DEVICES", 1);
  unsigned char uuid[16] = {0x4d, 0x4d, 0x41, 0x45, 0x4d, 0x55, 0x2d, 0x46,
                            0x41, 0x4b, 0x45, 0x2d, 0x47, 0x50, 0x55, 0x00};
  if (const char* u = std::getenv("MMAEMU_FAKE_CUDA_UUID"); u && std::strlen(u) == 32) {
    bool ok = true;
    unsigned char parsed[16];
    for (int i = 0; i < 16; ++i) {
      const int hi = hex_digit(u[2 * i]), lo = hex_digit(u[2 * i + 1]);
      ok = ok && hi >= 0 && lo >= 0;
      parsed[i] = static_cast<unsigned char>(((hi & 15) << 4) | (lo & 15));
    }
    if (ok)
      std::memcpy(uuid, parsed, 16);
  }
  for (int i = 0; i < n; ++i) {
    auto d = std::make_unique<FakeDevice>();
    d->cc = env_int("MMAEMU_FAKE_CUDA_CC", 90);
    d->smem_optin = env_int("MMAEMU_FAKE_CUDA_SMEM_OPTIN", 232448);
    d->max_grid_y = env_int("MMAEMU_FAKE_CUDA_MAX_GRID_Y", 65535);
    d->sm_count = env_int("MMAEMU_FAKE_CUDA_SMS", 132);
    const char* name = std::getenv("MMAEMU_FAKE_CUDA_NAME");
    d->name = name && *name ? name : "mmaemu fake GPU sm_" + std::to_string(d->cc);
    std::memcpy(d->uuid, uuid, 16);
    d->uuid[15] = static_cast<unsigned char>(uuid[15] + i);
    d->primary.device = i;
    d->primary.id = 1000u + static_cast<unsigned>(i);
    s.devices.push_back(std::move(d));
  }
  return s.devices.empty() ? kCudaErrorNoDevice : kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* v) {
  if (!v)
    return kCudaErrorInvalidValue;
  *v = 13000;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int* n) {
  State& s = state();
  if (!s.initialised)
    return kCudaErrorNotInitialized;
  if (!n)
    return kCudaErrorInvalidValue;
  *n = static_cast<int>(s.devices.size());
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (!d)
    return kCudaErrorInvalidValue;
  if (!device_at(ordinal))
    return kCudaErrorInvalidDevice;
  *d = ordinal;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  FakeDevice* dev = device_at(d);
  if (!dev)
    return kCudaErrorInvalidDevice;
  if (!name || len <= 0)
    return kCudaErrorInvalidValue;
  std::strncpy(name, dev->name.c_str(), static_cast<std::size_t>(len));
  name[len - 1] = '\0';
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetAttribute(int* value, int attrib,
                                                                     CUdevice d) {
  FakeDevice* dev = device_at(d);
  if (!dev)
    return kCudaErrorInvalidDevice;
  if (!value)
    return kCudaErrorInvalidValue;
  switch (attrib) {
  case kAttrComputeCapabilityMajor:
    *value = dev->cc / 10;
    return kCudaSuccess;
  case kAttrComputeCapabilityMinor:
    *value = dev->cc % 10;
    return kCudaSuccess;
  case kAttrMultiprocessorCount:
    *value = dev->sm_count;
    return kCudaSuccess;
  case kAttrMaxSharedMemoryPerBlockOptin:
    *value = dev->smem_optin;
    return kCudaSuccess;
  case kAttrMaxGridDimY:
    *value = dev->max_grid_y;
    return kCudaSuccess;
  case kAttrClockRate:
    *value = 1980000;
    return kCudaSuccess;
  default:
    return kCudaErrorInvalidValue;
  }
}

__attribute__((visibility("default"))) CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice d) {
  FakeDevice* dev = device_at(d);
  if (!dev)
    return kCudaErrorInvalidDevice;
  if (!uuid)
    return kCudaErrorInvalidValue;
  std::memcpy(uuid->bytes, dev->uuid, 16);
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice d) {
  return cuDeviceGetUuid_v2(uuid, d);
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx,
                                                                         CUdevice d) {
  FakeDevice* dev = device_at(d);
  if (!dev)
    return kCudaErrorInvalidDevice;
  if (!ctx)
    return kCudaErrorInvalidValue;
  std::lock_guard lock(state().mu);
  ++dev->primary.retains;
  *ctx = &dev->primary;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  FakeDevice* dev = device_at(d);
  if (!dev)
    return kCudaErrorInvalidDevice;
  std::lock_guard lock(state().mu);
  if (dev->primary.retains <= 0)
    return kCudaErrorInvalidContext;
  --dev->primary.retains;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxSetCurrent(CUcontext ctx) {
  t_current = ctx;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxGetCurrent(CUcontext* ctx) {
  if (!ctx)
    return kCudaErrorInvalidValue;
  *ctx = t_current;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxGetId(CUcontext ctx, unsigned long long* id) {
  if (!id)
    return kCudaErrorInvalidValue;
  if (!ctx)
    ctx = t_current;
  if (!ctx)
    return kCudaErrorInvalidContext;
  *id = ctx->id;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleLoadData(CUmodule* module,
                                                                 const void* image) {
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  if (!module || !image)
    return kCudaErrorInvalidValue;
  const std::size_t size = image_size(image);
  if (size == 0)
    return kCudaErrorInvalidImage;
  State& s = state();
  auto* m = new CUmod_st{size, t_current};
  {
    std::lock_guard lock(s.mu);
    s.modules[m];
  }
  ++s.module_loads;
  s.last_image_size = size;
  *module = m;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleUnload(CUmodule module) {
  State& s = state();
  std::lock_guard lock(s.mu);
  auto it = s.modules.find(module);
  if (it == s.modules.end())
    return kCudaErrorInvalidHandle;
  s.modules.erase(it);
  delete module;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module,
                                                                    const char* name) {
  if (!fn || !name)
    return kCudaErrorInvalidValue;
  State& s = state();
  std::lock_guard lock(s.mu);
  auto it = s.modules.find(module);
  if (it == s.modules.end())
    return kCudaErrorInvalidHandle;
  const auto entry = mmaemu::kernels::host::host_kernel_by_symbol(name);
  if (!entry)
    return kCudaErrorNotFound;
  auto f = std::make_unique<CUfunc_st>();
  f->symbol = name;
  f->entry = entry;
  *fn = f.get();
  it->second.push_back(std::move(f));
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuFuncSetAttribute(CUfunction fn, int attrib,
                                                                   int value) {
  if (!fn)
    return kCudaErrorInvalidHandle;
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  if (attrib != kFuncAttrMaxDynamicSharedSizeBytes)
    return kCudaErrorInvalidValue;
  FakeDevice* dev = device_at(t_current->device);
  if (value < 0 || !dev || value > dev->smem_optin)
    return kCudaErrorInvalidValue;
  fn->max_dynamic_smem = value;
  ++state().set_attribute_calls;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* ptr, std::size_t bytes) {
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  if (!ptr || bytes == 0)
    return kCudaErrorInvalidValue;
  const std::size_t rounded = (bytes + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (!p)
    return kCudaErrorOutOfMemory;
  State& s = state();
  std::lock_guard lock(s.mu);
  s.allocations[reinterpret_cast<std::uintptr_t>(p)] = bytes;
  *ptr = reinterpret_cast<std::uintptr_t>(p);
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr ptr) {
  State& s = state();
  std::lock_guard lock(s.mu);
  auto it = s.allocations.find(static_cast<std::uintptr_t>(ptr));
  if (it == s.allocations.end())
    return kCudaErrorInvalidValue;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)));
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src,
                                                                std::size_t bytes) {
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    if (!inside_allocation(s, static_cast<std::uintptr_t>(dst), bytes))
      return kCudaErrorInvalidValue;
  }
  std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(dst)), src, bytes);
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src,
                                                                std::size_t bytes) {
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    if (!inside_allocation(s, static_cast<std::uintptr_t>(src), bytes))
      return kCudaErrorInvalidValue;
  }
  std::memcpy(dst, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(src)), bytes);
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v,
                                                              std::size_t count) {
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    if (!inside_allocation(s, static_cast<std::uintptr_t>(dst), count))
      return kCudaErrorInvalidValue;
  }
  std::memset(reinterpret_cast<void*>(static_cast<std::uintptr_t>(dst)), v, count);
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult
cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned smem, CUstream stream, void** params, void** extra) {
  if (CUresult r = need_context(); r != kCudaSuccess)
    return r;
  if (!fn || !fn->entry)
    return kCudaErrorInvalidHandle;
  if (stream != nullptr || extra != nullptr || params == nullptr)
    return kCudaErrorInvalidValue;
  FakeDevice* dev = device_at(t_current->device);
  if (!dev || gx == 0 || gy == 0 || gz == 0 || gx > 0x7fffffffu ||
      gy > static_cast<unsigned>(dev->max_grid_y) || gz > 65535u)
    return kCudaErrorInvalidValue;
  if (bx == 0 || by == 0 || bz == 0 || static_cast<std::uint64_t>(bx) * by * bz > 1024u)
    return kCudaErrorInvalidValue;
  // Like the driver: above 48 KiB only after cuFuncSetAttribute opted in, never above the
  // device's opt-in limit.
  if (smem > static_cast<unsigned>(fn->max_dynamic_smem) && smem > kDefaultDynamicSmemLimit)
    return kCudaErrorInvalidValue;
  if (smem > static_cast<unsigned>(dev->smem_optin))
    return kCudaErrorInvalidValue;

  CUdeviceptr pa = 0, pb = 0, pc = 0;
  int m = 0, n = 0, k = 0;
  std::memcpy(&pa, params[0], sizeof pa);
  std::memcpy(&pb, params[1], sizeof pb);
  std::memcpy(&pc, params[2], sizeof pc);
  std::memcpy(&m, params[3], sizeof m);
  std::memcpy(&n, params[4], sizeof n);
  std::memcpy(&k, params[5], sizeof k);
  if (m < 0 || n < 0 || k < 0)
    return kCudaErrorInvalidValue;
  State& s = state();
  {
    // A real GPU would fault (and lose the context) on these: the loader must never pass them.
    std::lock_guard lock(s.mu);
    const auto mm = static_cast<std::size_t>(m), nn = static_cast<std::size_t>(n),
               kk = static_cast<std::size_t>(k);
    if ((mm * kk != 0 && !inside_allocation(s, static_cast<std::uintptr_t>(pa), mm * kk)) ||
        (nn * kk != 0 && !inside_allocation(s, static_cast<std::uintptr_t>(pb), nn * kk)) ||
        (mm * nn != 0 && !inside_allocation(s, static_cast<std::uintptr_t>(pc), mm * nn * 4)))
      return kIllegalAddress;
  }
  const auto* A = reinterpret_cast<const unsigned char*>(static_cast<std::uintptr_t>(pa));
  const auto* B = reinterpret_cast<const unsigned char*>(static_cast<std::uintptr_t>(pb));
  auto* C = reinterpret_cast<float*>(static_cast<std::uintptr_t>(pc));
  const auto entry = fn->entry;
  // mma.sync emulates the device's own architecture when the shim has a model of it, unless
  // MMAEMU_SHIM_MMA_ARCH names another (a device whose tensor cores behave like another's).
  mmaemu::kernels::host::LaunchOptions options;
  const char* arch_env = std::getenv("MMAEMU_SHIM_MMA_ARCH");
  if (!arch_env || !*arch_env) {
    for (int a : mmaemu::kernels::host::kMmaArchs)
      options.mma_arch = a == dev->cc ? a : options.mma_arch;
  }
  try {
    mmaemu::kernels::host::launch(
        dim3(gx, gy, gz), dim3(bx, by, bz), smem, [&] { entry(A, B, C, m, n, k); }, options);
  } catch (...) {
    return kLaunchFailed;
  }
  ++s.launches;
  unsigned seen = s.max_grid_y_seen.load();
  while (gy > seen && !s.max_grid_y_seen.compare_exchange_weak(seen, gy)) {
  }
  const char* wrong = std::getenv("MMAEMU_FAKE_CUDA_WRONG");
  if (wrong && std::string(wrong) == "1" && m > 0 && n > 0) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, C, 4);
    bits ^= 1u;
    std::memcpy(C, &bits, 4);
  }
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxSynchronize() {
  return need_context();
}

__attribute__((visibility("default"))) CUresult cuEventCreate(CUevent* ev, unsigned flags) {
  if (!ev || flags > 0xF)
    return kCudaErrorInvalidValue;
  *ev = new CUevent_st;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventRecord(CUevent ev, CUstream) {
  if (!ev)
    return kCudaErrorInvalidHandle;
  ev->at = std::chrono::steady_clock::now();
  ev->recorded = true;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventSynchronize(CUevent ev) {
  return ev ? kCudaSuccess : kCudaErrorInvalidHandle;
}

__attribute__((visibility("default"))) CUresult cuEventElapsedTime_v2(float* ms, CUevent a,
                                                                      CUevent b) {
  if (!ms || !a || !b)
    return kCudaErrorInvalidHandle;
  if (!a->recorded || !b->recorded)
    return kCudaErrorInvalidHandle;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventElapsedTime(float* ms, CUevent a,
                                                                   CUevent b) {
  return cuEventElapsedTime_v2(ms, a, b);
}

__attribute__((visibility("default"))) CUresult cuEventDestroy_v2(CUevent ev) {
  if (!ev)
    return kCudaErrorInvalidHandle;
  delete ev;
  return kCudaSuccess;
}

__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult e, const char** s) {
  if (!s)
    return kCudaErrorInvalidValue;
  switch (e) {
  case kCudaSuccess:
    *s = "CUDA_SUCCESS";
    return kCudaSuccess;
  case kCudaErrorInvalidValue:
    *s = "CUDA_ERROR_INVALID_VALUE";
    return kCudaSuccess;
  case kCudaErrorOutOfMemory:
    *s = "CUDA_ERROR_OUT_OF_MEMORY";
    return kCudaSuccess;
  case kCudaErrorNotInitialized:
    *s = "CUDA_ERROR_NOT_INITIALIZED";
    return kCudaSuccess;
  case kCudaErrorNoDevice:
    *s = "CUDA_ERROR_NO_DEVICE";
    return kCudaSuccess;
  case kCudaErrorInvalidDevice:
    *s = "CUDA_ERROR_INVALID_DEVICE";
    return kCudaSuccess;
  case kCudaErrorInvalidImage:
    *s = "CUDA_ERROR_INVALID_IMAGE";
    return kCudaSuccess;
  case kCudaErrorInvalidContext:
    *s = "CUDA_ERROR_INVALID_CONTEXT";
    return kCudaSuccess;
  case kCudaErrorInvalidHandle:
    *s = "CUDA_ERROR_INVALID_HANDLE";
    return kCudaSuccess;
  case kCudaErrorNotFound:
    *s = "CUDA_ERROR_NOT_FOUND";
    return kCudaSuccess;
  case kIllegalAddress:
    *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
    return kCudaSuccess;
  case kLaunchFailed:
    *s = "CUDA_ERROR_LAUNCH_FAILED";
    return kCudaSuccess;
  default:
    *s = nullptr;
    return kCudaErrorInvalidValue;
  }
}

__attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult e, const char** s) {
  if (!s)
    return kCudaErrorInvalidValue;
  const char* name = nullptr;
  if (cuGetErrorName(e, &name) != kCudaSuccess)
    return kCudaErrorInvalidValue;
  *s = e == kCudaSuccess ? "no error" : "fake driver error";
  return kCudaSuccess;
}

// Test counters.
__attribute__((visibility("default"))) int mmaemu_fake_cuda_launches() {
  return state().launches.load();
}
__attribute__((visibility("default"))) int mmaemu_fake_cuda_max_grid_y_seen() {
  return static_cast<int>(state().max_grid_y_seen.load());
}
__attribute__((visibility("default"))) int mmaemu_fake_cuda_module_loads() {
  return state().module_loads.load();
}
__attribute__((visibility("default"))) unsigned long long mmaemu_fake_cuda_last_image_size() {
  return state().last_image_size.load();
}
__attribute__((visibility("default"))) int mmaemu_fake_cuda_set_attribute_calls() {
  return state().set_attribute_calls.load();
}
__attribute__((visibility("default"))) int mmaemu_fake_cuda_live_allocations() {
  State& s = state();
  std::lock_guard lock(s.mu);
  return static_cast<int>(s.allocations.size());
}
__attribute__((visibility("default"))) void mmaemu_fake_cuda_reset_counters() {
  State& s = state();
  s.launches = 0;
  s.max_grid_y_seen = 0;
  s.module_loads = 0;
  s.last_image_size = 0;
  s.set_attribute_calls = 0;
}

} // extern "C"
