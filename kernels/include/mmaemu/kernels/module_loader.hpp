// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The loader ladder (seed 000, "Loader ladder") for one kernel on one device:
//   1. fatbin: <fatbin_dir()>/<module>.fatbin, only if its sha256 equals the manifest's, the
//      manifest's source_sha256 equals sources_sha256(), and the device can run one of its
//      SASS architectures or JIT its PTX;
//   2. NVRTC: the embedded source compiled for the device's sm_XY with the fixed options; the
//      cubin cached atomically in <cache_dir()>/nvrtc/<key>.cubin (nvrtc_cubin_key), kept in
//      memory when the cache cannot be written; a cached cubin that fails to load is
//      recompiled;
//   3. otherwise BackendUnavailableError naming both reasons.
// MMAEMU_TEST_FORCE_FAIL (a comma list) containing "fatbin" or "nvrtc" makes that step fail
// on purpose. Loaded modules are cached per (device ordinal, context id, kernel): a module
// and its __constant__ tables belong to the context that loaded it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"

namespace mmaemu::kernels {

struct LoadedModule {
  std::string kernel; // the KernelSpec's name ("v1")
  int device_ordinal = 0;
  unsigned long long context_id = 0;
  std::string source;       // "fatbin" or "nvrtc"
  std::string image_sha256; // of the bytes given to cuModuleLoadData
  std::size_t image_bytes = 0;
  std::string image_path;    // the fatbin or the cached cubin read or written; may be empty
  std::string fatbin_reason; // why the fatbin was not used; empty when it was
  std::string nvrtc_cache;   // NVRTC only: "memory hit", "disk hit", "stored", or
                             // "in memory only: <why the cache could not be used>"; with
                             // "; recompiled: <why>" when a cached cubin failed to load
  driver::CUmodule module = nullptr;
  driver::CUfunction function = nullptr;
};

// Whether MMAEMU_TEST_FORCE_FAIL (read at each call) lists `step`.
bool forced_failure(std::string_view step);

// The NVRTC cache key of `spec` for sm_`arch` under NVRTC `nvrtc_major`.`nvrtc_minor`: lower-
// case hex SHA-256 over "mmaemu-nvrtc/1", the source file's name and content, every embedded
// header's name and content (byte order of names), the options (fixed_options(arch)), the
// arch and the NVRTC version, each field followed by a NUL byte (docs/backends.md).
std::string nvrtc_cubin_key(const KernelSpec& spec, int arch, int nvrtc_major, int nvrtc_minor);

// Runs the ladder (or returns the cached module) for `spec` on `device`, whose primary
// context is made current on the calling thread. Throws BackendUnavailableError naming the
// kernel, the device and both reasons; DriverError when the context cannot be made current.
// The reference stays valid for the life of the process. Thread-safe.
const LoadedModule& load_module(const KernelSpec& spec, const driver::Device& device);

// C[M][N] (`out`, row-major, N floats a row) = the kernel on A (M rows of K codes, `lda`
// bytes apart) and B (N rows, `ldb` apart), host pointers. The operands are copied into
// contiguous device buffers (cuMemAlloc: 256-byte aligned, which satisfies
// spec.align_bytes). ValueError for negative or larger-than-int M, N or K, K >= spec.k_max, an
// output over 2^62 bytes, or (when M, N > 0) lda or ldb < K. Nothing runs when M or N is 0; +0
// results without a launch when K is 0. Dynamic shared memory above 48 KiB is opted in per launch
// (BackendUnavailableError when the device's opt-in limit is lower). Launches in row chunks
// of at most max_grid_y blocks. Synchronises; device memory is freed on every path. Throws
// DriverError for a failing driver call.
void run_kernel(const KernelSpec& spec, const LoadedModule& loaded, const driver::Device& device,
                const std::uint8_t* a, std::size_t lda, const std::uint8_t* b, std::size_t ldb,
                std::int64_t M, std::int64_t N, std::int64_t K, float* out);

namespace detail {

// Tests only: caps grid.y of run_kernel's launches (0: the device's limit).
void set_grid_y_limit_for_testing(unsigned limit);

// Tests only: unloads every cached module and forgets the in-memory cubins, so that the
// next load_module runs the ladder again. References from load_module become invalid.
void reset_module_cache_for_testing();

} // namespace detail

} // namespace mmaemu::kernels
