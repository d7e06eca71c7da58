// SPDX-License-Identifier: BSD-2-Clause
// The block-FMA chain (docs/block-fma.md) of E4M3 x E4M3 codes with IEEE-only instructions:
// binary32 adds and multiplies with explicit rounding modes, and integer byte SIMD. Their
// results are the same on every GPU, and on the CPU through kernels/host (the host shim).
//
// One block (nfma pairs and the accumulator c), for each output:
//   E  = max(ea + eb over the pairs with no zero factor, exponent of c if c != 0, min_exp),
//        from per-code exponent bytes (ea + 6, or -128 for a zero code) summed with a signed
//        saturating byte add, so a pair with a zero factor stays negative and never wins;
//   Cf = 2^(E + 10): adding |x| < 2^(E + 2) to Cf with round-toward-zero keeps exactly the
//        multiples of 2^(E - 13) (the ulp of Cf), so fadd_rz(|x|, Cf) - Cf is |x| truncated
//        to frac = 13 fraction bits below E; the subtraction is exact;
//   S  = trunc(c) + sum of trunc(a_k * b_k): each product is exact in binary32 (4-bit
//        significands), each truncated term is a multiple of 2^(E - 13) below 2^(E + 2), so
//        the sum of at most 33 of them stays below 2^24 units and every addition is exact;
//   c' = S with 13 fraction bits kept (round toward zero), +0 when S = 0.
// Device-only: no standard or host headers (NVRTC has none). Compiled as C++ by the host
// shim, which defines MMAEMU_HOST_SHIM and the intrinsics used here.
#pragma once

// Loops over a thread's outputs are unrolled so that its arrays live in registers.
#ifdef MMAEMU_HOST_SHIM
#define MMAEMU_UNROLL
#define MMAEMU_UNROLL_ONCE
#define MMAEMU_DYNAMIC_SMEM() (static_cast<unsigned char*>(::mmaemu::kernels::host::dynamic_smem()))
#else
#define MMAEMU_UNROLL _Pragma("unroll")
#define MMAEMU_UNROLL_ONCE _Pragma("unroll 1")
extern __shared__ __align__(16) unsigned char mmaemu_dynamic_smem[];
#define MMAEMU_DYNAMIC_SMEM() (mmaemu_dynamic_smem)
#endif

namespace mmaemu_chain {

// Threads per block of every kernel: a 16 x 16 grid of threads, each owning RM x RN outputs
// at rows ty + 16 i and columns tx + 16 j of the block's tile.
constexpr int kThreads = 256;
constexpr int kSide = 16;

constexpr unsigned kSignBit = 0x80000000u;
constexpr unsigned kAbsMask = 0x7FFFFFFFu;
constexpr unsigned kCanonicalNaN = 0x7FFFFFFFu;
constexpr unsigned kNoPair = 0x80u; // exponent byte of a zero code
constexpr unsigned kNoPairWord = 0x80808080u;
constexpr int kExpByteBias = 6; // exponent byte = ea + 6, ea in [-6, 8]
constexpr int kFrac = 13;       // fraction bits of terms and of block results
constexpr int kMaxE = 127 - 10; // the largest E for which 2^(E + 10) is finite

__device__ __forceinline__ int imax(int a, int b) {
  return a > b ? a : b;
}

// E4M3 code -> binary32 bits, exact. NaN codes (0x7F, 0xFF) give the canonical NaN.
__device__ __forceinline__ unsigned decode_e4m3_bits(unsigned code) {
  const unsigned sign = (code & 0x80u) << 24;
  const unsigned e = (code >> 3) & 15u;
  const unsigned m = code & 7u;
  if (e == 15u && m == 7u)
    return kCanonicalNaN;
  if (e != 0u)
    return sign | ((e + 120u) << 23) | (m << 20);
  if (m == 0u)
    return sign;
  // Subnormal m * 2^-9: normalise by the position p of m's leading one.
  const int p = 31 - __clz(static_cast<int>(m));
  return sign | (static_cast<unsigned>(p - 9 + 127) << 23) | ((m << (23 - p)) & 0x7FFFFFu);
}

// E4M3 code -> its exponent byte: ea + 6 with ea = max(exponent field, 1) - 7 (a subnormal
// keeps emin = -6), or kNoPair for +-0 (the pair is dropped).
__device__ __forceinline__ unsigned exponent_byte(unsigned code) {
  if ((code & 0x7Fu) == 0u)
    return kNoPair;
  const unsigned e = (code >> 3) & 15u;
  return (e == 0u ? 1u : e) - 1u;
}

// The signed byte of a word of per-byte maxima that is largest: the block's exponent sum.
__device__ __forceinline__ int max_byte(unsigned word) {
  word = __vmaxs4(word, word >> 16);
  word = __vmaxs4(word, word >> 8);
  return static_cast<int>(word << 24) >> 24;
}

// The alignment exponent E of one block: pairs (max byte sum, or negative when no pair has
// two non-zero factors), the accumulator c and min_exp.
template <int MIN_EXP>
__device__ __forceinline__ int block_exponent(int pair_sum, unsigned c_bits) {
  int e = MIN_EXP;
  if (pair_sum >= 0)
    e = imax(e, pair_sum - 2 * kExpByteBias);
  if ((c_bits & kAbsMask) != 0u) {
    const int field = static_cast<int>((c_bits >> 23) & 255u);
    e = imax(e, (field == 0 ? 1 : field) - 127);
  }
  return e;
}

// x truncated toward zero to a multiple of 2^(E - 13), with cf = 2^(E + 10); |x| < 2^(E + 2).
// The same truncation is written for the CPU in emulator/src/block_fma.cpp (ScalarTerms::sum,
// Avx2Terms::sum), chain_gemm_lanes.cpp and chain_gemm_i16.cpp; the differential tests that
// bind them: HostKernel (kernels/tests/test_host_kernels.cpp: these sources on the host shim
// against model::dot), ChainGemmKernel (test_chain_gemm.cpp), KernelVariants and
// BlockFmaKernels (test_block_fma.cpp).
__device__ __forceinline__ float truncate_term(float x, float cf) {
  const unsigned bits = __float_as_uint(x);
  // fabsf, not a mask: the absolute value becomes a free operand modifier of the add.
  const float mag = fabsf(x);
  const float t = __fsub_rn(__fadd_rz(mag, cf), cf);
  return __uint_as_float(__float_as_uint(t) | (bits & kSignBit));
}

// The block result: S with 13 fraction bits (toward zero), a subnormal S likewise below its
// leading one, +0 for a zero S, the canonical NaN for any NaN.
__device__ __forceinline__ unsigned round_block_bits(float s) {
  const unsigned bits = __float_as_uint(s);
  const unsigned mag = bits & kAbsMask;
  if (mag > 0x7F800000u)
    return kCanonicalNaN;
  if (mag >= 0x00800000u)
    return bits & ~((1u << (23 - kFrac)) - 1u);
  if (mag == 0u)
    return 0u;
  const int drop = (31 - __clz(static_cast<int>(mag))) - kFrac;
  return drop > 0 ? bits & ~((1u << drop) - 1u) : bits;
}

// Shared memory of one stage, both k-major so that the 16 threads of a half-warp read 16
// consecutive words: decoded values vals[k][row] and exponent bytes exps[w][row], four k per
// word (byte q of word w is k = 4 w + q). A's rows first, then B's.
template <int NFMA, int TM, int TN> struct Stage {
  static constexpr int kWords = NFMA / 4;
  static constexpr int kValueBytes = NFMA * (TM + TN) * 4;
  static constexpr int kExponentBytes = kWords * (TM + TN) * 4;
};

// Loads the tile of rows [row0, row0 + ROWS) and k in [k0, k0 + NFMA) of X ([rows][K] codes):
// values into vals[k][row], exponent words into exps[w][row]; codes outside the
// matrix are +0 (a zero pair, dropped).
template <int NFMA, int ROWS>
__device__ __forceinline__ void
load_tile(const unsigned char* __restrict__ X, int rows, int K, int row0, int k0, const float* lut,
          const unsigned char* xlut, float* vals, unsigned* exps, int tid) {
  constexpr int kWords = NFMA / 4;
  for (int item = tid; item < ROWS * kWords; item += kThreads) {
    const int r = item / kWords;
    const int w = item - r * kWords;
    const int row = row0 + r;
    unsigned word = 0u;
    MMAEMU_UNROLL
    for (int q = 0; q < 4; ++q) {
      const int k = k0 + 4 * w + q;
      unsigned code = 0u;
      if (row < rows && k < K)
        code = X[static_cast<long long>(row) * K + k];
      vals[(4 * w + q) * ROWS + r] = lut[code];
      word |= static_cast<unsigned>(xlut[code]) << (8 * q);
    }
    exps[w * ROWS + r] = word;
  }
}

// One tile of C: the chain of every output of rows [m0, m0 + TM) x columns [n0, n0 + TN).
// RM x RN outputs per thread (TM = 16 RM, TN = 16 RN). TWO_STAGE: the values of the next
// block are loaded while the current one is multiplied (two value stages, one exponent
// stage); otherwise one stage.
template <int NFMA, int MIN_EXP, int RM, int RN, bool TWO_STAGE>
__device__ __forceinline__ void
chain_tile(const unsigned char* __restrict__ A, const unsigned char* __restrict__ B,
           float* __restrict__ C, int M, int N, int K, float* lut, unsigned char* xlut,
           float* vals0, float* vals1, unsigned* exps) {
  constexpr int TM = kSide * RM;
  constexpr int TN = kSide * RN;
  constexpr int kWords = NFMA / 4;
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % kSide;
  const int ty = tid / kSide;
  const int m0 = static_cast<int>(blockIdx.y) * TM;
  const int n0 = static_cast<int>(blockIdx.x) * TN;

  for (int i = tid; i < 256; i += kThreads) {
    lut[i] = __uint_as_float(decode_e4m3_bits(static_cast<unsigned>(i)));
    xlut[i] = static_cast<unsigned char>(exponent_byte(static_cast<unsigned>(i)));
  }
  __syncthreads();

  unsigned* const a_exps = exps;
  unsigned* const b_exps = exps + kWords * TM;
  // s holds the accumulator (the last block result) between blocks and the block's exact
  // sum within one; cf the block's 2^(E + 10). Two arrays of RM x RN registers.
  float cf[RM][RN];
  float s[RM][RN];
  MMAEMU_UNROLL
  for (int i = 0; i < RM; ++i)
    MMAEMU_UNROLL
  for (int j = 0; j < RN; ++j)
    s[i][j] = 0.0f;

  const int blocks = K <= 0 ? 0 : (K - 1) / NFMA + 1;
  if (TWO_STAGE && blocks > 0) {
    load_tile<NFMA, TM>(A, M, K, m0, 0, lut, xlut, vals0, a_exps, tid);
    load_tile<NFMA, TN>(B, N, K, n0, 0, lut, xlut, vals0 + NFMA * TM, b_exps, tid);
    __syncthreads();
  }
  for (int blk = 0; blk < blocks; ++blk) {
    const int k0 = blk * NFMA;
    float* const cur = (TWO_STAGE && (blk & 1)) ? vals1 : vals0;
    if (!TWO_STAGE) {
      load_tile<NFMA, TM>(A, M, K, m0, k0, lut, xlut, cur, a_exps, tid);
      load_tile<NFMA, TN>(B, N, K, n0, k0, lut, xlut, cur + NFMA * TM, b_exps, tid);
      __syncthreads();
    }
    // The alignment exponent of every output, and the truncated accumulator. Word by word
    // over the block so that only one word of each row and column is live at a time.
    unsigned mx[RM][RN];
    MMAEMU_UNROLL
    for (int i = 0; i < RM; ++i)
      MMAEMU_UNROLL
    for (int j = 0; j < RN; ++j)
      mx[i][j] = kNoPairWord;
    MMAEMU_UNROLL_ONCE
    for (int w = 0; w < kWords; ++w) {
      unsigned xa[RM];
      unsigned xb[RN];
      MMAEMU_UNROLL
      for (int i = 0; i < RM; ++i)
        xa[i] = a_exps[w * TM + ty + kSide * i];
      MMAEMU_UNROLL
      for (int j = 0; j < RN; ++j)
        xb[j] = b_exps[w * TN + tx + kSide * j];
      MMAEMU_UNROLL
      for (int i = 0; i < RM; ++i)
        MMAEMU_UNROLL
      for (int j = 0; j < RN; ++j)
        mx[i][j] = __vmaxs4(mx[i][j], __vaddss4(xa[i], xb[j]));
    }
    MMAEMU_UNROLL
    for (int i = 0; i < RM; ++i) {
      MMAEMU_UNROLL
      for (int j = 0; j < RN; ++j) {
        const unsigned acc = __float_as_uint(s[i][j]);
        const int e = block_exponent<MIN_EXP>(max_byte(mx[i][j]), acc);
        if (e <= kMaxE) {
          cf[i][j] = __uint_as_float(static_cast<unsigned>(e + 10 + 127) << 23);
          s[i][j] = __fadd_rn(0.0f, truncate_term(s[i][j], cf[i][j]));
        } else {
          // Only an accumulator at or beyond 2^118 (or Inf, NaN; never within k_max): every
          // product lies below 2^18, far under its ulp, so with cf = 2^127 each truncates to
          // 0 and the block keeps the accumulator's 13 fraction bits.
          cf[i][j] = __uint_as_float(0x7F000000u);
        }
      }
    }
    if (TWO_STAGE) {
      __syncthreads(); // every thread has read the exponents of this block
      if (blk + 1 < blocks) {
        float* const next = (blk & 1) ? vals0 : vals1;
        load_tile<NFMA, TM>(A, M, K, m0, k0 + NFMA, lut, xlut, next, a_exps, tid);
        load_tile<NFMA, TN>(B, N, K, n0, k0 + NFMA, lut, xlut, next + NFMA * TM, b_exps, tid);
      }
    }
    const float* const va = cur;
    const float* const vb = cur + NFMA * TM;
    // Not unrolled: the RM x RN products of one k already give every thread enough
    // independent work, and unrolling k only adds live registers (spills on sm_100+).
    MMAEMU_UNROLL_ONCE
    for (int k = 0; k < NFMA; ++k) {
      float a[RM];
      float b[RN];
      MMAEMU_UNROLL
      for (int i = 0; i < RM; ++i)
        a[i] = va[k * TM + ty + kSide * i];
      MMAEMU_UNROLL
      for (int j = 0; j < RN; ++j)
        b[j] = vb[k * TN + tx + kSide * j];
      MMAEMU_UNROLL
      for (int i = 0; i < RM; ++i)
        MMAEMU_UNROLL
      for (int j = 0; j < RN; ++j)
        s[i][j] = __fadd_rn(s[i][j], truncate_term(__fmul_rn(a[i], b[j]), cf[i][j]));
    }
    MMAEMU_UNROLL
    for (int i = 0; i < RM; ++i)
      MMAEMU_UNROLL
    for (int j = 0; j < RN; ++j)
      s[i][j] = __uint_as_float(round_block_bits(s[i][j]));
    __syncthreads(); // the next block's values and exponents are in place; this one is free
  }

  MMAEMU_UNROLL
  for (int i = 0; i < RM; ++i) {
    const int m = m0 + ty + kSide * i;
    if (m >= M)
      continue;
    MMAEMU_UNROLL
    for (int j = 0; j < RN; ++j) {
      const int n = n0 + tx + kSide * j;
      if (n < N)
        C[static_cast<long long>(m) * N + n] = s[i][j];
    }
  }
}

// The kernels with static shared memory (v1, h1): one stage.
template <int NFMA, int MIN_EXP, int RM, int RN>
__device__ __forceinline__ void chain_static(const unsigned char* __restrict__ A,
                                             const unsigned char* __restrict__ B,
                                             float* __restrict__ C, int M, int N, int K) {
  using S = Stage<NFMA, kSide * RM, kSide * RN>;
  __shared__ float lut[256];
  __shared__ unsigned char xlut[256];
  __shared__ float vals[S::kValueBytes / 4];
  __shared__ unsigned exps[S::kExponentBytes / 4];
  chain_tile<NFMA, MIN_EXP, RM, RN, false>(A, B, C, M, N, K, lut, xlut, vals, vals, exps);
}

// The kernels with dynamic shared memory (v4, h4): two value stages and one exponent
// stage (the tables stay static); dynamic_smem_bytes<...>() is the launch's size.
template <int NFMA, int RM, int RN> constexpr int dynamic_smem_bytes() {
  using S = Stage<NFMA, kSide * RM, kSide * RN>;
  return 2 * S::kValueBytes + S::kExponentBytes;
}

template <int NFMA, int MIN_EXP, int RM, int RN>
__device__ __forceinline__ void chain_dynamic(const unsigned char* __restrict__ A,
                                              const unsigned char* __restrict__ B,
                                              float* __restrict__ C, int M, int N, int K) {
  using S = Stage<NFMA, kSide * RM, kSide * RN>;
  __shared__ float lut[256];
  __shared__ unsigned char xlut[256];
  unsigned char* const base = MMAEMU_DYNAMIC_SMEM();
  float* const vals0 = reinterpret_cast<float*>(base);
  float* const vals1 = vals0 + S::kValueBytes / 4;
  unsigned* const exps = reinterpret_cast<unsigned*>(vals1 + S::kValueBytes / 4);
  chain_tile<NFMA, MIN_EXP, RM, RN, true>(A, B, C, M, N, K, lut, xlut, vals0, vals1, exps);
}

} // namespace mmaemu_chain
