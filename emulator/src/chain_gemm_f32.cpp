// SPDX-License-Identifier: BSD-2-Clause
// The binary32 kernel of chain_gemm (AVX2 and FMA): the block FMA with every term held as an
// exact binary32 value, for the presets whose blocks fit (ada and hopper; chain_gemm_dispatch.cpp
// checks the bounds). A vector holds 8 output columns; a tile is 2 rows x 16 columns.
//
// Why it is exact, with u = 2^(E - frac) the unit of a block whose exponent is E:
// * An FP8 value and the product of two are exact in binary32 (at most 8 significant bits).
// * C = 2^(E - frac + 23) has ulp u. A term x (|x| < 2^(E + 2) <= C) added to C in the
//   round-toward-zero mode gives C + floor(|x| / u) * u exactly, so fma(|a|, |b|, C) - C is
//   the product truncated toward zero to a multiple of u (block-fma.md step 5), and the
//   subtraction is exact. The thread's MXCSR is set to round toward zero (no flush-to-zero,
//   no denormals-are-zero, exceptions masked) for the kernel and restored after it.
// * Every truncated term is a multiple of u and the sum of a block stays below 2^24 u (the
//   bound chain_gemm_dispatch.cpp checks), so every addition of the sum is exact.
// * A nonzero sum is a normal binary32 value here (results below 2^-100 go exact), so clearing
//   its 23 - frac_out lowest fraction bits rounds it toward zero to frac_out bits (step 7).
// The block exponent comes from byte exponents, 16 columns x 2 k per vector: a zero code's
// exponent (kZeroExpF) saturates the byte sum far below every product's (>= -28).

#include <algorithm>
#include <cstdint>

#include <immintrin.h>

#include "chain_gemm_kernels.hpp"
#include "mmaemu/emulator/specialize.hpp"

namespace mmaemu::model::cg {

namespace {

// E above this: only c's term is nonzero, and it is exact
constexpr int kMaxCExp = specialize::kF32KernelMaxCExp;

template <int MT>
__attribute__((target(MMAEMU_F32_TARGET), always_inline)) inline void f32_tile_impl(TileF32& t,
                                                                                    int r0) {
  const Plan& pl = *t.plan;
  const Segment& sg = *t.seg;
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 zero = _mm256_setzero_ps();
  const __m256i vmin = _mm256_set1_epi32(pl.min_exp);
  const __m256i no_term = _mm256_set1_epi32(kNoTermExpF);
  const __m256i cbias = _mm256_set1_epi32(127 + 23 - pl.frac); // C's exponent field: E + cbias
  const __m256i cmax = _mm256_set1_epi32(kMaxCExp);
  const __m256i low_field = _mm256_set1_epi32(127 + kLowestFastExp);
  const __m256 fo_mask =
      _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(~((1u << (23 - pl.fo)) - 1u))));
  const __m256i field_mask = _mm256_set1_epi32(0xFF);

  __m256 c[MT][2];
  __m256 bad[MT][2];
  for (int r = 0; r < MT; ++r) {
    for (int h = 0; h < 2; ++h) {
      c[r][h] = zero;
      bad[r][h] = zero;
    }
  }
  const PairFA* rows[MT];
  for (int r = 0; r < MT; ++r)
    rows[r] = t.row[r0 + r] + sg.off;
  const PairFB* panel = t.panel + sg.off;

  for (std::int64_t j = 0; j < sg.nblocks; ++j) {
    const std::int64_t kb = j * pl.nfma;
    const int kn = static_cast<int>(std::min<std::int64_t>(pl.nfma, sg.L - kb));
    const int np = (kn + 1) / 2;
    const PairFB* bq = panel + j * ppb;
    const PairFA* aq[MT];
    for (int r = 0; r < MT; ++r)
      aq[r] = rows[r] + j * ppb;

    // The block exponent of every column: the largest product exponent (bytes: k = 2q and
    // 2q + 1 of 16 columns), then min_exp and c.
    __m256i X[MT];
    for (int r = 0; r < MT; ++r)
      X[r] = _mm256_set1_epi8(-128);
    for (int q = 0; q < np; ++q) {
      const __m256i eb = _mm256_load_si256(reinterpret_cast<const __m256i*>(bq[q].exp));
      for (int r = 0; r < MT; ++r) {
        const __m256i e = _mm256_adds_epi8(eb, _mm256_set1_epi16(aq[r][q].exp));
        X[r] = _mm256_max_epi8(X[r], e);
      }
    }
    __m256 C[MT][2], S[MT][2];
    for (int r = 0; r < MT; ++r) {
      const __m256i even = _mm256_srai_epi16(_mm256_slli_epi16(X[r], 8), 8);
      const __m256i odd = _mm256_srai_epi16(X[r], 8);
      const __m256i col = _mm256_max_epi16(even, odd); // 16 columns, int16
      for (int h = 0; h < 2; ++h) {
        __m256i E = _mm256_cvtepi16_epi32(h == 0 ? _mm256_castsi256_si128(col)
                                                 : _mm256_extracti128_si256(col, 1));
        E = _mm256_blendv_epi8(vmin, E, _mm256_cmpgt_epi32(E, no_term)); // no product: none
        E = _mm256_max_epi32(E, vmin);
        // c's exponent (a zero c gives -127, which changes no term: there is none then).
        const __m256i ce = _mm256_sub_epi32(
            _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(c[r][h]), 23), field_mask),
            _mm256_set1_epi32(127));
        E = _mm256_max_epi32(E, ce);
        C[r][h] = _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_add_epi32(_mm256_min_epi32(E, cmax), cbias), 23));
        // c's term: |c| truncated to a multiple of u, with c's sign.
        const __m256 cabs = _mm256_andnot_ps(sign, c[r][h]);
        const __m256 tc = _mm256_sub_ps(_mm256_add_ps(cabs, C[r][h]), C[r][h]);
        S[r][h] = _mm256_or_ps(tc, _mm256_and_ps(c[r][h], sign));
      }
    }
    // Every product truncated toward zero to a multiple of u (fma in round-toward-zero, then
    // the exact subtraction of C), given its sign and added exactly. The truncation is also
    // written in block_fma.cpp (ScalarTerms::sum, Avx2Terms::sum), chain_gemm_lanes.cpp,
    // chain_gemm_i16_tile.inc and kernels/cuda/mmaemu_chain.cuh (truncate_term); the differential
    // tests that bind them: ChainGemmKernel (test_chain_gemm.cpp), KernelVariants and
    // BlockFmaKernels (test_block_fma.cpp) and HostKernel (kernels/tests/test_host_kernels.cpp).
    for (int q = 0; q < np; ++q) {
      for (int p = 0; p < 2; ++p) {
        __m256 am[MT], as[MT];
        for (int r = 0; r < MT; ++r) {
          am[r] = _mm256_broadcast_ss(&aq[r][q].mag[p]);
          as[r] = _mm256_broadcast_ss(reinterpret_cast<const float*>(&aq[r][q].sgn[p]));
        }
        for (int h = 0; h < 2; ++h) {
          const __m256 bm = _mm256_load_ps(bq[q].mag[p] + 8 * h);
          const __m256 bs = _mm256_load_ps(bq[q].sgn[p] + 8 * h);
          for (int r = 0; r < MT; ++r) {
            const __m256 y = _mm256_fmadd_ps(am[r], bm, C[r][h]);
            const __m256 tr = _mm256_sub_ps(y, C[r][h]);
            S[r][h] = _mm256_fmadd_ps(_mm256_xor_ps(bs, as[r]), tr, S[r][h]);
          }
        }
      }
    }
    // The sum rounded toward zero to frac_out fraction bits: the next c. A zero sum is +0;
    // a result below 2^-100 is recomputed exactly.
    for (int r = 0; r < MT; ++r) {
      for (int h = 0; h < 2; ++h) {
        const __m256 nz = _mm256_cmp_ps(S[r][h], zero, _CMP_NEQ_UQ);
        const __m256 m = _mm256_and_ps(_mm256_and_ps(S[r][h], fo_mask), nz);
        const __m256i field =
            _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(m), 23), field_mask);
        const __m256 low = _mm256_castsi256_ps(_mm256_cmpgt_epi32(low_field, field));
        bad[r][h] = _mm256_or_ps(bad[r][h], _mm256_and_ps(low, nz));
        c[r][h] = m;
      }
    }
  }
  for (int r = 0; r < MT; ++r) {
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_ps(reinterpret_cast<float*>(t.out[r0 + r] + 8 * h), c[r][h]);
    t.bad[r0 + r] = static_cast<std::uint16_t>(_mm256_movemask_ps(bad[r][0]) |
                                               (_mm256_movemask_ps(bad[r][1]) << 8));
  }
}

} // namespace

__attribute__((target(MMAEMU_F32_TARGET))) void f32_avx2(TileF32& t) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(kMxcsrTowardZero);
  int r = 0;
  for (; r + 2 <= t.rows; r += 2)
    f32_tile_impl<2>(t, r);
  if (r < t.rows)
    f32_tile_impl<1>(t, r);
  _mm_setcsr(saved);
}

} // namespace mmaemu::model::cg
