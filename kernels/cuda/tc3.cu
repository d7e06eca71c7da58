// SPDX-License-Identifier: BSD-2-Clause
// cuda:tc3, the ada preset's chain (16-term blocks, min_exp -132) of E4M3 x E4M3 codes through
// fp16 HMMA with a dummy accumulator. 64 x 64 tile per block of 256 threads (8 warps), 16
// outputs per thread, static shared memory. Kernel ABI v1. Gated: it relies on an m16n8k8 with
// fp16 operands being one block of 8 exact products aligned to the largest exponent among them
// and c, truncated at 24 fraction bits below it (one extra alignment bit), summed exactly: the
// Ampere and Ada models, not Volta's or Hopper's (the design_a gate; proof in docs/backends.md,
// "tc3").
//
// Per block and output, E (the ada preset's alignment exponent) comes from exponent bytes as
// in v1. The dummy accumulator D = 2^(E + 11) is the largest term of an m16n8k8 (every product
// lies below 2^(E + 2)), so the tensor core truncates each product toward zero to a multiple
// of 2^(E + 11 - 24) = 2^(E - 13), exactly block-fma.md's step 5, and returns D + the sum of
// the eight truncated products. That sum is exact in binary32 only when it moves the result
// toward zero (its ulp above 2^(E + 11) is 2^(E - 12)), so each half-block runs twice, from +D
// and from -D, and keeps the run whose sum has the sign opposite to its dummy.
#include "mmaemu_tc.cuh"

namespace mmaemu_tc3 {

using namespace mmaemu_chain;
using namespace mmaemu_tc;

// The largest E for which D = 2^(E + 11) is finite; beyond it the accumulator (>= 2^117, or
// NaN) dwarfs every product (< 2^18), and the block keeps it as it is, as in v1.
constexpr int kMaxDummyE = 127 - 11;

// One half-block's exact sum of truncated products, from the runs from +D (rp) and -D (rn):
// rp < D exactly when the sum is negative, and then rp = D + sum is exact; otherwise
// rn = -D + sum is. Either difference is exact (Sterbenz). NaN (a NaN code) stays NaN.
__device__ __forceinline__ float half_sum(float rp, float rn, float d) {
  return rp < d ? __fsub_rn(rp, d) : __fadd_rn(rn, d);
}

__device__ __forceinline__ void chain(const unsigned char* __restrict__ A,
                                      const unsigned char* __restrict__ B, float* __restrict__ C,
                                      int M, int N, int K) {
  __shared__ unsigned short hlut[256];
  __shared__ unsigned char xlut[256];
  __shared__ unsigned short ha[kTile][kBlockK]; // fp16 operands, row-major
  __shared__ unsigned short hb[kTile][kBlockK];
  __shared__ unsigned xa[kBlockK / 4][kTile]; // exponent bytes, four k per word
  __shared__ unsigned xb[kBlockK / 4][kTile];

  const int tid = static_cast<int>(threadIdx.x);
  const Lane l = lane_of(tid);
  const int m0 = static_cast<int>(blockIdx.y) * kTile;
  const int n0 = static_cast<int>(blockIdx.x) * kTile;
  for (int i = tid; i < 256; i += kThreads) {
    hlut[i] = e4m3_to_f16_bits(static_cast<unsigned>(i));
    xlut[i] = static_cast<unsigned char>(exponent_byte(static_cast<unsigned>(i)));
  }
  __syncthreads();

  float s[kTilesN][4];
  MMAEMU_UNROLL
  for (int j = 0; j < kTilesN; ++j)
    MMAEMU_UNROLL
  for (int i = 0; i < 4; ++i)
    s[j][i] = 0.0f;

  const int blocks = K <= 0 ? 0 : (K - 1) / kBlockK + 1;
  for (int blk = 0; blk < blocks; ++blk) {
    const int k0 = blk * kBlockK;
    // 64 rows x 4 words per operand: one word of four codes per thread and operand.
    for (int item = tid; item < kTile * (kBlockK / 4); item += kThreads) {
      const int r = item / (kBlockK / 4);
      const int w = item % (kBlockK / 4);
      unsigned wa = 0u, wb = 0u;
      MMAEMU_UNROLL
      for (int q = 0; q < 4; ++q) {
        const int k = 4 * w + q;
        unsigned ca = 0u, cb = 0u;
        if (k0 + k < K) {
          if (m0 + r < M)
            ca = A[static_cast<long long>(m0 + r) * K + k0 + k];
          if (n0 + r < N)
            cb = B[static_cast<long long>(n0 + r) * K + k0 + k];
        }
        ha[r][k] = hlut[ca];
        hb[r][k] = hlut[cb];
        wa |= static_cast<unsigned>(xlut[ca]) << (8 * q);
        wb |= static_cast<unsigned>(xlut[cb]) << (8 * q);
      }
      xa[w][r] = wa;
      xb[w][r] = wb;
    }
    __syncthreads();

    const int r0 = l.r0, r1 = l.r0 + 8, k = 2 * l.t;
    MMAEMU_UNROLL
    for (int j = 0; j < kTilesN; ++j) {
      const int c = l.nbase + 8 * j + 2 * l.t;
      // E of the fragment's four outputs (rows r0, r0, r1, r1; columns c, c + 1, c, c + 1).
      float d[4], tc[4];
      bool keep[4];
      MMAEMU_UNROLL
      for (int i = 0; i < 4; ++i) {
        const int row = i >= 2 ? r1 : r0;
        const int col = c + (i & 1);
        unsigned mx = kNoPairWord;
        MMAEMU_UNROLL
        for (int w = 0; w < kBlockK / 4; ++w)
          mx = __vmaxs4(mx, __vaddss4(xa[w][row], xb[w][col]));
        const int e = block_exponent<-132>(max_byte(mx), __float_as_uint(s[j][i]));
        keep[i] = e > kMaxDummyE;
        const int ed = keep[i] ? kMaxDummyE : e;
        d[i] = __uint_as_float(static_cast<unsigned>(ed + 11 + 127) << 23);
        // The accumulator's own term, truncated like a product (v1's truncate_term).
        const float cf = __uint_as_float(static_cast<unsigned>(ed + 10 + 127) << 23);
        tc[i] = keep[i] ? s[j][i] : __fadd_rn(0.0f, truncate_term(s[j][i], cf));
      }
      const float dn[4] = {-d[0], -d[1], -d[2], -d[3]};
      const int n = l.nbase + 8 * j + l.g;
      float sum[4] = {tc[0], tc[1], tc[2], tc[3]};
      MMAEMU_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int kh = k + 8 * h;
        const unsigned afrag[2] = {pack2(ha[r0][kh], ha[r0][kh + 1]),
                                   pack2(ha[r1][kh], ha[r1][kh + 1])};
        const unsigned bfrag[1] = {pack2(hb[n][kh], hb[n][kh + 1])};
        float rp[4], rn[4];
        mmaemu_mma_m16n8k8_f32_f16(rp, afrag, bfrag, d);
        mmaemu_mma_m16n8k8_f32_f16(rn, afrag, bfrag, dn);
        MMAEMU_UNROLL
        for (int i = 0; i < 4; ++i)
          sum[i] = __fadd_rn(sum[i], half_sum(rp[i], rn[i], d[i]));
      }
      MMAEMU_UNROLL
      for (int i = 0; i < 4; ++i)
        s[j][i] = keep[i] ? s[j][i] : __uint_as_float(round_block_bits(sum[i]));
    }
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

} // namespace mmaemu_tc3

extern "C" __global__ void __launch_bounds__(256)
    mmaemu_tc3_e4m3e4m3(const unsigned char* A, const unsigned char* B, float* C, int M, int N,
                        int K) {
  mmaemu_tc3::chain(A, B, C, M, N, K);
}
