// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Internal to chain_gemm: which kernel computes the chains. Tests force each kernel in turn
// so that every one of them is checked on a machine that can run them all.

#include <cstddef>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::model::detail {

enum class ChainKernel {
  automatic,       // the fastest one that this CPU, preset and format pair allow
  avx512_i16,      // AVX-512 BW/CD: 16-bit terms, 32 (column, k) pairs per vector
  avx512_i16_vnni, // the same with AVX-512 VNNI (vpdpwssd: multiply, pair-add, accumulate)
  lanes_avx512,    // 16 columns in 32- or 64-bit lanes, compiled for AVX-512
  lanes_avx2,      // the same compiled for AVX2
  lanes_base,      // the same compiled for the x86-64 baseline
  f32_avx2, // AVX2 and FMA: terms as exact binary32 values, truncated by round-toward-zero adds
  exact,    // model::dot per output (late_c presets always take it)
};

const char* chain_kernel_name(ChainKernel k);

// Makes chain_gemm use kernel k where it can (automatic: choose). Returns false and changes
// nothing if this CPU cannot run k. Process-wide: for tests and benchmarks only.
bool force_chain_kernel(ChainKernel k);

// Caps the decoded bytes of a slab of rows or columns (and of a panel group) so that small
// tests go through many slabs; 0 restores the default. Process-wide: for tests only.
void force_chain_slab_bytes(std::size_t bytes);

// The kernel a chain_gemm call with this preset and format pair would use now.
ChainKernel chain_kernel_for(const Preset& p, FormatPair fmt);

} // namespace mmaemu::model::detail
