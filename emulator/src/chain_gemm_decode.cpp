// SPDX-License-Identifier: BSD-2-Clause
// Decoding for chain_gemm: each row of a and each panel of 16 columns of b into the planar
// integers of a kernel's layout (magnitude significand, alignment exponent, sign), chunk after
// chunk of the plan, each chunk from its own start so that its blocks are its own. NaN and Inf
// codes are written as zeros and reported, so that their outputs go exact.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "chain_gemm_kernels.hpp"

namespace mmaemu::model::cg {

std::array<RowCode, 256> row_codes(const Fp8Operand* tab, Format f, int lane_shift, int G) {
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
      r.fmag = std::ldexp(static_cast<float>(o.mant), o.ea - spec(f).frac_bits);
      r.fsgn = o.neg ? 0x80000000u : 0u;
      r.fexp = o.ea;
    } else {
      r.lane = {0, kZeroExpA, 0};
      r.mag = 0;
      r.exp = static_cast<std::uint16_t>(kZeroExp16);
      r.sgn = 0;
      r.fmag = 0.0f;
      r.fsgn = 0;
      r.fexp = kZeroExpF;
    }
  }
  return t;
}

bool decode_lane_row(const Plan& pl, const std::uint8_t* codes, LaneA* dst) {
  const RowCode* tab = pl.row_tab;
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
void decode_lane_panel(const Plan& pl, std::size_t n0, LaneB<T>* dst, std::uint8_t* col_special) {
  const Fp8Operand* tab = pl.panel_tab;
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

template void decode_lane_panel<std::int32_t>(const Plan&, std::size_t, LaneB<std::int32_t>*,
                                              std::uint8_t*);
template void decode_lane_panel<std::int64_t>(const Plan&, std::size_t, LaneB<std::int64_t>*,
                                              std::uint8_t*);

namespace {

// Visits the code pairs (k, k + 1) of blocks j0 .. nblocks - 1 of segment sg of one row of a
// (c: the row's codes from the segment's start), in the order of the row's decoded layout; a
// block's last pair, and a short block, are padded with `pad`. `put(i, lo, hi)` stores pair i
// of the layout. Returns whether some code is NaN or Inf.
template <class Put>
bool code_pairs_of_blocks(const Plan& pl, const Segment& sg, const std::uint8_t* c, std::int64_t j0,
                          const RowCode& pad, Put put) {
  const RowCode* tab = pl.row_tab;
  unsigned special = 0;
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  for (std::int64_t j = j0; j < sg.nblocks; ++j) {
    const std::int64_t kb = j * pl.nfma;
    const std::int64_t kend = kb + std::min<std::int64_t>(pl.nfma, sg.L - kb);
    for (std::int64_t q = 0; q < ppb; ++q) {
      const std::int64_t k = kb + 2 * q;
      const RowCode& lo = k < kend ? tab[c[k]] : pad;
      const RowCode& hi = k + 1 < kend ? tab[c[k + 1]] : pad;
      special |= static_cast<unsigned>(lo.special | hi.special);
      put(sg.off + static_cast<std::size_t>(j * ppb + q), lo, hi);
    }
  }
  return special != 0;
}

// Every block of every segment of one row through code_pairs_of_blocks. Both row decoders
// (the 16-bit pairs and the binary32 pairs) walk the row this way.
template <class Put>
bool for_each_code_pair(const Plan& pl, const std::uint8_t* codes, const RowCode& pad, Put put) {
  bool special = false;
  for (const Segment& sg : pl.segs)
    special |= code_pairs_of_blocks(pl, sg, codes + sg.k0, 0, pad, put);
  return special;
}

} // namespace

bool pair_codes16(const RowCode* tab, PairCodes16& out) {
  for (std::size_t c = 0; c < 128; ++c) {
    const RowCode& pos = tab[c];
    const RowCode& neg = tab[c | 0x80];
    // The vector decoder looks up the low 7 bits and takes the sign's table where bit 7 is set.
    if (pos.mag != neg.mag || pos.exp != neg.exp || pos.special != neg.special || pos.sgn != 0)
      return false;
    out.mag[c] = pos.mag;
    out.exp[c] = pos.exp;
    out.special[c] = pos.special ? 0xFFFFu : 0u;
    out.sgn_neg[c] = neg.sgn;
  }
  return true;
}

namespace {

constexpr RowCode kPairPad = {
    {0, kZeroExpA, 0}, 0, static_cast<std::uint16_t>(kZeroExp16), 0, 0, 0.0f, 0, kZeroExpF};

void put_pair(PairA* dst, std::size_t i, const RowCode& lo, const RowCode& hi) {
  dst[i] = {lo.mag | static_cast<std::uint32_t>(hi.mag) << 16,
            lo.exp | static_cast<std::uint32_t>(hi.exp) << 16,
            pair_sign_offset(lo.sgn != 0, hi.sgn != 0)};
}

} // namespace

bool decode_pair_row(const Plan& pl, const std::uint8_t* codes, PairA* dst) {
  const auto put = [dst](std::size_t i, const RowCode& lo, const RowCode& hi) {
    put_pair(dst, i, lo, hi);
  };
  if (pl.row16 == nullptr || pl.nfma % 2 != 0)
    return for_each_code_pair(pl, codes, kPairPad, put);
  // With nfma even the full blocks of a segment are one run of pairs without padding: they
  // go through the vector decoder, the segment's last short block (padded) through the table.
  bool special = false;
  for (const Segment& sg : pl.segs) {
    const std::uint8_t* c = codes + sg.k0;
    const std::int64_t full = sg.L / pl.nfma;
    if (full > 0)
      special |= decode_pair_run_avx512(pl, c, static_cast<std::size_t>(full * (pl.nfma / 2)),
                                        dst + sg.off);
    special |= code_pairs_of_blocks(pl, sg, c, full, kPairPad, put);
  }
  return special;
}

bool panel_codes16(const Fp8Operand* tab, int exp_offset, PairCodes16& out) {
  for (std::size_t c = 0; c < 128; ++c) {
    const Fp8Operand pos = tab[c], neg = tab[c | 0x80];
    if (pos.mant != neg.mant || pos.ea != neg.ea || pos.cls != neg.cls)
      return false;
    const bool finite = pos.cls == kFinite;
    out.mag[c] = finite ? pos.mant : 0;
    out.exp[c] = static_cast<std::uint16_t>(finite ? pos.ea + exp_offset : kZeroExp16);
    out.special[c] = pos.cls > kFinite ? 0xFFFFu : 0u;
    out.sgn_neg[c] = 0;
  }
  return true;
}

namespace {

void clear_pairs(PairB* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    for (int x = 0; x < 2 * kLanes; ++x) {
      dst[i].mag[x] = 0;
      dst[i].exp[x] = kZeroExp16;
      for (auto& pattern : dst[i].sgn)
        pattern[x] = 1;
    }
  }
}

// Blocks j0 .. of segment sg of column c of a panel from the column's codes (from k = 0), into
// cleared pairs: a finite code's significand and exponent, every code's signs. Returns whether
// a code is NaN or Inf.
bool panel_column_blocks(const Plan& pl, const Segment& sg, std::int64_t j0, int c,
                         const std::uint8_t* codes, PairB* dst) {
  const Fp8Operand* tab = pl.panel_tab;
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  bool special = false;
  for (std::int64_t j = j0; j < sg.nblocks; ++j) {
    const std::int64_t kb = j * pl.nfma;
    const std::int64_t kn = std::min<std::int64_t>(pl.nfma, sg.L - kb);
    for (std::int64_t i = 0; i < kn; ++i) {
      const Fp8Operand o = tab[codes[sg.k0 + static_cast<std::size_t>(kb + i)]];
      special |= o.cls > kFinite;
      PairB& e = dst[sg.off + static_cast<std::size_t>(j * ppb + i / 2)];
      const int x = 2 * c + static_cast<int>(i % 2);
      for (int s = 0; s < 4; ++s) {
        const bool a_neg = ((s >> (i % 2)) & 1) != 0;
        e.sgn[s][x] = static_cast<std::int16_t>((o.neg != 0) != a_neg ? -1 : 1);
      }
      if (o.cls != kFinite)
        continue;
      e.mag[x] = o.mant;
      e.exp[x] = static_cast<std::int16_t>(o.ea + pl.b_exp_offset);
    }
  }
  return special;
}

} // namespace

void decode_pair_panel(const Plan& pl, std::size_t n0, PairB* dst, std::uint8_t* col_special) {
  const GemmOperands& op = *pl.op;
  const int cols = static_cast<int>(std::min<std::size_t>(kLanes, op.N - n0));
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  std::uint16_t special = 0;
  if (pl.panel16 != nullptr && pl.nfma % 2 == 0 && cols == kLanes) {
    // The full blocks of each segment through the vector decoder, its short last block (if
    // any) through the table.
    for (const Segment& sg : pl.segs) {
      const std::int64_t full = sg.L / pl.nfma;
      const std::uint8_t* starts[kLanes];
      for (int c = 0; c < kLanes; ++c)
        starts[c] = op.b + (n0 + static_cast<std::size_t>(c)) * op.ldb + sg.k0;
      if (full > 0)
        special |=
            decode_panel_run_avx512(pl, starts, static_cast<std::size_t>(full * ppb), dst + sg.off);
      if (full == sg.nblocks)
        continue;
      clear_pairs(dst + sg.off + static_cast<std::size_t>(full * ppb),
                  static_cast<std::size_t>(ppb));
      for (int c = 0; c < kLanes; ++c) {
        if (panel_column_blocks(pl, sg, full, c, op.b + (n0 + static_cast<std::size_t>(c)) * op.ldb,
                                dst))
          special = static_cast<std::uint16_t>(special | 1u << c);
      }
    }
  } else {
    clear_pairs(dst, pl.pair_stride);
    for (int c = 0; c < cols; ++c) {
      for (const Segment& sg : pl.segs) {
        if (panel_column_blocks(pl, sg, 0, c, op.b + (n0 + static_cast<std::size_t>(c)) * op.ldb,
                                dst))
          special = static_cast<std::uint16_t>(special | 1u << c);
      }
    }
  }
  for (int c = 0; c < cols; ++c)
    col_special[n0 + static_cast<std::size_t>(c)] = (special >> c) & 1u;
}

std::array<PanelCodeF, 256> panel_codes_f32(const Fp8Operand* tab, Format f) {
  std::array<PanelCodeF, 256> t{};
  for (std::size_t c = 0; c < 256; ++c) {
    const Fp8Operand o = tab[c];
    PanelCodeF& p = t[c];
    p.special = o.cls > kFinite;
    if (o.cls == kFinite) {
      p.mag = std::ldexp(static_cast<float>(o.mant), o.ea - spec(f).frac_bits);
      p.sgn = o.neg ? -1.0f : 1.0f;
      p.exp = o.ea;
    } else {
      p.mag = 0.0f;
      p.sgn = 1.0f;
      p.exp = kZeroExpF;
    }
  }
  return t;
}

bool decode_f32_row(const Plan& pl, const std::uint8_t* codes, PairFA* dst) {
  RowCode pad{};
  pad.fexp = kZeroExpF;
  return for_each_code_pair(
      pl, codes, pad, [dst](std::size_t i, const RowCode& lo, const RowCode& hi) {
        PairFA& e = dst[i];
        e.mag[0] = lo.fmag;
        e.mag[1] = hi.fmag;
        e.sgn[0] = lo.fsgn;
        e.sgn[1] = hi.fsgn;
        e.exp = static_cast<std::uint16_t>(static_cast<std::uint8_t>(lo.fexp) |
                                           static_cast<std::uint8_t>(hi.fexp) << 8);
      });
}

void decode_f32_panel(const Plan& pl, std::size_t n0, PairFB* dst, std::uint8_t* col_special) {
  const PanelCodeF* tab = pl.panel_ftab;
  const GemmOperands& op = *pl.op;
  const std::int64_t ppb = (pl.nfma + 1) / 2;
  for (std::size_t i = 0; i < pl.pair_stride; ++i) {
    std::fill_n(&dst[i].mag[0][0], 2 * kLanes, 0.0f);
    std::fill_n(&dst[i].sgn[0][0], 2 * kLanes, 1.0f);
    std::fill_n(dst[i].exp, 2 * kLanes, static_cast<std::int8_t>(kZeroExpF));
  }
  for (int c = 0; c < kLanes && n0 + c < op.N; ++c) {
    const std::uint8_t* codes = op.b + (n0 + c) * op.ldb;
    unsigned special = 0;
    for (const Segment& sg : pl.segs) {
      for (std::int64_t j = 0; j < sg.nblocks; ++j) {
        const std::int64_t kb = j * pl.nfma;
        const std::int64_t kn = std::min<std::int64_t>(pl.nfma, sg.L - kb);
        for (std::int64_t i = 0; i < kn; ++i) {
          const PanelCodeF& o = tab[codes[sg.k0 + static_cast<std::size_t>(kb + i)]];
          special |= o.special;
          PairFB& e = dst[sg.off + static_cast<std::size_t>(j * ppb + i / 2)];
          const auto p = static_cast<std::size_t>(i % 2);
          e.mag[p][c] = o.mag;
          e.sgn[p][c] = o.sgn;
          e.exp[2 * c + static_cast<int>(p)] = o.exp;
        }
      }
    }
    col_special[n0 + c] = special != 0;
  }
}

} // namespace mmaemu::model::cg
