// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_devices.hpp"

#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/registry.hpp"

namespace mmaemu::harness {

CudaProbe probe_cuda() {
  CudaProbe p;
  // The kernels' driver ladder (MMAEMU_LIBCUDA_PATH, MMAEMU_DISABLE_CUDA), so that a tier sees
  // the devices the backends will use.
  p.reason = kernels::cuda_unavailable_reason();
  if (!p.reason.empty())
    return p;
  try {
    for (const auto& d : kernels::driver::devices()) {
      CudaDevice c;
      c.index = d.ordinal;
      c.name = d.name;
      c.major = d.cc / 10;
      c.minor = d.cc % 10;
      p.driver_version = d.driver_version;
      p.devices.push_back(c);
    }
  } catch (const std::exception& e) {
    p.reason = std::string("no CUDA device could be opened: ") + e.what();
    p.devices.clear();
    return p;
  }
  p.available = !p.devices.empty();
  if (!p.available)
    p.reason = "no CUDA device is visible";
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
