// SPDX-License-Identifier: BSD-2-Clause
// The AVX-512 BW kernel of chain_gemm without VNNI (i16_avx512; its text is
// chain_gemm_i16_tile.inc), and the AVX-512 decoders of its rows (decode_pair_run_avx512) and
// panels (decode_panel_run_avx512).

#define MMAEMU_I16_TARGET MMAEMU_AVX512_TARGET
#define MMAEMU_I16_ENTRY i16_avx512
#define MMAEMU_I16_VNNI 0
#include "chain_gemm_i16_tile.inc"

#include <array>

namespace mmaemu::model::cg {

static_assert(sizeof(PairA) == 12, "decode_pair_run_avx512 stores PairA as 3 packed dwords");

namespace {

// Where decode_pair_run_avx512 takes each output dword: dword g = 16 v + l of a step's three
// vectors is field g % 3 (mag, exp, sgn) of pair g / 3. `me` indexes the pair (mag, exp) of
// vpermt2d (exp from 16), `s` and the mask the sign's vpermd.
struct PairInterleave {
  alignas(64) std::int32_t me[3][16];
  alignas(64) std::int32_t s[3][16];
  std::uint16_t s_mask[3];
};

constexpr PairInterleave pair_interleave() {
  PairInterleave t{};
  for (int v = 0; v < 3; ++v) {
    for (int l = 0; l < 16; ++l) {
      const int g = 16 * v + l, q = g / 3, f = g % 3;
      t.me[v][l] = f == 1 ? 16 + q : q;
      t.s[v][l] = q;
      if (f == 2)
        t.s_mask[v] = static_cast<std::uint16_t>(t.s_mask[v] | (1u << l));
    }
  }
  return t;
}

constexpr PairInterleave kPairInterleave = pair_interleave();

// A table of 128 16-bit entries (a field of PairCodes16) in four vectors: 32 codes (16-bit
// words, bit 7 ignored) are looked up by two vpermi2w, one per 64-entry half, and a blend on
// bit 6.
struct Table128 {
  __m512i q0, q1, q2, q3;

  __attribute__((target(MMAEMU_AVX512_TARGET), always_inline)) static Table128
  load(const std::uint16_t* t) {
    return {_mm512_load_si512(t), _mm512_load_si512(t + 32), _mm512_load_si512(t + 64),
            _mm512_load_si512(t + 96)};
  }

  // high: the words whose code has bit 6 set.
  __attribute__((target(MMAEMU_AVX512_TARGET), always_inline)) __m512i
  operator()(__m512i w, __mmask32 high) const {
    return _mm512_mask_blend_epi16(high, _mm512_permutex2var_epi16(q0, w, q1),
                                   _mm512_permutex2var_epi16(q2, w, q3));
  }
};

} // namespace

// 16 pairs (32 codes) per step: each code's 16-bit magnitude, exponent, special flag and
// negative sign looked up by its low 7 bits in two 64-entry halves (vpermi2w, then a blend on
// bit 6), the sign kept where bit 7 is set (RowCode::sgn); the three vectors of 16 dwords
// (a pair's low and high code in the low and high halves) interleaved into 16 PairA. The last
// step loads and stores under masks.
__attribute__((target(MMAEMU_AVX512_TARGET))) bool
decode_pair_run_avx512(const Plan& pl, const std::uint8_t* codes, std::size_t n, PairA* dst) {
  const PairCodes16& t = *pl.row16;
  const Table128 mags = Table128::load(t.mag), exps = Table128::load(t.exp),
                 specials = Table128::load(t.special), signs = Table128::load(t.sgn_neg);
  const __m512i bit6 = _mm512_set1_epi16(0x40);
  const __m512i bit7 = _mm512_set1_epi16(static_cast<short>(0x80));
  const __m512i offset_parts = _mm512_set1_epi32(
      static_cast<int>(pair_sign_offset(true, false) | pair_sign_offset(false, true) << 16));
  const __m512i ones = _mm512_set1_epi16(1);
  __m512i any_special = _mm512_setzero_si512();
  auto* out = reinterpret_cast<std::int32_t*>(dst);
  for (std::size_t i = 0; i < n; i += 16) {
    const std::size_t pairs = std::min<std::size_t>(16, n - i);
    const __mmask32 in_mask =
        pairs == 16 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (2 * pairs)) - 1u);
    const __m512i w = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in_mask, codes + 2 * i));
    const __mmask32 high = _mm512_test_epi16_mask(w, bit6);
    const __m512i mag = mags(w, high);
    const __m512i exp = exps(w, high);
    any_special = _mm512_or_si512(any_special, specials(w, high));
    // A negative code's offset part (64 for the low code of a pair, 128 for the high one),
    // summed per pair by vpmaddwd: pair_sign_offset.
    const __m512i sgn = _mm512_madd_epi16(
        _mm512_maskz_and_epi32(
            0xFFFF, _mm512_maskz_mov_epi16(_mm512_test_epi16_mask(w, bit7), signs(w, high)),
            offset_parts),
        ones);
    const std::size_t dwords = 3 * pairs;
    for (int v = 0; v < 3; ++v) {
      const __m512i me =
          _mm512_permutex2var_epi32(mag, _mm512_load_si512(kPairInterleave.me[v]), exp);
      const __m512i o = _mm512_mask_permutexvar_epi32(me, kPairInterleave.s_mask[v],
                                                      _mm512_load_si512(kPairInterleave.s[v]), sgn);
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

namespace {

// A 16 x 16 matrix of dwords, row i in r[i], transposed in place.
__attribute__((target(MMAEMU_AVX512_TARGET), always_inline)) inline void
transpose16x16_epi32(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8) {
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
  }
}

// Word c of the low half takes word 2c, word c of the high half word 2c + 1.
constexpr std::array<std::int16_t, 32> even_then_odd_words() {
  std::array<std::int16_t, 32> t{};
  for (int c = 0; c < 16; ++c) {
    t[static_cast<std::size_t>(c)] = static_cast<std::int16_t>(2 * c);
    t[static_cast<std::size_t>(16 + c)] = static_cast<std::int16_t>(2 * c + 1);
  }
  return t;
}

alignas(64) constexpr std::array<std::int16_t, 32> kEvenThenOdd = even_then_odd_words();

} // namespace

// 32 pairs of 16 columns per step: each column's 64 codes loaded as 16 dwords (two pairs
// each), the 16 x 16 dwords transposed so that a vector holds two pairs of every column, split
// into one pair of every column per half (word c: the pair's two codes), and each pair decoded
// like decode_pair_run_avx512's codes (two vpermi2w and a blend on bit 6 per field); the four
// sign patterns from the sign bit and the pattern's lanes (k = 2q: even words, 2q + 1: odd).
__attribute__((target(MMAEMU_AVX512_TARGET))) std::uint16_t
decode_panel_run_avx512(const Plan& pl, const std::uint8_t* const* cols, std::size_t n,
                        PairB* dst) {
  const PairCodes16& t = *pl.panel16;
  const Table128 mags = Table128::load(t.mag), exps = Table128::load(t.exp),
                 specials = Table128::load(t.special);
  const __m512i bit6 = _mm512_set1_epi16(0x40);
  const __m512i bit7 = _mm512_set1_epi16(static_cast<short>(0x80));
  const __m512i plus = _mm512_set1_epi16(1), minus = _mm512_set1_epi16(-1);
  const __m512i split = _mm512_load_si512(kEvenThenOdd.data());
  constexpr __mmask32 kEven = 0x55555555u, kOdd = 0xAAAAAAAAu;
  __m512i any_special = _mm512_setzero_si512();
  for (std::size_t i = 0; i < n; i += 32) {
    const std::size_t pairs = std::min<std::size_t>(32, n - i);
    const __mmask64 in_mask = pairs == 32 ? ~__mmask64{0} : (__mmask64{1} << (2 * pairs)) - 1u;
    __m512i r[16];
    for (int c = 0; c < 16; ++c)
      r[c] = _mm512_maskz_loadu_epi8(in_mask, cols[c] + 2 * i);
    transpose16x16_epi32(r);
    for (std::size_t q = 0; q < pairs; ++q) {
      const __m512i two = _mm512_permutexvar_epi16(split, r[q / 2]);
      const __m256i codes = q % 2 ? _mm512_extracti64x4_epi64(two, 1) : _mm512_castsi512_si256(two);
      const __m512i w = _mm512_cvtepu8_epi16(codes);
      const __mmask32 high = _mm512_test_epi16_mask(w, bit6);
      PairB& e = dst[i + q];
      _mm512_store_si512(e.mag, mags(w, high));
      _mm512_store_si512(e.exp, exps(w, high));
      any_special = _mm512_or_si512(any_special, specials(w, high));
      const __mmask32 neg = _mm512_test_epi16_mask(w, bit7);
      for (int s = 0; s < 4; ++s) {
        const __mmask32 flip = (s & 1 ? kEven : 0u) | (s & 2 ? kOdd : 0u);
        _mm512_store_si512(e.sgn[s], _mm512_mask_blend_epi16(neg ^ flip, plus, minus));
      }
    }
  }
  // Column c's codes are words 2c and 2c + 1.
  const __mmask32 words = _mm512_test_epi16_mask(any_special, any_special);
  std::uint16_t special = 0;
  for (int c = 0; c < 16; ++c) {
    if ((words >> (2 * c)) & 3u)
      special = static_cast<std::uint16_t>(special | 1u << c);
  }
  return special;
}

} // namespace mmaemu::model::cg
