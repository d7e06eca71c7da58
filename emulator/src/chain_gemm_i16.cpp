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

static_assert(sizeof(PairA) == 12, "decode_pair_run_avx512 stores PairA as 3 packed dwords");

// 16 pairs (32 codes) per step: each code's 16-bit magnitude, exponent, special flag and
// negative sign looked up by its low 7 bits in two 64-entry halves (vpermi2w, then a blend on
// bit 6), the sign kept where bit 7 is set (RowCode::sgn); the three vectors of 16 dwords
// (a pair's low and high code in the low and high halves) interleaved into 16 PairA. The last
// step loads and stores under masks.
__attribute__((target(MMAEMU_AVX512_TARGET))) bool
decode_pair_run_avx512(const Plan& pl, const std::uint8_t* codes, std::size_t n, PairA* dst) {
  const PairCodes16& t = *pl.row16;
  const __m512i mag0 = _mm512_load_si512(t.mag), mag1 = _mm512_load_si512(t.mag + 32),
                mag2 = _mm512_load_si512(t.mag + 64), mag3 = _mm512_load_si512(t.mag + 96);
  const __m512i exp0 = _mm512_load_si512(t.exp), exp1 = _mm512_load_si512(t.exp + 32),
                exp2 = _mm512_load_si512(t.exp + 64), exp3 = _mm512_load_si512(t.exp + 96);
  const __m512i spc0 = _mm512_load_si512(t.special), spc1 = _mm512_load_si512(t.special + 32),
                spc2 = _mm512_load_si512(t.special + 64), spc3 = _mm512_load_si512(t.special + 96);
  const __m512i sgn0 = _mm512_load_si512(t.sgn_neg), sgn1 = _mm512_load_si512(t.sgn_neg + 32),
                sgn2 = _mm512_load_si512(t.sgn_neg + 64), sgn3 = _mm512_load_si512(t.sgn_neg + 96);
  const __m512i bit6 = _mm512_set1_epi16(0x40);
  const __m512i bit7 = _mm512_set1_epi16(static_cast<short>(0x80));
  // Output dword g = 16 v + l of a step is field g % 3 (mag, exp, sgn) of pair g / 3.
  alignas(64) std::int32_t me_idx[3][16], s_idx[3][16];
  __mmask16 s_mask[3] = {0, 0, 0};
  for (int v = 0; v < 3; ++v) {
    for (int l = 0; l < 16; ++l) {
      const int g = 16 * v + l, q = g / 3, f = g % 3;
      me_idx[v][l] = f == 1 ? 16 + q : q;
      s_idx[v][l] = q;
      if (f == 2)
        s_mask[v] = static_cast<__mmask16>(s_mask[v] | (1u << l));
    }
  }
  __m512i any_special = _mm512_setzero_si512();
  auto* out = reinterpret_cast<std::int32_t*>(dst);
  for (std::size_t i = 0; i < n; i += 16) {
    const std::size_t pairs = std::min<std::size_t>(16, n - i);
    const __mmask32 in_mask =
        pairs == 16 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (2 * pairs)) - 1u);
    const __m512i w = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in_mask, codes + 2 * i));
    const __mmask32 high = _mm512_test_epi16_mask(w, bit6);
    const __m512i mag = _mm512_mask_blend_epi16(high, _mm512_permutex2var_epi16(mag0, w, mag1),
                                                _mm512_permutex2var_epi16(mag2, w, mag3));
    const __m512i exp = _mm512_mask_blend_epi16(high, _mm512_permutex2var_epi16(exp0, w, exp1),
                                                _mm512_permutex2var_epi16(exp2, w, exp3));
    const __m512i spc = _mm512_mask_blend_epi16(high, _mm512_permutex2var_epi16(spc0, w, spc1),
                                                _mm512_permutex2var_epi16(spc2, w, spc3));
    any_special = _mm512_or_si512(any_special, spc);
    const __m512i sgn = _mm512_maskz_mov_epi16(
        _mm512_test_epi16_mask(w, bit7),
        _mm512_mask_blend_epi16(high, _mm512_permutex2var_epi16(sgn0, w, sgn1),
                                _mm512_permutex2var_epi16(sgn2, w, sgn3)));
    const std::size_t dwords = 3 * pairs;
    for (int v = 0; v < 3; ++v) {
      const __m512i me = _mm512_permutex2var_epi32(mag, _mm512_load_si512(me_idx[v]), exp);
      const __m512i o =
          _mm512_mask_permutexvar_epi32(me, s_mask[v], _mm512_load_si512(s_idx[v]), sgn);
      const std::size_t first = 16 * static_cast<std::size_t>(v);
      if (dwords >= first + 16) {
        _mm512_storeu_si512(out + 3 * i + first, o);
      } else if (dwords > first) {
        const auto m = static_cast<__mmask16>((1u << (dwords - first)) - 1u);
        _mm512_mask_storeu_epi32(out + 3 * i + first, m, o);
      }
    }
  }
  return _mm512_test_epi16_mask(any_special, any_special) != 0;
}

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
