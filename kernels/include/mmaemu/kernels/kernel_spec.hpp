// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// KernelSpec: what a CUDA kernel of kernels/cuda/ is, as data (seed 000, "Kernel ABI v1"):
// the preset it implements, its launch shape, where it can run, how it is selected.
// Every kernel has the ABI v1 entry
//   extern "C" __global__ void mmaemu_<name>_e4m3e4m3(const uint8_t* A, const uint8_t* B,
//                                                     float* C, int M, int N, int K);
// A [M][K] and B [N][K] are row-major E4M3 codes, C [M][N] fp32 = the preset's chain over
// k = 0..K-1 from +0 (any K >= 0; the kernels pad the last block with zero codes).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu::kernels {

struct KernelSpec {
  std::string_view name;             // "v1": the backend is "cuda:v1"
  std::string_view preset;           // the only preset it serves ("ada" or "hopper")
  std::string_view source;           // file in kernels/cuda/ (also the fatbin's stem)
  std::string_view symbol;           // "mmaemu_v1_e4m3e4m3"
  int tile_m = 64;                   // rows of C per thread block (grid.y)
  int tile_n = 64;                   // columns of C per thread block (grid.x)
  int threads = 256;                 // threads per block (one dimension)
  int dynamic_smem = 0;              // bytes of dynamic shared memory per block
  int min_cc = 75;                   // lowest compute capability (major * 10 + minor)
  std::span<const int> sass;         // SASS architectures of the release fatbin (sm_XY)
  int ptx = 75;                      // PTX of the fatbin: compute_XY (JIT for later GPUs); 0: none
  std::uint64_t k_max = 0;           // the largest K a launch accepts (exclusive bound)
  int priority = 10;                 // higher is tried first within a preset
  bool gated = false;                // auto-selected only on validated_on capabilities
  std::span<const int> validated_on; // capabilities where T3 passed on hardware
  int align_bytes = 4;               // operand base alignment the kernel relies on
};

// Every kernel of this build, highest priority first within each preset.

std::span<const KernelSpec> kernel_specs();

// Whether `spec` has code for compute capability `cc`: one of its SASS architectures runs there
// (same major, minor at least as high) or its PTX can be JIT-compiled (cc >= ptx; none for ptx
// 0). NVRTC does not extend this: a kernel without code for cc is skipped by design.
bool spec_runs_on(const KernelSpec& spec, int cc);

// The spec of "v1", "v4", "v9", "tc3", "h1" or "h4"; nullptr for any other name.
const KernelSpec* find_kernel_spec(std::string_view name);

// The kernel names the CLI accepts after "cuda:" (including gated designs this build lacks).
std::span<const std::string_view> known_kernel_names();

// The names of known_kernel_names() that kernel_specs() lacks, in that order: computed, so that
// a kernel added to kernel_specs() leaves this list (and every help text built from it) at once.
std::vector<std::string_view> absent_kernel_names();

// Why `name` (one of absent_kernel_names()) is not in this build; empty for a built kernel.
std::string absent_kernel_reason(std::string_view name);

// For help texts and messages: the built kernels ("v1, v4, h1, h4") and, when some known ones
// are absent, which ("; the gated tensor-core designs v9, tc3 are not in this build").
std::string kernel_names_text();

} // namespace mmaemu::kernels
