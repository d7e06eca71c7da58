// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Backend selection with the CUDA kernels (seed 000, "Selection"):
//   - "reference", or "auto" when MMAEMU_DISABLE_CUDA=1 or no CUDA device is visible, gives
//     the reference (an explicit "cuda..." raises BackendUnavailableError instead); these
//     paths never touch the driver when CUDA is disabled;
//   - otherwise the kernels of the call's preset are tried by priority (v4 20, v1 10 for ada;
//     h4 20, h1 10 for hopper). By-design skips are silent (another preset or format pair, a
//     capability below min_cc, too little opt-in shared memory, a gated kernel outside
//     validated_on unless MMAEMU_ALLOW_GATED_KERNELS=1 or requested by name). A module that
//     cannot be loaded or a failed gate is a failure: the next kernel is tried;
//   - with none left, "auto" uses the reference and "cuda" raises. One BackendFallbackWarning
//     per (device, reason) and process names every kernel that failed, and one when the
//     selected kernel was compiled with NVRTC because its fatbin was unusable.

#include <string>
#include <vector>

#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/kernels/gates.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"

namespace mmaemu::kernels {

// Where a kernel stands on one device.
struct KernelStatus {
  std::string kernel;  // "v4"
  std::string backend; // "cuda:v4"
  std::string preset;
  int device = -1;             // ordinal, -1 when no device was examined
  std::string device_name;     // "NVIDIA H200"
  int cc = 0;                  // major * 10 + minor
  bool available = false;      // loaded and every gate passed on that device
  bool validated_here = false; // cc is in the kernel's validated_on
  bool tested = false;         // the gates ran (or a cached verdict was used)
  std::string source;          // "fatbin" or "nvrtc" once loaded
  std::string image_sha256;
  std::string fatbin_reason; // why the fatbin was not used (NVRTC builds)
  std::string skip;          // a by-design skip (silent)
  std::string failure;       // why loading or a gate failed
  std::vector<GateResult> gates;
};

// Why no CUDA kernel can run here ("MMAEMU_DISABLE_CUDA=1", "no CUDA driver: ...", "no CUDA
// device is visible"), or empty when a device is visible. MMAEMU_DISABLE_CUDA is checked
// before anything is loaded.
std::string cuda_unavailable_reason();

// The status of each named kernel (all of kernel_specs() when `kernels` is empty) on device
// `ordinal`: loads it and runs its gates (cached verdicts unless `force`). Without a device
// every status says why. Unknown names throw ValueError.
std::vector<KernelStatus> kernel_statuses(int ordinal, const std::vector<std::string>& kernels = {},
                                          bool force = false);

// The selector described above (for mmaemu::set_backend_selector). A request without a preset
// only checks that the name is valid and, for an explicit "cuda...", that a device is
// visible; its result names the backend requested.
ChainBackend select_backend_with_cuda(const BackendRequest& request);

// Installs select_backend_with_cuda as the process-wide selector. Touches no driver.
void install_cuda_backend();

} // namespace mmaemu::kernels
