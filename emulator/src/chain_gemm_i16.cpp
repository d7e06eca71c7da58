// SPDX-License-Identifier: BSD-2-Clause
// The AVX-512 BW kernel of chain_gemm: 16-bit terms. Vector element 2c + p holds column c and
// k = 2q + p of pair q of a block; vpmaddwd multiplies each truncated term by its sign (+-1)
// and adds the two k of a column into its 32-bit sum. The ada/hopper terms fit in 16 bits
// (product significands <= 225, pre-shifted by G = frac - 6).

#include <algorithm>
#include <climits>
#include <cstdint>

// GCC 12's _mm512_undefined_* (inside many AVX-512 intrinsics) trips -Wmaybe-uninitialized
// (GCC bug 105593); the warning points into the header, so it is silenced for the header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include "chain_gemm_kernels.hpp"

namespace mmaemu::model::cg {

namespace {

template <int MT>
__attribute__((target(MMAEMU_AVX512_TARGET), always_inline)) inline void
i16_tile_impl(Tile<PairA, PairB>& t) {
  const Plan& pl = *t.plan;
  const Segment& sg = *t.seg;
  const std::int64_t pairs_per_block = (pl.nfma + 1) / 2;
  const __m512i zero = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i vmin = _mm512_set1_epi32(pl.min_exp);
  const __m512i lo16 = _mm512_set1_epi32(0xFFFF);
  const __m128i cpre = _mm_cvtsi32_si128(pl.cpre);
  const __m512i ebase = _mm512_set1_epi32(pl.bias + pl.frac); // e = (E + bias) - ebase + n
  const __m512i mtop = _mm512_set1_epi32(static_cast<int>((2u << pl.fo) - 1u));
  const __m512i vfo = _mm512_set1_epi32(pl.fo);

  __m512i cm[MT], ce[MT];
  __mmask16 cneg[MT], bad[MT];
  for (int r = 0; r < MT; ++r) {
    cm[r] = zero;
    ce[r] = vmin;
    cneg[r] = 0;
    bad[r] = 0;
  }
  for (std::int64_t j = 0; j < sg.nblocks; ++j) {
    const std::int64_t kb = j * pl.nfma;
    const int kn = static_cast<int>(std::min<std::int64_t>(pl.nfma, sg.L - kb));
    const int np = (kn + 1) / 2;
    const PairB* bq = t.panel + sg.off + j * pairs_per_block;
    const PairA* aq[MT];
    for (int r = 0; r < MT; ++r)
      aq[r] = t.row[r] + sg.off + j * pairs_per_block;

    __m512i X[MT], S[MT];
    for (int r = 0; r < MT; ++r)
      X[r] = _mm512_set1_epi16(-32768);
    for (int q = 0; q < np; ++q) {
      const __m512i eb = _mm512_load_si512(bq[q].exp);
      for (int r = 0; r < MT; ++r) {
        const __m512i e = _mm512_add_epi16(eb, _mm512_set1_epi32(static_cast<int>(aq[r][q].exp)));
        X[r] = _mm512_max_epi16(X[r], e);
      }
    }
    for (int r = 0; r < MT; ++r) {
      // Per column: the larger of its two k, then c and min_exp.
      __m512i E = _mm512_max_epi32(_mm512_srai_epi32(_mm512_slli_epi32(X[r], 16), 16),
                                   _mm512_srai_epi32(X[r], 16));
      E = _mm512_max_epi32(E, vmin);
      const __mmask16 cnz = _mm512_test_epi32_mask(cm[r], cm[r]);
      E = _mm512_mask_max_epi32(E, cnz, E, ce[r]);
      // c's term: a count above 31 shifts everything out (vpsrlvd), as it must.
      const __m512i sh = _mm512_add_epi32(_mm512_sub_epi32(E, ce[r]), _mm512_set1_epi32(pl.cshift));
      const __m512i tc = _mm512_srlv_epi32(cm[r], sh);
      S[r] = _mm512_mask_sub_epi32(tc, cneg[r], zero, tc);
      const __m512i x = _mm512_add_epi32(E, _mm512_set1_epi32(pl.bias));
      X[r] = _mm512_or_si512(_mm512_and_si512(x, lo16), _mm512_slli_epi32(x, 16));
    }
    for (int q = 0; q < np; ++q) {
      const __m512i mb = _mm512_load_si512(bq[q].mag);
      const __m512i eb = _mm512_load_si512(bq[q].exp);
      const __m512i sb = _mm512_load_si512(bq[q].sgn);
      for (int r = 0; r < MT; ++r) {
        const PairA& a = aq[r][q];
        const __m512i p = _mm512_mullo_epi16(mb, _mm512_set1_epi32(static_cast<int>(a.mag)));
        const __m512i e = _mm512_add_epi16(eb, _mm512_set1_epi32(static_cast<int>(a.exp)));
        // The truncation of a term; a count above 15 shifts everything out (vpsrlvw). Also
        // written in block_fma.cpp (ScalarTerms::sum, Avx2Terms::sum), chain_gemm_lanes.cpp
        // and kernels/cuda/mmaemu_chain.cuh (truncate_term); the differential tests that bind
        // them: ChainGemmKernel (test_chain_gemm.cpp), KernelVariants and BlockFmaKernels
        // (test_block_fma.cpp) and HostKernel (kernels/tests/test_host_kernels.cpp).
        const __m512i tr = _mm512_srlv_epi16(p, _mm512_sub_epi16(X[r], e));
        const __m512i s = _mm512_xor_si512(sb, _mm512_set1_epi32(static_cast<int>(a.sgn)));
        S[r] = _mm512_add_epi32(S[r], _mm512_madd_epi16(tr, s));
      }
    }
    for (int r = 0; r < MT; ++r) {
      const __mmask16 neg = _mm512_cmplt_epi32_mask(S[r], zero);
      const __m512i mag = _mm512_abs_epi32(S[r]);
      const __mmask16 nz = _mm512_test_epi32_mask(mag, mag);
      const __m512i n = _mm512_sub_epi32(_mm512_set1_epi32(31), _mm512_lzcnt_epi32(mag));
      const __m512i E = _mm512_srai_epi32(_mm512_slli_epi32(X[r], 16), 16); // E + bias
      __m512i e = _mm512_add_epi32(_mm512_sub_epi32(E, ebase), n);
      const __m512i rr = _mm512_sub_epi32(n, vfo);
      const __m512i rp = _mm512_max_epi32(rr, zero);
      const __m512i ln = _mm512_max_epi32(_mm512_sub_epi32(zero, rr), zero);
      __m512i m = _mm512_srlv_epi32(_mm512_sllv_epi32(mag, ln), rp);
      if (pl.rne) {
        const __m512i low = _mm512_sub_epi32(_mm512_sllv_epi32(one, rp), one);
        const __m512i rem = _mm512_and_si512(mag, low);
        const __m512i half = _mm512_srli_epi32(_mm512_add_epi32(low, one), 1);
        const __mmask16 up =
            _mm512_cmpgt_epi32_mask(rp, zero) &
            (_mm512_cmpgt_epu32_mask(rem, half) |
             (_mm512_cmpeq_epi32_mask(rem, half) & _mm512_test_epi32_mask(m, one)));
        m = _mm512_mask_add_epi32(m, up, m, one);
        const __mmask16 carry = _mm512_cmpgt_epi32_mask(m, mtop);
        m = _mm512_mask_srli_epi32(m, carry, m, 1);
        e = _mm512_mask_add_epi32(e, carry, e, one);
      }
      const __mmask16 out = nz & (_mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(kLowestFastExp)) |
                                  _mm512_cmpgt_epi32_mask(e, _mm512_set1_epi32(kHighestFastExp)));
      bad[r] |= out;
      const __mmask16 keep = nz & static_cast<__mmask16>(~out);
      cm[r] = _mm512_maskz_mov_epi32(keep, _mm512_sll_epi32(m, cpre));
      ce[r] = _mm512_mask_mov_epi32(vmin, keep, e);
      cneg[r] = neg & keep;
    }
  }
  const __m128i back = _mm_cvtsi32_si128(pl.cpre);
  const __m128i up = _mm_cvtsi32_si128(23 - pl.fo);
  for (int r = 0; r < MT; ++r) {
    const __m512i m = _mm512_srl_epi32(cm[r], back);
    __m512i bits =
        _mm512_add_epi32(_mm512_slli_epi32(_mm512_add_epi32(ce[r], _mm512_set1_epi32(126)), 23),
                         _mm512_sll_epi32(m, up));
    bits = _mm512_mask_or_epi32(bits, cneg[r], bits, _mm512_set1_epi32(INT32_MIN));
    bits = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(cm[r], cm[r]), bits);
    _mm512_storeu_si512(t.out[r], bits);
    t.bad[r] = bad[r];
  }
}

} // namespace

__attribute__((target(MMAEMU_AVX512_TARGET))) void i16_avx512(Tile<PairA, PairB>& t) {
  switch (t.rows) {
  case 8:
    i16_tile_impl<8>(t);
    break;
  case 4:
    i16_tile_impl<4>(t);
    break;
  case 2:
    i16_tile_impl<2>(t);
    break;
  default:
    i16_tile_impl<1>(t);
    break;
  }
}

} // namespace mmaemu::model::cg
