// SPDX-License-Identifier: BSD-2-Clause
// The lanes kernel of chain_gemm: 16 columns in 32-bit (or, for wide presets, 64-bit) lanes,
// written with GCC vector extensions so that one source compiles for AVX-512, AVX2 and the
// baseline. The 16 columns are H vectors of NL lanes each, NL chosen so a vector fills one
// native register (a wider generic vector lives in memory between operations), and every
// value, b's operands included, is held in the lane type: GCC 12 expands conversions between
// vector widths element by element.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "chain_gemm_kernels.hpp"

namespace mmaemu::model::cg {

namespace {

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
    // Every product truncated toward zero to a multiple of 2^(E - frac), summed exactly. The
    // truncation is also written in block_fma.cpp (ScalarTerms::sum, Avx2Terms::sum),
    // chain_gemm_i16_tile.inc and kernels/cuda/mmaemu_chain.cuh (truncate_term); the differential
    // tests that bind them: ChainGemmKernel (test_chain_gemm.cpp), KernelVariants and
    // BlockFmaKernels (test_block_fma.cpp) and HostKernel (kernels/tests/test_host_kernels.cpp).
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

} // namespace

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

} // namespace mmaemu::model::cg
