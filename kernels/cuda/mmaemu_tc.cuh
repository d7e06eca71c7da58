// SPDX-License-Identifier: BSD-2-Clause
// What the gated tensor-core kernels (v9, tc3) share: the tile of one thread block and the
// fragments of its warps, and the exact conversions of E4M3 codes to the 16-bit operands of
// mma.sync. The proofs of both designs are in docs/backends.md ("The gated tensor-core
// kernels"). Device-only, no standard headers (NVRTC has none).
#pragma once

#include "mmaemu_chain.cuh"
#include "mmaemu_mma.cuh"

namespace mmaemu_tc {

// A block of 256 threads (8 warps) computes a 64 x 64 tile of C. Warp w owns rows
// 16 (w % 4) .. + 16 and columns 32 (w / 4) .. + 32: four m16n8 tiles side by side. In each
// tile a lane owns the four outputs of the PTX ISA's C/D fragment: rows g and g + 8, columns
// 2 t and 2 t + 1 (g = lane / 4, t = lane % 4).
constexpr int kTile = 64;
constexpr int kBlockK = 16; // one block of the ada preset
constexpr int kTilesN = 4;

struct Lane {
  int g, t;  // groupID, threadID_in_group
  int r0;    // first row of the lane's outputs within the block's tile (the other is r0 + 8)
  int nbase; // first column of the warp's four n8 tiles within the block's tile
};

__device__ __forceinline__ Lane lane_of(int tid) {
  const int warp = tid / 32;
  const int lane = tid % 32;
  Lane l;
  l.g = lane >> 2;
  l.t = lane & 3;
  l.r0 = 16 * (warp & 3) + l.g;
  l.nbase = 32 * (warp >> 2);
  return l;
}

// Two 16-bit elements in one .f16x2 / .bf16x2 register, the lower index in bits 0..15.
__device__ __forceinline__ unsigned pack2(unsigned short lo, unsigned short hi) {
  return static_cast<unsigned>(lo) | (static_cast<unsigned>(hi) << 16);
}

// E4M3 code -> binary16 bits, exact (every finite E4M3 value is an fp16 normal or zero;
// subnormal codes m * 2^-9 become normals). NaN codes give an fp16 NaN of the code's sign.
__device__ __forceinline__ unsigned short e4m3_to_f16_bits(unsigned code) {
  const unsigned sign = (code & 0x80u) << 8;
  const unsigned e = (code >> 3) & 15u;
  const unsigned m = code & 7u;
  if (e == 15u && m == 7u)
    return static_cast<unsigned short>(sign | 0x7E00u);
  if (e != 0u)
    return static_cast<unsigned short>(sign | ((e + 8u) << 10) | (m << 7));
  if (m == 0u)
    return static_cast<unsigned short>(sign);
  const int p = 31 - __clz(static_cast<int>(m)); // m * 2^-9 = 2^(p - 9) * (m / 2^p)
  return static_cast<unsigned short>(sign | (static_cast<unsigned>(p - 9 + 15) << 10) |
                                     ((m << (10 - p)) & 0x3FFu));
}

} // namespace mmaemu_tc
