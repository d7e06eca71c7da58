// SPDX-License-Identifier: BSD-2-Clause
// The six kernel sources, compiled here as C++ against the host shim.
#include "mmaemu/kernels/host/cuda_shim.hpp"

// clang-format off: the shim must come first.
#include "h1.cu"
#include "h4.cu"
#include "tc3.cu"
#include "v1.cu"
#include "v4.cu"
#include "v9.cu"
// clang-format on

#include "mmaemu/kernels/host/host_kernels.hpp"
#include "mmaemu/kernels/host/launch.hpp"

namespace mmaemu::kernels::host {

namespace {

struct Entry {
  std::string_view name;
  std::string_view symbol;
  KernelEntry fn;
  long dynamic_smem;
};

const Entry kEntries[] = {
    {"v1", "mmaemu_v1_e4m3e4m3", &mmaemu_v1_e4m3e4m3, 0},
    {"v4", "mmaemu_v4_e4m3e4m3", &mmaemu_v4_e4m3e4m3, mmaemu_chain::dynamic_smem_bytes<16, 8, 8>()},
    {"v9", "mmaemu_v9_e4m3e4m3", &mmaemu_v9_e4m3e4m3, 0},
    {"tc3", "mmaemu_tc3_e4m3e4m3", &mmaemu_tc3_e4m3e4m3, 0},
    {"h1", "mmaemu_h1_e4m3e4m3", &mmaemu_h1_e4m3e4m3, 0},
    {"h4", "mmaemu_h4_e4m3e4m3", &mmaemu_h4_e4m3e4m3, mmaemu_chain::dynamic_smem_bytes<32, 8, 8>()},
};

} // namespace

KernelEntry host_kernel(std::string_view name) {
  for (const auto& e : kEntries) {
    if (e.name == name)
      return e.fn;
  }
  return nullptr;
}

KernelEntry host_kernel_by_symbol(std::string_view symbol) {
  for (const auto& e : kEntries) {
    if (e.symbol == symbol)
      return e.fn;
  }
  return nullptr;
}

long host_kernel_dynamic_smem(std::string_view name) {
  for (const auto& e : kEntries) {
    if (e.name == name)
      return e.dynamic_smem;
  }
  return -1;
}

void run_host_kernel(KernelEntry entry, const HostLaunch& shape, const std::uint8_t* A,
                     const std::uint8_t* B, float* C, int M, int N, int K, unsigned workers) {
  if (M <= 0 || N <= 0)
    return;
  const dim3 grid(static_cast<unsigned>((N + shape.tile_n - 1) / shape.tile_n),
                  static_cast<unsigned>((M + shape.tile_m - 1) / shape.tile_m));
  const dim3 block(static_cast<unsigned>(shape.threads));
  LaunchOptions options;
  options.workers = workers;
  options.order = shape.descending ? ThreadOrder::descending : ThreadOrder::ascending;
  options.mma_arch = shape.mma_arch;
  launch(
      grid, block, shape.dynamic_smem, [&] { entry(A, B, C, M, N, K); }, options);
}

} // namespace mmaemu::kernels::host
