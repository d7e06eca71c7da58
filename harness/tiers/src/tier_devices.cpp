// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_devices.hpp"

#include <dlfcn.h>

namespace mmaemu::harness {

namespace {

// The few driver API entry points needed, with the driver's C types spelt as plain ints.
using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);

constexpr int kAttrCapabilityMajor = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCapabilityMinor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

} // namespace

CudaProbe probe_cuda() {
  CudaProbe p;
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    p.reason =
        "no CUDA driver: libcuda.so.1 cannot be loaded (" + std::string(e ? e : "not found") + ")";
    return p;
  }
  // The library stays loaded: the driver does not support being unloaded and reloaded.
  auto sym = [&](const char* name) { return ::dlsym(lib, name); };
  auto init = reinterpret_cast<CuInit>(sym("cuInit"));
  auto version = reinterpret_cast<CuDriverGetVersion>(sym("cuDriverGetVersion"));
  auto count = reinterpret_cast<CuDeviceGetCount>(sym("cuDeviceGetCount"));
  auto get = reinterpret_cast<CuDeviceGet>(sym("cuDeviceGet"));
  auto name = reinterpret_cast<CuDeviceGetName>(sym("cuDeviceGetName"));
  auto attr = reinterpret_cast<CuDeviceGetAttribute>(sym("cuDeviceGetAttribute"));
  if (!init || !version || !count || !get || !name || !attr) {
    p.reason = "libcuda.so.1 lacks the driver API entry points (cuInit, cuDeviceGetCount, ...)";
    return p;
  }
  if (const int rc = init(0); rc != 0) {
    p.reason = "no CUDA device: cuInit failed (CUresult " + std::to_string(rc) + ")";
    return p;
  }
  version(&p.driver_version);
  int n = 0;
  if (count(&n) != 0 || n <= 0) {
    p.reason = "no CUDA device: the driver reports none (CUDA_VISIBLE_DEVICES?)";
    return p;
  }
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    if (get(&dev, i) != 0)
      continue;
    CudaDevice d;
    d.index = i;
    char buf[256] = {};
    if (name(buf, sizeof buf - 1, dev) == 0)
      d.name = buf;
    attr(&d.major, kAttrCapabilityMajor, dev);
    attr(&d.minor, kAttrCapabilityMinor, dev);
    p.devices.push_back(d);
  }
  p.available = !p.devices.empty();
  if (!p.available)
    p.reason = "no CUDA device could be opened";
  return p;
}

nlohmann::json gpu_json(const CudaProbe& probe) {
  if (!probe.available)
    return {{"present", false}, {"reason", probe.reason}};
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : probe.devices) {
    devs.push_back({{"index", d.index},
                    {"name", d.name},
                    {"capability", std::to_string(d.major) + "." + std::to_string(d.minor)}});
  }
  return {{"present", true}, {"driver_version", probe.driver_version}, {"devices", devs}};
}

} // namespace mmaemu::harness
