// SPDX-License-Identifier: BSD-2-Clause
// cuda:v9, the ada preset's chain (16-term blocks, min_exp -132) of E4M3 x E4M3 codes: a bf16
// tensor-core exponent pass gives every output's alignment exponent E per block, then a chain
// of fma.rz.f32 (FFMA.RZ) truncates and sums the terms. 64 x 64 tile per block of 256 threads
// (8 warps), 16 outputs per thread, static shared memory. Kernel ABI v1. Gated: the exponent
// pass relies on the bf16 mma.sync keeping its largest product and not growing past 16 times it
// (the window gate; proof in docs/backends.md, "v9").
//
// Exponent pass: each non-zero finite code x with exponent ex (ex = max(floor(log2 |x|), -6))
// becomes the bf16 weight 2^(5 ex + 15) (zero and NaN codes: 0). One m16n8k16 from +0 over the
// block's 16 k gives R = the sum of 2^(5 (ea + eb) + 30) over the pairs without a zero factor,
// as the tensor core adds it. If R lies in [2^(5 E + 30), 2^(5 E + 35)) (the window), its
// exponent X gives E = floor((X - 30) / 5); R = 0 means no pair.
// Chain: with Cf = 2^(E + 10) and cs = Cf carrying the product's sign, fma_rz(a, b, cs) - cs is
// a * b truncated toward zero to a multiple of 2^(E - 13), exactly block-fma.md's step 5.
#include "mmaemu_tc.cuh"

namespace mmaemu_v9 {

using namespace mmaemu_chain;
using namespace mmaemu_tc;

// The exponent pass's bf16 weight of a code: 2^(5 ex + 15) with ex in [-6, 8], so that the
// product exponents 5 (ea + eb) + 30 lie in [-30, 110], inside binary32's normal range.
__device__ __forceinline__ unsigned short weight_bits(unsigned code) {
  if ((code & 0x7Fu) == 0u || (code & 0x7Fu) == 0x7Fu)
    return 0;
  const int e = static_cast<int>((code >> 3) & 15u);
  const int ex = (e == 0 ? 1 : e) - 7;
  return static_cast<unsigned short>((5 * ex + 15 + 127) << 7);
}

// The pair exponent sum + 12 (block_exponent's pair_sum) of a pass result R, or -1 for R = 0.
__device__ __forceinline__ int pair_sum_of(float r) {
  const unsigned mag = __float_as_uint(r) & kAbsMask;
  if (mag == 0u)
    return -1;
  // X = field - 127 and E + 12 = floor((X - 30) / 5) + 12 = (field - 97) / 5, field >= 97 in
  // the window (a result outside it gives a wrong E, which the window gate shows).
  const int field = static_cast<int>(mag >> 23);
  return field >= 97 ? (field - 97) / 5 : 0;
}

// a * b truncated toward zero to a multiple of 2^(E - 13) = ulp(cf), |a * b| < cf.
__device__ __forceinline__ float ffma_term(float a, float b, float cf) {
  const float cs =
      __uint_as_float(__float_as_uint(cf) | ((__float_as_uint(a) ^ __float_as_uint(b)) & kSignBit));
  return __fsub_rn(__fmaf_rz(a, b, cs), cs);
}

__device__ __forceinline__ void chain(const unsigned char* __restrict__ A,
                                      const unsigned char* __restrict__ B, float* __restrict__ C,
                                      int M, int N, int K) {
  __shared__ float lut[256];
  __shared__ unsigned short wlut[256];
  __shared__ float va[kBlockK][kTile]; // decoded values, k-major
  __shared__ float vb[kBlockK][kTile];
  __shared__ unsigned short wa[kTile][kBlockK]; // bf16 weights, row-major
  __shared__ unsigned short wb[kTile][kBlockK];

  const int tid = static_cast<int>(threadIdx.x);
  const Lane l = lane_of(tid);
  const int m0 = static_cast<int>(blockIdx.y) * kTile;
  const int n0 = static_cast<int>(blockIdx.x) * kTile;
  for (int i = tid; i < 256; i += kThreads) {
    lut[i] = __uint_as_float(decode_e4m3_bits(static_cast<unsigned>(i)));
    wlut[i] = weight_bits(static_cast<unsigned>(i));
  }
  __syncthreads();

  // s[j][i]: output i of the lane's fragment in n8 tile j.
  float s[kTilesN][4];
  MMAEMU_UNROLL
  for (int j = 0; j < kTilesN; ++j)
    MMAEMU_UNROLL
  for (int i = 0; i < 4; ++i)
    s[j][i] = 0.0f;
  const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};

  const int blocks = K <= 0 ? 0 : (K - 1) / kBlockK + 1;
  for (int blk = 0; blk < blocks; ++blk) {
    const int k0 = blk * kBlockK;
    for (int item = tid; item < kTile * kBlockK; item += kThreads) {
      const int r = item / kBlockK;
      const int k = item % kBlockK;
      unsigned ca = 0u, cb = 0u;
      if (k0 + k < K) {
        if (m0 + r < M)
          ca = A[static_cast<long long>(m0 + r) * K + k0 + k];
        if (n0 + r < N)
          cb = B[static_cast<long long>(n0 + r) * K + k0 + k];
      }
      va[k][r] = lut[ca];
      vb[k][r] = lut[cb];
      wa[r][k] = wlut[ca];
      wb[r][k] = wlut[cb];
    }
    __syncthreads();

    // The exponent pass: one m16n8k16 per n8 tile, every lane of the warp.
    const int r0 = l.r0, r1 = l.r0 + 8, k = 2 * l.t;
    const unsigned afrag[4] = {pack2(wa[r0][k], wa[r0][k + 1]), pack2(wa[r1][k], wa[r1][k + 1]),
                               pack2(wa[r0][k + 8], wa[r0][k + 9]),
                               pack2(wa[r1][k + 8], wa[r1][k + 9])};
    float cf[kTilesN][4];
    MMAEMU_UNROLL
    for (int j = 0; j < kTilesN; ++j) {
      const int n = l.nbase + 8 * j + l.g;
      const unsigned bfrag[2] = {pack2(wb[n][k], wb[n][k + 1]), pack2(wb[n][k + 8], wb[n][k + 9])};
      float r[4];
      mmaemu_mma_m16n8k16_f32_bf16(r, afrag, bfrag, zero);
      MMAEMU_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int e = block_exponent<-132>(pair_sum_of(r[i]), __float_as_uint(s[j][i]));
        if (e <= kMaxE) {
          cf[j][i] = __uint_as_float(static_cast<unsigned>(e + 10 + 127) << 23);
          s[j][i] = __fadd_rn(0.0f, truncate_term(s[j][i], cf[j][i]));
        } else {
          // An accumulator at or beyond 2^118 (or NaN): as in v1, every term truncates to 0.
          cf[j][i] = __uint_as_float(0x7F000000u);
        }
      }
    }

    // The FFMA.RZ chain over the block's 16 k.
    MMAEMU_UNROLL_ONCE
    for (int kk = 0; kk < kBlockK; ++kk) {
      const float a0 = va[kk][r0], a1 = va[kk][r1];
      MMAEMU_UNROLL
      for (int j = 0; j < kTilesN; ++j) {
        const int c = l.nbase + 8 * j + 2 * l.t;
        const float b0 = vb[kk][c], b1 = vb[kk][c + 1];
        s[j][0] = __fadd_rn(s[j][0], ffma_term(a0, b0, cf[j][0]));
        s[j][1] = __fadd_rn(s[j][1], ffma_term(a0, b1, cf[j][1]));
        s[j][2] = __fadd_rn(s[j][2], ffma_term(a1, b0, cf[j][2]));
        s[j][3] = __fadd_rn(s[j][3], ffma_term(a1, b1, cf[j][3]));
      }
    }
    MMAEMU_UNROLL
    for (int j = 0; j < kTilesN; ++j)
      MMAEMU_UNROLL
    for (int i = 0; i < 4; ++i)
      s[j][i] = __uint_as_float(round_block_bits(s[j][i]));
    __syncthreads(); // every thread has read this block's tiles
  }

  MMAEMU_UNROLL
  for (int j = 0; j < kTilesN; ++j) {
    MMAEMU_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int m = m0 + l.r0 + (i >= 2 ? 8 : 0);
      const int n = n0 + l.nbase + 8 * j + 2 * l.t + (i & 1);
      if (m < M && n < N)
        C[static_cast<long long>(m) * N + n] = s[j][i];
    }
  }
}

} // namespace mmaemu_v9

extern "C" __global__ void __launch_bounds__(256)
    mmaemu_v9_e4m3e4m3(const unsigned char* A, const unsigned char* B, float* C, int M, int N,
                       int K) {
  mmaemu_v9::chain(A, B, C, M, N, K);
}
