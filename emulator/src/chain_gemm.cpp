// SPDX-License-Identifier: BSD-2-Clause
// chain_gemm: the block-FMA chain (block-fma.md) of every output of a GEMM, bit for bit what
// model::dot computes, at GEMM speed.
//
// Why it is fast:
// * Each row of a and of b is decoded once per call into planar integers (magnitude
//   significand, alignment exponent, sign), so the inner loops never touch a table.
// * The lanes of a vector are 16 output columns n of one row m: a[m][k] is a broadcast
//   scalar, and the block's max exponent, the truncating shifts, the exact sum and the
//   rounding of a block result to frac_out bits are all lane-parallel. Between blocks each
//   lane keeps its accumulator c decomposed (significand, exponent, sign), never as binary32.
// * A tile of up to 8 rows keeps its state in registers for the whole chain over K; tiles
//   walk a group of b panels that stays in L2 while a chunk of rows of a is reused.
// * The ada/hopper terms fit in 16 bits (product significands <= 225, pre-shifted by
//   G = frac - 6), so on AVX-512 BW one vector holds 16 columns x 2 consecutive k, and
//   vpmaddwd applies the signs and adds the pair into 32-bit sums in one instruction.
// Why it stays exact: the arithmetic is the integer arithmetic of block_fma.cpp, reordered
// only where integer addition is associative. Whatever a fast kernel cannot represent
// (late_c, subnormal or overflowing block results, non-finite codes) is recomputed for that
// output by model::dot itself.

#include "mmaemu/emulator/chain_gemm.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

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

#include "chain_gemm_internal.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/f32_arith.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"

namespace mmaemu::model {

namespace {

constexpr int kLanes = 16;  // output columns per panel and per vector
constexpr int kMaxRows = 8; // rows of a tile

// Exponents given to zero operands: low enough that a zero pair never sets a block exponent.
// Every real term lies above -101 (products: >= -28; c: a result below 2^-100 is sent to the
// exact path), while a zero pair stays below -112 in both layouts.
constexpr int kZeroExpA = -1000;
constexpr int kZeroExpB8 = -128;
constexpr int kZeroExp16 = -1000;
constexpr double kMinMacsPerThread = 2e6;
constexpr int kLowestFastExp = -100; // block results outside [2^-100, 2^128) go exact
constexpr int kHighestFastExp = 127;

// One chunk of a plan: a chain from +0 over [k0, k0 + L) in nblocks blocks, decoded from entry
// `off` of every decoded row and panel (the chunks of a call are decoded one after the other).
struct Segment {
  std::size_t k0;
  std::int64_t L;
  std::int64_t nblocks;
  std::size_t off;
};

// The constants of one call.
struct Plan {
  const GemmOperands* op;   // the kernels' view: rows of op->a against panels of op->b
  const GemmOperands* orig; // the caller's operands (op is orig with a and b swapped when
  bool transposed;          // a has few rows: then the kernels' rows are orig's columns)
  const Preset* preset;
  std::vector<Segment> segs;
  std::vector<std::pair<std::size_t, std::size_t>> parts; // [first, end) of segs, per part
  std::uint32_t (*promote)(std::uint32_t, std::uint32_t); // null: fast accumulation
  std::size_t lane_stride, pair_stride;                   // decoded entries of a row or panel
  int nfma;
  int frac, fo; // term and result fraction bits
  int G;        // products are pre-shifted left by G
  int bias;     // a product's right shift is E - e + bias
  int cpre;     // c is kept as its frac_out-bit significand shifted left by cpre ...
  int cshift;   // ... and its term is that >> (E - ec + cshift)
  int min_exp;
  bool rne;
};

int max_mant(Format f) {
  int m = 0;
  for (const Fp8Operand& o : fp8_operand_table(f)) {
    if (o.cls == static_cast<std::uint8_t>(ValueClass::finite))
      m = std::max<int>(m, o.mant);
  }
  return m;
}

// The largest product term (|significand product| << G) and the largest |S| a block can
// reach: every product term at its maximum plus c's term (c's significand << cpre).
struct Bounds {
  unsigned __int128 product, sum;
};

Bounds bounds_of(const Preset& p, FormatPair fmt) {
  const int s0 = p.frac - spec(fmt.a).frac_bits - spec(fmt.b).frac_bits;
  const int G = std::max(s0, 0);
  const int cpre = std::max(p.frac - p.frac_out, 0);
  const auto product = static_cast<unsigned __int128>(max_mant(fmt.a) * max_mant(fmt.b)) << G;
  const auto c = ((static_cast<unsigned __int128>(1) << (p.frac_out + 1)) - 1) << cpre;
  return {product, product * static_cast<unsigned>(p.nfma) + c};
}

// ---------------------------------------------------------------------------------------
// Lanes kernel: 16 columns in 32-bit (or, for wide presets, 64-bit) lanes, written with GCC
// vector extensions so that one source compiles for AVX-512, AVX2 and the baseline. The 16
// columns are H vectors of NL lanes each, NL chosen so a vector fills one native register (a
// wider generic vector lives in memory between operations), and every value, b's operands
// included, is held in the lane type: GCC 12 expands conversions between vector widths
// element by element.

struct LaneA {      // a[m][k]: broadcast to the 16 lanes
  std::int32_t mag; // |significand| (<< G when the lanes are 32-bit)
  std::int32_t exp; // alignment exponent, kZeroExpA for a zero
  std::int32_t sgn; // 0 or -1
};

// b[n][k] for the 16 columns n of a panel, one lane each: |significand| in bits 0-7, the
// alignment exponent (kZeroExpB8 for a zero) in bits 8-15, the sign in the top bit.
template <class T> struct alignas(64) LaneB { T lane[kLanes]; };

template <class T> T pack_lane(int mag, int exp, bool neg) {
  using U = std::make_unsigned_t<T>;
  const U top = U{1} << (sizeof(T) * 8 - 1);
  return static_cast<T>(static_cast<U>(mag) | (static_cast<U>(exp & 0xFF) << 8) | (neg ? top : 0));
}

// One tile: `rows` rows of a against one panel of b.
template <class A, class B> struct Tile {
  const Plan* plan;
  const Segment* seg;     // the chunk to compute
  const A* row[kMaxRows]; // decoded rows
  const B* panel;
  int rows;
  std::uint32_t out[kMaxRows][kLanes]; // binary32 bits
  std::uint16_t bad[kMaxRows];         // lanes that must be recomputed exactly
};

// A GCC vector of `Bytes` bytes. (A vector_size typedef inside a function template is not
// applied by GCC 12; inside a class template it is.)
template <class T, int Bytes> struct Vec { typedef T type __attribute__((vector_size(Bytes))); };

// T: the lane type; NL lanes per vector; MT rows.
template <class T, int NL, int MT>
[[gnu::always_inline]] inline void lanes_tile_impl(Tile<LaneA, LaneB<T>>& t) {
  using V = typename Vec<T, sizeof(T) * NL>::type;
  constexpr int W = sizeof(T) * 8;
  constexpr int H = kLanes / NL;
  const Plan& pl = *t.plan;
  const Segment& sg = *t.seg;
  const V vmin = V{} + pl.min_exp;

  V cm[MT][H], ce[MT][H], cneg[MT][H], bad[MT][H];
  for (int r = 0; r < MT; ++r) {
    for (int h = 0; h < H; ++h) {
      cm[r][h] = V{};
      cneg[r][h] = V{};
      ce[r][h] = vmin;
      bad[r][h] = V{};
    }
  }
  for (std::int64_t j = 0; j < sg.nblocks; ++j) {
    const std::int64_t kb = j * pl.nfma;
    const int kn = static_cast<int>(std::min<std::int64_t>(pl.nfma, sg.L - kb));
    const LaneB<T>* bb = t.panel + sg.off + kb;
    const LaneA* ab[MT];
    for (int r = 0; r < MT; ++r)
      ab[r] = t.row[r] + sg.off + kb;

    // The block exponent: c (when nonzero), min_exp and every product exponent.
    V E[MT][H];
    for (int r = 0; r < MT; ++r) {
      for (int h = 0; h < H; ++h) {
        E[r][h] = ((cm[r][h] != 0) & (ce[r][h] > vmin)) ? ce[r][h] : vmin;
      }
    }
    for (int k = 0; k < kn; ++k) {
      for (int h = 0; h < H; ++h) {
        V x;
        std::memcpy(&x, bb[k].lane + h * NL, sizeof x);
        const V eb = (x << (W - 16)) >> (W - 8);
        for (int r = 0; r < MT; ++r) {
          const V e = eb + ab[r][k].exp;
          E[r][h] = e > E[r][h] ? e : E[r][h];
        }
      }
    }
    // c's truncated term starts the sum.
    V S[MT][H], X[MT][H];
    for (int r = 0; r < MT; ++r) {
      for (int h = 0; h < H; ++h) {
        V sh = E[r][h] - ce[r][h] + pl.cshift;
        sh = sh < W - 1 ? sh : W - 1;
        sh = sh > 0 ? sh : 0;
        const V tc = cm[r][h] >> sh;
        S[r][h] = (tc ^ cneg[r][h]) - cneg[r][h];
        X[r][h] = E[r][h] + pl.bias;
      }
    }
    // Every product truncated toward zero to a multiple of 2^(E - frac), summed exactly.
    for (int k = 0; k < kn; ++k) {
      for (int h = 0; h < H; ++h) {
        V x;
        std::memcpy(&x, bb[k].lane + h * NL, sizeof x);
        const V mb = x & 0xFF;
        const V eb = (x << (W - 16)) >> (W - 8);
        const V sb = x >> (W - 1);
        for (int r = 0; r < MT; ++r) {
          const LaneA a = ab[r][k];
          V d = X[r][h] - a.exp - eb;
          d = d < W - 1 ? d : W - 1;
          V p = mb * a.mag;
          if constexpr (W == 64)
            p <<= pl.G;
          const V tr = p >> d;
          const V s = sb ^ a.sgn;
          S[r][h] += (tr ^ s) - s;
        }
      }
    }
    // Round |S| * 2^(E - frac) to frac_out bits; keep it decomposed as the next c.
    for (int r = 0; r < MT; ++r) {
      for (int h = 0; h < H; ++h) {
        const V neg = S[r][h] < 0;
        const V mag = neg ? -S[r][h] : S[r][h];
        V n = V{};
        V v = mag;
        for (int s = W / 2; s >= 1; s /= 2) {
          const V hi = (v >> s) != 0;
          n += hi & s;
          v = hi ? v >> s : v;
        }
        V e = E[r][h] - pl.frac + n;
        const V rr = n - pl.fo;
        const V rp = rr > 0 ? rr : 0;
        const V ln = rr < 0 ? -rr : 0;
        V m = (mag << ln) >> rp;
        if (pl.rne) {
          const V low = ((V{} + 1) << rp) - 1;
          const V rem = mag & low;
          const V half = (low + 1) >> 1;
          const V up = (rp > 0) & ((rem > half) | ((rem == half) & ((m & 1) != 0)));
          m -= up; // up is -1 where the significand rounds up
          const V carry = (m >> (pl.fo + 1)) != 0;
          m = carry ? m >> 1 : m;
          e -= carry;
        }
        const V nz = mag != 0;
        const V out = nz & ((e < kLowestFastExp) | (e > kHighestFastExp));
        bad[r][h] |= out;
        const V keep = nz & ~out;
        cm[r][h] = keep & (m << pl.cpre);
        ce[r][h] = keep ? e : vmin;
        cneg[r][h] = neg & keep;
      }
    }
  }
  for (int r = 0; r < MT; ++r) {
    std::uint16_t mask = 0;
    for (int l = 0; l < kLanes; ++l) {
      const int h = l / NL, i = l % NL;
      const auto c = static_cast<std::uint64_t>(cm[r][h][i]);
      std::uint32_t bits = 0;
      if (c != 0) {
        const auto m = static_cast<std::uint32_t>(c >> pl.cpre);
        bits = (static_cast<std::uint32_t>(ce[r][h][i] + 126) << 23) + (m << (23 - pl.fo));
        if (cneg[r][h][i])
          bits |= 0x80000000u;
      }
      t.out[r][l] = bits;
      if (bad[r][h][i])
        mask = static_cast<std::uint16_t>(mask | (1u << l));
    }
    t.bad[r] = mask;
  }
}

// Runs `rows` rows as tiles of MT rows, then single rows. VB: bytes of a native vector
// register; MT: rows whose state fits the register file.
template <class T, int VB, int MT>
[[gnu::always_inline]] inline void lanes_tile_dispatch(Tile<LaneA, LaneB<T>>& t) {
  constexpr int NL = VB / static_cast<int>(sizeof(T));
  for (int r0 = 0; r0 < t.rows;) {
    const int n = t.rows - r0 >= MT ? MT : 1;
    Tile<LaneA, LaneB<T>> sub;
    sub.plan = t.plan;
    sub.seg = t.seg;
    sub.panel = t.panel;
    sub.rows = n;
    for (int r = 0; r < n; ++r)
      sub.row[r] = t.row[r0 + r];
    if (n == MT) {
      lanes_tile_impl<T, NL, MT>(sub);
    } else {
      lanes_tile_impl<T, NL, 1>(sub);
    }
    for (int r = 0; r < n; ++r) {
      std::memcpy(t.out[r0 + r], sub.out[r], sizeof sub.out[r]);
      t.bad[r0 + r] = sub.bad[r];
    }
    r0 += n;
  }
}

constexpr int kLaneRows = 4; // rows of a lanes tile

using Tile32 = Tile<LaneA, LaneB<std::int32_t>>;
using Tile64 = Tile<LaneA, LaneB<std::int64_t>>;

#define MMAEMU_AVX512_TARGET "avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define MMAEMU_AVX2_TARGET "avx2"

// 256-bit vectors even with AVX-512: GCC 12 expands 512-bit vector comparisons element by
// element (they yield mask registers), while AVX-512VL still gives 32 registers and 64-bit
// arithmetic shifts to 256-bit code.
__attribute__((target(MMAEMU_AVX512_TARGET))) void lanes32_avx512(Tile32& t) {
  lanes_tile_dispatch<std::int32_t, 32, 4>(t);
}
__attribute__((target(MMAEMU_AVX512_TARGET))) void lanes64_avx512(Tile64& t) {
  lanes_tile_dispatch<std::int64_t, 32, 2>(t);
}
__attribute__((target(MMAEMU_AVX2_TARGET))) void lanes32_avx2(Tile32& t) {
  lanes_tile_dispatch<std::int32_t, 32, 2>(t);
}
__attribute__((target(MMAEMU_AVX2_TARGET))) void lanes64_avx2(Tile64& t) {
  lanes_tile_dispatch<std::int64_t, 32, 1>(t);
}
void lanes32_base(Tile32& t) {
  lanes_tile_dispatch<std::int32_t, 16, 1>(t);
}
void lanes64_base(Tile64& t) {
  lanes_tile_dispatch<std::int64_t, 16, 1>(t);
}

// ---------------------------------------------------------------------------------------
// AVX-512 BW kernel: 16-bit terms. Vector element 2c + p holds column c and k = 2q + p of
// pair q of a block; vpmaddwd multiplies each truncated term by its sign (+-1) and adds the
// two k of a column into its 32-bit sum.

struct PairA {       // a[m][2q], a[m][2q + 1] in the low and high halves
  std::uint32_t mag; // |significand| << G
  std::uint32_t exp; // alignment exponents, kZeroExp16 for a zero
  std::uint32_t sgn; // 0x0000 or 0xFFFE: XOR with b's +1 / -1 gives the product's sign
};

struct alignas(64) PairB {
  std::int16_t mag[2 * kLanes];
  std::int16_t exp[2 * kLanes];
  std::int16_t sgn[2 * kLanes]; // +1 or -1 (0x0001 / 0xFFFF)
};

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
        // A count above 15 shifts everything out (vpsrlvw).
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

// ---------------------------------------------------------------------------------------
// Dispatch.

using detail::ChainKernel;

std::atomic<int> g_forced{static_cast<int>(ChainKernel::automatic)};
std::atomic<std::size_t> g_slab_bytes{0};

bool cpu_has_avx512() {
  // __builtin_cpu_init: this may run before the constructors that would otherwise do it.
  static const bool ok = (__builtin_cpu_init(), true) && __builtin_cpu_supports("avx512f") &&
                         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
                         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return ok;
}

bool cpu_has_avx2() {
  static const bool ok = (__builtin_cpu_init(), true) && __builtin_cpu_supports("avx2");
  return ok;
}

bool cpu_can(ChainKernel k) {
  switch (k) {
  case ChainKernel::avx512_i16:
  case ChainKernel::lanes_avx512:
    return cpu_has_avx512();
  case ChainKernel::lanes_avx2:
    return cpu_has_avx2();
  default:
    return true;
  }
}

struct Choice {
  ChainKernel kernel;
  bool wide; // lanes kernels: 64-bit lanes
};

Choice choose(const Preset& p, FormatPair fmt) {
  const auto forced = static_cast<ChainKernel>(g_forced.load(std::memory_order_relaxed));
  if (p.late_c || forced == ChainKernel::exact)
    return {ChainKernel::exact, false};
  const Bounds b = bounds_of(p, fmt);
  const auto two = [](int e) { return static_cast<unsigned __int128>(1) << e; };
  if (b.sum >= two(62))
    return {ChainKernel::exact, false}; // not with frac <= kMaxFrac
  const bool fits32 = b.sum < two(31);
  const bool fits16 = fits32 && b.product < two(15); // vpmaddwd multiplies signed 16-bit
  ChainKernel k = forced;
  if (k == ChainKernel::automatic) {
    k = cpu_has_avx512() ? ChainKernel::avx512_i16
        : cpu_has_avx2() ? ChainKernel::lanes_avx2
                         : ChainKernel::lanes_base;
  }
  if (k == ChainKernel::avx512_i16 && !fits16)
    k = ChainKernel::lanes_avx512;
  return {k, !fits32};
}

// Runs f on `n` threads (the caller's included); f takes its work from shared counters, so
// fewer threads (if one cannot be started) only make it slower.
template <class F> void run_parallel(unsigned n, const F& f) {
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < n; ++i) {
    try {
      pool.emplace_back(f);
    } catch (const std::system_error&) {
      break;
    }
  }
  f();
  for (std::thread& th : pool)
    th.join();
}

// One chunk of output (row, col) of the kernels' view through model::dot, on the caller's
// operands in the caller's orientation.
std::uint32_t exact_chunk(const Plan& pl, const Segment& sg, std::size_t row, std::size_t col) {
  const GemmOperands& op = *pl.orig;
  const std::size_t m = pl.transposed ? col : row;
  const std::size_t n = pl.transposed ? row : col;
  const auto L = static_cast<std::size_t>(sg.L);
  return dot(std::span(op.a + m * op.lda + sg.k0, L), std::span(op.b + n * op.ldb + sg.k0, L), 0u,
             *pl.preset, op.fmt);
}

constexpr auto kFinite = static_cast<std::uint8_t>(ValueClass::finite);

// Decoding, chunk after chunk (codes: a row or column from k = 0). The row decoders return
// true if some code of the row is not finite (its outputs go exact).

// A code of the rows' format as the row decoders write it, with `special` set for NaN and
// Inf codes (which are written as zeros). Built once per call from the operand table.
struct RowCode {
  LaneA lane;                  // lanes kernels (|significand| << shift)
  std::uint16_t mag, exp, sgn; // the AVX-512 kernel's 16-bit halves of a PairA
  std::uint8_t special;
};

std::array<RowCode, 256> row_codes(const Fp8Operand* tab, int lane_shift, int G) {
  std::array<RowCode, 256> t{};
  for (std::size_t c = 0; c < 256; ++c) {
    const Fp8Operand o = tab[c];
    RowCode& r = t[c];
    r.special = o.cls > kFinite;
    if (o.cls == kFinite) {
      r.lane = {static_cast<std::int32_t>(o.mant) << lane_shift, o.ea,
                -static_cast<std::int32_t>(o.neg)};
      r.mag = static_cast<std::uint16_t>(o.mant << G);
      r.exp = static_cast<std::uint16_t>(o.ea);
      r.sgn = o.neg ? 0xFFFEu : 0u;
    } else {
      r.lane = {0, kZeroExpA, 0};
      r.mag = 0;
      r.exp = static_cast<std::uint16_t>(kZeroExp16);
      r.sgn = 0;
    }
  }
  return t;
}

bool decode_lane_row(const Plan& pl, const std::uint8_t* codes, const RowCode* tab, LaneA* dst) {
  unsigned special = 0;
  for (const Segment& sg : pl.segs) {
    const std::uint8_t* c = codes + sg.k0;
    LaneA* d = dst + sg.off;
    for (std::int64_t k = 0; k < sg.L; ++k) {
      const RowCode& r = tab[c[k]];
      special |= r.special;
      d[k] = r.lane;
    }
  }
  return special != 0;
}

// Columns n0 .. n0 + 15 of b (those < N) into one panel; sets col_special for each column.
template <class T>
void decode_lane_panel(const Plan& pl, std::size_t n0, const Fp8Operand* tab, LaneB<T>* dst,
                       std::uint8_t* col_special) {
  const GemmOperands& op = *pl.op;
  const T zero = pack_lane<T>(0, kZeroExpB8, false);
  for (std::size_t k = 0; k < pl.lane_stride; ++k)
    std::fill_n(dst[k].lane, kLanes, zero);
  for (int c = 0; c < kLanes && n0 + c < op.N; ++c) {
    const std::uint8_t* codes = op.b + (n0 + c) * op.ldb;
    bool special = false;
    for (const Segment& sg : pl.segs) {
      for (std::int64_t k = 0; k < sg.L; ++k) {
        const Fp8Operand o = tab[codes[sg.k0 + static_cast<std::size_t>(k)]];
        special |= o.cls > kFinite;
        if (o.cls == kFinite)
          dst[sg.off + static_cast<std::size_t>(k)].lane[c] =
              pack_lane<T>(o.mant, o.ea, o.neg != 0);
      }
    }
    col_special[n0 + c] = special;
  }
}

bool decode_pair_row(const Plan& pl, const std::uint8_t* codes, const RowCode* tab, PairA* dst) {
  static constexpr RowCode kPad = {
      {0, kZeroExpA, 0}, 0, static_cast<std::uint16_t>(kZeroExp16), 0, 0};
  unsigned special = 0;
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  for (const Segment& sg : pl.segs) {
    const std::uint8_t* c = codes + sg.k0;
    PairA* d = dst + sg.off;
    for (std::int64_t j = 0; j < sg.nblocks; ++j) {
      const std::int64_t kb = j * pl.nfma;
      const std::int64_t kend = kb + std::min<std::int64_t>(pl.nfma, sg.L - kb);
      for (std::int64_t q = 0; q < ppb; ++q) {
        const std::int64_t k = kb + 2 * q;
        const RowCode& lo = k < kend ? tab[c[k]] : kPad;
        const RowCode& hi = k + 1 < kend ? tab[c[k + 1]] : kPad;
        special |= static_cast<unsigned>(lo.special | hi.special);
        d[j * ppb + q] = {lo.mag | static_cast<std::uint32_t>(hi.mag) << 16,
                          lo.exp | static_cast<std::uint32_t>(hi.exp) << 16,
                          lo.sgn | static_cast<std::uint32_t>(hi.sgn) << 16};
      }
    }
  }
  return special != 0;
}

void decode_pair_panel(const Plan& pl, std::size_t n0, const Fp8Operand* tab, PairB* dst,
                       std::uint8_t* col_special) {
  const GemmOperands& op = *pl.op;
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  for (std::size_t i = 0; i < pl.pair_stride; ++i) {
    for (int x = 0; x < 2 * kLanes; ++x) {
      dst[i].mag[x] = 0;
      dst[i].exp[x] = kZeroExp16;
      dst[i].sgn[x] = 1;
    }
  }
  for (int c = 0; c < kLanes && n0 + c < op.N; ++c) {
    const std::uint8_t* codes = op.b + (n0 + c) * op.ldb;
    bool special = false;
    for (const Segment& sg : pl.segs) {
      for (std::int64_t j = 0; j < sg.nblocks; ++j) {
        const std::int64_t kb = j * pl.nfma;
        const std::int64_t kn = std::min<std::int64_t>(pl.nfma, sg.L - kb);
        for (std::int64_t i = 0; i < kn; ++i) {
          const Fp8Operand o = tab[codes[sg.k0 + static_cast<std::size_t>(kb + i)]];
          special |= o.cls > kFinite;
          if (o.cls != kFinite)
            continue;
          PairB& e = dst[sg.off + static_cast<std::size_t>(j * ppb + i / 2)];
          const int x = 2 * c + static_cast<int>(i % 2);
          e.mag[x] = o.mant;
          e.exp[x] = o.ea;
          e.sgn[x] = o.neg ? -1 : 1;
        }
      }
    }
    col_special[n0 + c] = special;
  }
}

// Where the parts of output (row, col) of the kernels' view go: part[s][row * ldr + col * ldc].
struct Outputs {
  std::uint32_t* const* part;
  std::size_t ldr, ldc;
};

// The shipped promotion (promote_fp32_add: an IEEE binary32 add, round to nearest even) is
// the CPU's SSE add whenever the thread's SSE environment is the default one: round to
// nearest, no flush-to-zero, no denormals-are-zero, every exception masked. Then a row of
// chunk results is promoted with vector adds, and a NaN sum (only Inf + -Inf can make one)
// becomes promote_fp32_add's canonical NaN. Any other promotion is called value by value.
bool hardware_promotes(const Plan& pl) {
  return pl.promote == &promote_fp32_add && (_mm_getcsr() & 0xFFC0u) == 0x1F80u;
}

void promote_row(const Plan& pl, bool hardware, std::uint32_t* acc, const std::uint32_t* chunk,
                 int cols) {
  if (hardware) {
    for (int l = 0; l < kLanes; ++l) {
      const auto sum = std::bit_cast<std::uint32_t>(std::bit_cast<float>(acc[l]) +
                                                    std::bit_cast<float>(chunk[l]));
      acc[l] = (sum & 0x7FFFFFFFu) > 0x7F800000u ? kF32CanonicalNaN : sum;
    }
  } else {
    for (int l = 0; l < cols; ++l)
      acc[l] = pl.promote(acc[l], chunk[l]);
  }
}

// Every part of the outputs of one tile (rows row0 .. row0 + t.rows - 1 of the kernels' view
// against the panel of columns col0 .. col0 + 15): chunk after chunk through the kernel, a
// chunk that the kernel cannot represent (t.bad) or whose row or column holds a non-finite
// code recomputed by model::dot, then promoted into the part's accumulator.
template <class A, class B, class Kernel>
void tile_outputs(const Plan& pl, Tile<A, B>& t, bool hardware, std::size_t row0, std::size_t col0,
                  const std::uint8_t* row_special, const std::uint8_t* col_special, Kernel kernel,
                  const Outputs& out) {
  const int cols = static_cast<int>(std::min<std::size_t>(kLanes, pl.op->N - col0));
  std::uint16_t col_mask = 0;
  for (int l = 0; l < cols; ++l)
    col_mask = static_cast<std::uint16_t>(col_mask | (col_special[col0 + l] ? 1u << l : 0u));
  std::uint16_t special[kMaxRows];
  for (int r = 0; r < t.rows; ++r)
    special[r] = row_special[r] ? std::uint16_t{0xFFFF} : col_mask;

  alignas(64) std::uint32_t acc[kMaxRows][kLanes];
  for (std::size_t s = 0; s < pl.parts.size(); ++s) {
    for (int r = 0; r < t.rows; ++r)
      std::fill_n(acc[r], kLanes, 0u);
    for (std::size_t g = pl.parts[s].first; g < pl.parts[s].second; ++g) {
      t.seg = &pl.segs[g];
      kernel(t);
      for (int r = 0; r < t.rows; ++r) {
        const unsigned exact = static_cast<unsigned>(t.bad[r] | special[r]);
        for (int l = 0; exact && l < cols; ++l) {
          if ((exact >> l) & 1u)
            t.out[r][l] = exact_chunk(pl, pl.segs[g], row0 + static_cast<std::size_t>(r),
                                      col0 + static_cast<std::size_t>(l));
        }
        if (pl.promote)
          promote_row(pl, hardware, acc[r], t.out[r], cols);
        else
          std::memcpy(acc[r], t.out[r], sizeof acc[r]);
      }
    }
    std::uint32_t* dst = out.part[s];
    for (int r = 0; r < t.rows; ++r) {
      for (int l = 0; l < cols; ++l) {
        dst[(row0 + static_cast<std::size_t>(r)) * out.ldr +
            (col0 + static_cast<std::size_t>(l)) * out.ldc] = acc[r][l];
      }
    }
  }
}

// Decodes the operands and runs every tile; every output is computed by one tile whatever the
// thread count, so the bits do not depend on it. The decoded operands take several bytes per
// code, so the work is arranged to keep them small and in cache:
// * Streaming (the panels of the whole call fit in kGroupBytes, e.g. a few rows of a against
//   many of b, once transposed): the panels are decoded once; each thread then takes
//   kStreamRows rows at a time, decodes them into its own buffer (in L1/L2) and runs them
//   against every panel. Nothing of the size of the operands is allocated.
// * Slabs (otherwise): slabs of rows and of panels of at most kSlabBytes decoded each (b is
//   decoded again for every slab of rows; a slab holds thousands of rows, so that costs
//   little). Within a slab the work items are row chunks x panel groups taken from a shared
//   counter, consecutive items sharing a panel group: the group (about kGroupBytes) stays in
//   L2 across the row tiles of several chunks, and so does a tile of rows across the group.
constexpr std::size_t kSlabBytes = std::size_t{16} << 20;
constexpr std::size_t kGroupBytes = std::size_t{512} << 10;
constexpr std::size_t kChunkRows = 64;
constexpr std::size_t kStreamRows = 16;

// The rows of a tile starting at m0 below m_hi: tile_rows, halved until they fit.
int tile_rows_at(int tile_rows, std::size_t m0, std::size_t m_hi) {
  auto rows = static_cast<std::size_t>(tile_rows);
  while (rows > m_hi - m0)
    rows /= 2;
  return static_cast<int>(rows);
}

template <class A, class B, class Kernel, class DecodeRow, class DecodePanel>
void run_tiled(const Plan& pl, std::size_t stride, int tile_rows, unsigned threads,
               const Outputs& out, Kernel kernel, DecodeRow decode_row, DecodePanel decode_panel) {
  const GemmOperands& op = *pl.op;
  const std::size_t npanels = (op.N + kLanes - 1) / kLanes;
  const std::size_t row_bytes = std::max<std::size_t>(stride * sizeof(A), 1);
  const std::size_t panel_bytes = std::max<std::size_t>(stride * sizeof(B), 1);
  const std::size_t forced = g_slab_bytes.load(std::memory_order_relaxed);
  const std::size_t slab_bytes = forced ? forced : kSlabBytes;
  std::vector<std::uint8_t> col_special(op.N);

  if (!forced && npanels * panel_bytes <= kGroupBytes) {
    auto bdec = std::make_unique_for_overwrite<B[]>(npanels * stride);
    std::atomic<std::size_t> next_panel{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, npanels)), [&] {
      for (std::size_t pn; (pn = next_panel.fetch_add(1, std::memory_order_relaxed)) < npanels;)
        decode_panel(pn * kLanes, bdec.get() + pn * stride, col_special.data());
    });
    const std::size_t items = (op.M + kStreamRows - 1) / kStreamRows;
    std::atomic<std::size_t> next{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, items)), [&] {
      auto adec = std::make_unique_for_overwrite<A[]>(kStreamRows * stride);
      std::uint8_t row_special[kStreamRows];
      const bool hardware = hardware_promotes(pl);
      Tile<A, B> t;
      t.plan = &pl;
      for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
        const std::size_t m_lo = i * kStreamRows;
        const std::size_t m_hi = std::min(op.M, m_lo + kStreamRows);
        for (std::size_t m = m_lo; m < m_hi; ++m)
          row_special[m - m_lo] = decode_row(op.a + m * op.lda, adec.get() + (m - m_lo) * stride);
        for (std::size_t m0 = m_lo; m0 < m_hi; m0 += static_cast<std::size_t>(t.rows)) {
          t.rows = tile_rows_at(tile_rows, m0, m_hi);
          for (int r = 0; r < t.rows; ++r)
            t.row[r] = adec.get() + (m0 + static_cast<std::size_t>(r) - m_lo) * stride;
          for (std::size_t pn = 0; pn < npanels; ++pn) {
            t.panel = bdec.get() + pn * stride;
            tile_outputs(pl, t, hardware, m0, pn * kLanes, row_special + (m0 - m_lo),
                         col_special.data(), kernel, out);
          }
        }
      }
    });
    return;
  }

  const std::size_t group =
      std::clamp<std::size_t>(std::min(kGroupBytes, slab_bytes) / panel_bytes, 1, npanels);
  const std::size_t slab_rows =
      std::min(op.M, std::max(kChunkRows, slab_bytes / row_bytes / kChunkRows * kChunkRows));
  const std::size_t slab_panels =
      std::min(npanels, std::max(group, slab_bytes / panel_bytes / group * group));
  auto adec = std::make_unique_for_overwrite<A[]>(slab_rows * stride);
  auto bdec = std::make_unique_for_overwrite<B[]>(slab_panels * stride);
  std::vector<std::uint8_t> row_special(op.M);

  for (std::size_t m_lo = 0; m_lo < op.M; m_lo += slab_rows) {
    const std::size_t m_hi = std::min(op.M, m_lo + slab_rows);
    for (std::size_t p_lo = 0; p_lo < npanels; p_lo += slab_panels) {
      const std::size_t p_hi = std::min(npanels, p_lo + slab_panels);
      const std::size_t rows = p_lo == 0 ? m_hi - m_lo : 0; // a: once per slab of rows
      const std::size_t decode_items = rows + (p_hi - p_lo);
      std::atomic<std::size_t> next_decode{0};
      run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, decode_items)), [&] {
        for (std::size_t i;
             (i = next_decode.fetch_add(1, std::memory_order_relaxed)) < decode_items;) {
          if (i < rows) {
            const std::size_t m = m_lo + i;
            row_special[m] = decode_row(op.a + m * op.lda, adec.get() + i * stride);
          } else {
            const std::size_t pn = p_lo + (i - rows);
            decode_panel(pn * kLanes, bdec.get() + (pn - p_lo) * stride, col_special.data());
          }
        }
      });

      const std::size_t ngroups = (p_hi - p_lo + group - 1) / group;
      const std::size_t nchunks = (m_hi - m_lo + kChunkRows - 1) / kChunkRows;
      const std::size_t items = ngroups * nchunks;
      std::atomic<std::size_t> next{0};
      run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, items)), [&] {
        const bool hardware = hardware_promotes(pl);
        Tile<A, B> t;
        t.plan = &pl;
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
          const std::size_t c_lo = m_lo + (i % nchunks) * kChunkRows;
          const std::size_t c_hi = std::min(m_hi, c_lo + kChunkRows);
          const std::size_t g_lo = p_lo + (i / nchunks) * group;
          const std::size_t g_hi = std::min(p_hi, g_lo + group);
          for (std::size_t m0 = c_lo; m0 < c_hi; m0 += static_cast<std::size_t>(t.rows)) {
            t.rows = tile_rows_at(tile_rows, m0, c_hi);
            for (int r = 0; r < t.rows; ++r)
              t.row[r] = adec.get() + (m0 + static_cast<std::size_t>(r) - m_lo) * stride;
            for (std::size_t pn = g_lo; pn < g_hi; ++pn) {
              t.panel = bdec.get() + (pn - p_lo) * stride;
              tile_outputs(pl, t, hardware, m0, pn * kLanes, row_special.data() + m0,
                           col_special.data(), kernel, out);
            }
          }
        }
      });
    }
  }
}

// The plan output by output through model::dot, rows [m_lo, m_hi).
void simple_rows(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                 std::uint32_t* const* outs, std::size_t ldo, std::size_t m_lo, std::size_t m_hi) {
  for (std::size_t m = m_lo; m < m_hi; ++m) {
    for (std::size_t n = 0; n < op.N; ++n) {
      for (std::size_t s = 0; s < plan.parts.size(); ++s) {
        std::uint32_t acc = 0u;
        for (const KRange& c : plan.parts[s]) {
          const std::size_t L = c.second - c.first;
          const std::uint32_t v = dot(std::span(op.a + m * op.lda + c.first, L),
                                      std::span(op.b + n * op.ldb + c.first, L), 0u, p, op.fmt);
          acc = plan.promote ? plan.promote(acc, v) : v;
        }
        outs[s][m * ldo + n] = acc;
      }
    }
  }
}

void check_plan(const GemmOperands& op, const ChainPlan& plan) {
  for (std::size_t s = 0; s < plan.parts.size(); ++s) {
    const auto& chunks = plan.parts[s];
    if (!plan.promote && chunks.size() > 1) {
      throw ValueError("chain_gemm_plan: part " + std::to_string(s) + " has " +
                       std::to_string(chunks.size()) +
                       " chunks but there is no promotion (fast accumulation takes one)");
    }
    for (const KRange& c : chunks) {
      if (c.first > c.second || c.second > op.K) {
        throw ValueError("chain_gemm_plan: part " + std::to_string(s) + ": the chunk [" +
                         std::to_string(c.first) + ", " + std::to_string(c.second) +
                         ") is not within K = " + std::to_string(op.K));
      }
    }
  }
}

// Below this many rows of a (and more columns of b than rows of a), the kernels run on the
// transposed problem: out^T = b a^T. The block FMA is symmetric in its two operands (products,
// exponent sums, truncation), so the chains are the same; the few rows of a become the panels,
// decoded once, and b's rows are streamed through them.
constexpr std::size_t kTransposeBelowRows = 256;

} // namespace

namespace detail {

const char* chain_kernel_name(ChainKernel k) {
  switch (k) {
  case ChainKernel::automatic:
    return "automatic";
  case ChainKernel::avx512_i16:
    return "avx512_i16";
  case ChainKernel::lanes_avx512:
    return "lanes_avx512";
  case ChainKernel::lanes_avx2:
    return "lanes_avx2";
  case ChainKernel::lanes_base:
    return "lanes_base";
  case ChainKernel::exact:
    return "exact";
  }
  return "?";
}

bool force_chain_kernel(ChainKernel k) {
  if (!cpu_can(k))
    return false;
  g_forced.store(static_cast<int>(k), std::memory_order_relaxed);
  return true;
}

ChainKernel chain_kernel_for(const Preset& p, FormatPair fmt) {
  return choose(p, fmt).kernel;
}

void force_chain_slab_bytes(std::size_t bytes) {
  g_slab_bytes.store(bytes, std::memory_order_relaxed);
}

} // namespace detail

void chain_gemm_simple(const GemmOperands& op, std::size_t k0, std::size_t k1, const Preset& p,
                       std::uint32_t* out, std::size_t ldo) {
  const std::size_t L = k1 - k0;
  for (std::size_t m = 0; m < op.M; ++m) {
    for (std::size_t n = 0; n < op.N; ++n) {
      out[m * ldo + n] = dot(std::span(op.a + m * op.lda + k0, L),
                             std::span(op.b + n * op.ldb + k0, L), 0u, p, op.fmt);
    }
  }
}

void chain_gemm_plan_simple(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                            std::uint32_t* const* outs, std::size_t ldo) {
  check_plan(op, plan);
  simple_rows(op, plan, p, outs, ldo, 0, op.M);
}

void chain_gemm(const GemmOperands& op, std::size_t k0, std::size_t k1, const Preset& p,
                std::uint32_t* out, std::size_t ldo, unsigned threads) {
  if (k0 > k1 || k1 > op.K) {
    throw ValueError("chain_gemm: the k range [" + std::to_string(k0) + ", " + std::to_string(k1) +
                     ") is not within K = " + std::to_string(op.K));
  }
  ChainPlan plan;
  plan.parts.push_back({KRange{k0, k1}});
  chain_gemm_plan(op, plan, p, &out, ldo, threads);
}

void chain_gemm_plan(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                     std::uint32_t* const* outs, std::size_t ldo, unsigned threads) {
  check_plan(op, plan);
  if (op.M == 0 || op.N == 0 || plan.parts.empty())
    return;
  if (!is_fp8(op.fmt.a) || !is_fp8(op.fmt.b)) {
    simple_rows(op, plan, p, outs, ldo, 0, op.M); // throws dot's ValueError
    return;
  }
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());

  Plan pl{};
  pl.orig = &op;
  pl.preset = &p;
  pl.promote = plan.promote;
  pl.nfma = p.nfma;
  double macs = 0;
  for (const auto& chunks : plan.parts) {
    const std::size_t first = pl.segs.size();
    for (const KRange& c : chunks) {
      const auto L = static_cast<std::int64_t>(c.second - c.first);
      pl.segs.push_back({c.first, L, (L + p.nfma - 1) / p.nfma, 0});
      macs += static_cast<double>(L);
    }
    pl.parts.emplace_back(first, pl.segs.size());
  }
  // Below a few million MACs, starting threads costs more than it saves.
  macs *= static_cast<double>(op.M) * static_cast<double>(op.N);
  if (macs < kMinMacsPerThread)
    threads = 1;
  const std::int64_t ppb = (p.nfma + 1) / 2;
  for (Segment& sg : pl.segs) {
    pl.lane_stride += static_cast<std::size_t>(sg.L);
    pl.pair_stride += static_cast<std::size_t>(sg.nblocks * ppb);
  }
  pl.frac = p.frac;
  pl.fo = p.frac_out;
  const int s0 = p.frac - spec(op.fmt.a).frac_bits - spec(op.fmt.b).frac_bits;
  pl.G = std::max(s0, 0);
  pl.bias = pl.G - s0;
  pl.cpre = std::max(p.frac - p.frac_out, 0);
  pl.cshift = std::max(p.frac_out - p.frac, 0);
  pl.min_exp = p.min_exp;
  pl.rne = p.rounding == BlockRounding::nearest_even;

  const Choice ch = choose(p, op.fmt);
  if (ch.kernel == ChainKernel::exact) {
    std::atomic<std::size_t> next{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, op.M)), [&] {
      for (std::size_t m; (m = next.fetch_add(1, std::memory_order_relaxed)) < op.M;)
        simple_rows(op, plan, p, outs, ldo, m, m + 1);
    });
    return;
  }

  // The kernels' view: a's rows against panels of b's columns, or transposed.
  pl.transposed = op.M < kTransposeBelowRows && op.N > op.M;
  GemmOperands view = op;
  if (pl.transposed) {
    view = {op.b, op.ldb, op.a, op.lda, op.N, op.M, op.K, {op.fmt.b, op.fmt.a}};
  }
  pl.op = &view;
  const Outputs out{outs, pl.transposed ? 1 : ldo, pl.transposed ? ldo : 1};
  const Fp8Operand* tpanel = fp8_operand_table(view.fmt.b).data();
  // 32-bit lanes carry G in the row's significand; 64-bit lanes shift each product by G.
  const std::array<RowCode, 256> trow =
      row_codes(fp8_operand_table(view.fmt.a).data(), ch.wide ? 0 : pl.G, pl.G);

  if (ch.kernel == ChainKernel::avx512_i16) {
    std::size_t off = 0;
    for (Segment& sg : pl.segs) {
      sg.off = off;
      off += static_cast<std::size_t>(sg.nblocks * ppb);
    }
    run_tiled<PairA, PairB>(
        pl, pl.pair_stride, kMaxRows, threads, out, i16_avx512,
        [&](const std::uint8_t* codes, PairA* dst) {
          return decode_pair_row(pl, codes, trow.data(), dst);
        },
        [&](std::size_t n0, PairB* dst, std::uint8_t* cs) {
          decode_pair_panel(pl, n0, tpanel, dst, cs);
        });
    return;
  }

  std::size_t off = 0;
  for (Segment& sg : pl.segs) {
    sg.off = off;
    off += static_cast<std::size_t>(sg.L);
  }
  const auto decode_row = [&pl, &trow](const std::uint8_t* codes, LaneA* dst) {
    return decode_lane_row(pl, codes, trow.data(), dst);
  };
  if (ch.wide) { // 64-bit lanes shift each product by G
    void (*kernel)(Tile64&) = ch.kernel == ChainKernel::lanes_avx512 ? lanes64_avx512
                              : ch.kernel == ChainKernel::lanes_avx2 ? lanes64_avx2
                                                                     : lanes64_base;
    run_tiled<LaneA, LaneB<std::int64_t>>(
        pl, pl.lane_stride, kLaneRows, threads, out, kernel, decode_row,
        [&](std::size_t n0, LaneB<std::int64_t>* dst, std::uint8_t* cs) {
          decode_lane_panel(pl, n0, tpanel, dst, cs);
        });
  } else { // 32-bit lanes carry G in a's significand
    void (*kernel)(Tile32&) = ch.kernel == ChainKernel::lanes_avx512 ? lanes32_avx512
                              : ch.kernel == ChainKernel::lanes_avx2 ? lanes32_avx2
                                                                     : lanes32_base;
    run_tiled<LaneA, LaneB<std::int32_t>>(
        pl, pl.lane_stride, kLaneRows, threads, out, kernel, decode_row,
        [&](std::size_t n0, LaneB<std::int32_t>* dst, std::uint8_t* cs) {
          decode_lane_panel(pl, n0, tpanel, dst, cs);
        });
  }
}

} // namespace mmaemu::model
