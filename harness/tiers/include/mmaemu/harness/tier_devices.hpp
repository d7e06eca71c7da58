// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Which CUDA devices this machine has, asked of the driver through the kernels library's
// dlopen ladder (MMAEMU_LIBCUDA_PATH, MMAEMU_DISABLE_CUDA), so that mmaemu neither links nor
// needs CUDA.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mmaemu::harness {

struct CudaDevice {
  int index = 0;
  std::string name;
  int major = 0, minor = 0; // compute capability
};

struct CudaProbe {
  bool available = false;
  std::string reason;     // why not, when !available
  int driver_version = 0; // e.g. 12080
  std::vector<CudaDevice> devices;
};

// Loads the driver, cuInit(0), lists the devices. Never throws.
CudaProbe probe_cuda();

// For logs: {"present": false, "reason"} or {"present": true, "driver_version",
// "devices": [{"index", "name", "capability": "8.9"}]}.
nlohmann::json gpu_json(const CudaProbe& probe);

} // namespace mmaemu::harness
