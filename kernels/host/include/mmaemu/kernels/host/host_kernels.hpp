// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The kernels of kernels/cuda/ compiled as C++ against the host shim: the same sources as
// the fatbins, run on the CPU for the tests (and by the fake libcuda of the loader tests).
// Their bits match a GPU's only as far as the shim's intrinsics are exact; a GPU run is
// still the proof.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mmaemu::kernels::host {

// ABI v1: A [M][K], B [N][K] E4M3 codes, C [M][N] binary32.
using KernelEntry = void (*)(const unsigned char* A, const unsigned char* B, float* C, int M, int N,
                             int K);

// The host build of mmaemu_<name>_e4m3e4m3 for name v1, v4, v9, tc3, h1 or h4; nullptr otherwise.
KernelEntry host_kernel(std::string_view name);

// The host build of an ABI symbol ("mmaemu_v1_e4m3e4m3"); nullptr for any other name.
KernelEntry host_kernel_by_symbol(std::string_view symbol);

// The dynamic shared memory the kernel's source lays out (0 for static-only kernels), so
// that its KernelSpec can be checked against the source; -1 for an unknown name.
long host_kernel_dynamic_smem(std::string_view name);

struct HostLaunch {
  int tile_m = 64;
  int tile_n = 64;
  int threads = 256;
  std::size_t dynamic_smem = 0;
  bool descending = false; // threads of a block in descending order between barriers
  int mma_arch = 0;        // the architecture mma.sync emulates (launch.hpp); 0: the default
};

// Launches kernel `entry` as a GPU would: grid (ceil(N / tile_n), ceil(M / tile_m)), 1-D
// blocks of `threads`, `dynamic_smem` bytes; blocks spread over `workers` host threads.
void run_host_kernel(KernelEntry entry, const HostLaunch& shape, const std::uint8_t* A,
                     const std::uint8_t* B, float* C, int M, int N, int K, unsigned workers = 0);

} // namespace mmaemu::kernels::host
