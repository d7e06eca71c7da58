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
//   lane keeps its accumulator c decomposed (significand, exponent, sign), or, in the AVX-512
//   kernel where its bounds allow (ada, hopper), as binary32 bits that the CPU's conversions
//   scale and truncate exactly.
// * A tile of up to 8 rows keeps its state in registers for the whole chain over K; each
//   thread decodes a group of b panels into its L2 and runs every row tile against it.
// * The ada/hopper terms fit in 16 bits (product significands <= 225, pre-shifted by
//   G = frac - 6), so on AVX-512 BW one vector holds 16 columns x 2 consecutive k, and
//   vpdpwssd (or vpmaddwd) applies the signs and adds the pair into 32-bit sums in one
//   instruction; the panels hold b's signs for each sign pattern of a's pair.
// Why it stays exact: the arithmetic is the integer arithmetic of block_fma.cpp, reordered
// only where integer addition is associative. Whatever a fast kernel cannot represent
// (late_c, subnormal or overflowing block results, non-finite codes) is recomputed for that
// output by model::dot itself.
//
// The files: this one builds a call's plan and dispatches it; chain_gemm_dispatch.cpp picks
// the kernel, chain_gemm_decode.cpp decodes the operands, chain_gemm_tiles.cpp runs the tiles
// and the promotion, chain_gemm_lanes.cpp and chain_gemm_i16_tile.inc (compiled by
// chain_gemm_i16.cpp and chain_gemm_i16_vnni.cpp) are the kernels.

#include "mmaemu/emulator/chain_gemm.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chain_gemm_kernels.hpp"
#include "dot_f32.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"

namespace mmaemu::model {

namespace {

using namespace cg;

constexpr double kMinMacsPerThread = 2e6;

// The plan output by output through model::dot, rows [m_lo, m_hi) x columns [n_lo, n_hi).
void simple_block(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                  std::uint32_t* const* outs, std::size_t ldo, std::size_t m_lo, std::size_t m_hi,
                  std::size_t n_lo, std::size_t n_hi) {
  std::vector<std::uint32_t> partials(plan.parts.size());
  for (std::size_t m = m_lo; m < m_hi; ++m) {
    for (std::size_t n = n_lo; n < n_hi; ++n) {
      for (std::size_t s = 0; s < plan.parts.size(); ++s) {
        std::uint32_t acc = 0u;
        for (const KRange& c : plan.parts[s]) {
          const std::size_t L = c.second - c.first;
          const std::uint32_t v = dot(std::span(op.a + m * op.lda + c.first, L),
                                      std::span(op.b + n * op.ldb + c.first, L), 0u, p, op.fmt);
          acc = plan.promote ? plan.promote(acc, v) : v;
        }
        if (plan.reduce)
          partials[s] = acc;
        else
          outs[s][m * ldo + n] = acc;
      }
      if (plan.reduce) {
        outs[0][m * ldo + n] =
            plan.reduce(partials.data(), static_cast<int>(partials.size()), plan.scheme);
      }
    }
  }
}

void simple_rows(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                 std::uint32_t* const* outs, std::size_t ldo, std::size_t m_lo, std::size_t m_hi) {
  simple_block(op, plan, p, outs, ldo, m_lo, m_hi, 0, op.N);
}

// Every output through model::dot on `threads` threads, the work split along the longer of M
// and N (a single row of a is split by columns).
void simple_parallel(const GemmOperands& op, const ChainPlan& plan, const Preset& p,
                     std::uint32_t* const* outs, std::size_t ldo, unsigned threads) {
  constexpr std::size_t kColumns = 64; // columns per work item when a has fewer rows
  const bool by_rows = op.M >= op.N;
  const std::size_t items = by_rows ? op.M : (op.N + kColumns - 1) / kColumns;
  std::atomic<std::size_t> next{0};
  run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, items)), [&] {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
      if (by_rows)
        simple_block(op, plan, p, outs, ldo, i, i + 1, 0, op.N);
      else
        simple_block(op, plan, p, outs, ldo, 0, op.M, i * kColumns,
                     std::min(op.N, (i + 1) * kColumns));
    }
  });
}

void check_plan(const GemmOperands& op, const ChainPlan& plan) {
  if (plan.reduce && plan.parts.empty())
    throw ValueError("chain_gemm_plan: a reduction of no parts");
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

// When the kernels run on the transposed problem, out^T = b a^T. The block FMA is symmetric in
// its two operands (products, exponent sums, truncation), so the chains are the same.
// * The AVX-512 kernel transposes a call with fewer than 16 columns of b and more rows of a,
//   so that its panels' 16 lanes are filled; otherwise any number of rows runs as it is (each
//   thread decodes a group of b's panels into its L2 and runs every row tile against it): M 1
//   to 48 at 1.1x to 2.3x SGEMM against 2x to 5.3x transposed, and M 1 at 1.7x to 2.0x
//   against 2.4x to 4.5x through model::dot (mmaemu bench gemm --M m --fast|--slow --profile
//   hopper|ada, this AVX-512 host, 2026-12-06).
// * The other kernels transpose below kTransposeBelowRows rows of a (and more columns of b than
//   rows of a): the few rows of a become the panels, decoded once, and b's rows are streamed
//   through them; a single row or column goes through model::dot's binary32 chain where it
//   applies (both measured on an AVX2 host, docs/performance.md, "Issue 23").
constexpr std::size_t kTransposeBelowRows = 256;

} // namespace

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
  pl.reduce = plan.reduce;
  pl.scheme = &plan.scheme;
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
  const bool i16 =
      ch.kernel == ChainKernel::avx512_i16 || ch.kernel == ChainKernel::avx512_i16_vnni;
  // A single row or column of outputs (a decoding step) for the kernels other than the
  // AVX-512 one: their 16 lanes would hold one column, while model::dot's binary32 chain runs
  // at full width along K. Under automatic dispatch only, so that a forced kernel is what its
  // tests run.
  const bool one_line =
      !i16 && std::min(op.M, op.N) == 1 && !ch.forced && detail::chain_f32_applies(p, op.fmt);
  if (ch.kernel == ChainKernel::exact || one_line) {
    simple_parallel(op, plan, p, outs, ldo, threads);
    return;
  }

  // The kernels' view: a's rows against panels of b's columns, or transposed.
  pl.transposed = i16 ? op.N < static_cast<std::size_t>(kLanes) && op.M > op.N
                      : op.M < kTransposeBelowRows && op.N > op.M;
  GemmOperands view = op;
  if (pl.transposed) {
    view = {op.b, op.ldb, op.a, op.lda, op.N, op.M, op.K, {op.fmt.b, op.fmt.a}};
  }
  pl.op = &view;
  const Outputs out{outs, pl.transposed ? 1 : ldo, pl.transposed ? ldo : 1};
  pl.panel_tab = fp8_operand_table(view.fmt.b).data();
  // 32-bit lanes carry G in the row's significand; 64-bit lanes shift each product by G.
  const std::array<RowCode, 256> trow =
      row_codes(fp8_operand_table(view.fmt.a).data(), view.fmt.a, ch.wide ? 0 : pl.G, pl.G);
  pl.row_tab = trow.data();
  PairCodes16 t16;
  if (i16 && pair_codes16(trow.data(), t16))
    pl.row16 = &t16;
  std::int64_t max_len = 0;
  for (const Segment& sg : pl.segs)
    max_len = std::max(max_len, sg.L);
  if (i16 && i16_carry32_fits(p, view.fmt, max_len)) {
    pl.carry32 = true;
    pl.b_exp_offset = -pl.frac;
    pl.min_exp_binds = pl.min_exp > lowest_product_exp(view.fmt) - pl.frac;
  }
  PairCodes16 p16;
  if (i16 && panel_codes16(pl.panel_tab, pl.b_exp_offset, p16))
    pl.panel16 = &p16;

  if (i16 || ch.kernel == ChainKernel::f32_avx2) {
    std::size_t off = 0;
    for (Segment& sg : pl.segs) {
      sg.off = off;
      off += static_cast<std::size_t>(sg.nblocks * ppb);
    }
    if (i16) {
      run_tiled<PairA, PairB>(
          pl, pl.pair_stride, kMaxRows, threads, out,
          {ch.kernel == ChainKernel::avx512_i16_vnni ? i16_avx512_vnni : i16_avx512,
           decode_pair_row, decode_pair_panel});
    } else {
      const std::array<PanelCodeF, 256> tpanel = panel_codes_f32(pl.panel_tab, view.fmt.b);
      pl.panel_ftab = tpanel.data();
      run_tiled<PairFA, PairFB>(pl, pl.pair_stride, kF32Rows, threads, out,
                                {f32_avx2, decode_f32_row, decode_f32_panel});
    }
    return;
  }

  std::size_t off = 0;
  for (Segment& sg : pl.segs) {
    sg.off = off;
    off += static_cast<std::size_t>(sg.L);
  }
  if (ch.wide) { // 64-bit lanes shift each product by G
    void (*kernel)(Tile64&) = ch.kernel == ChainKernel::lanes_avx512 ? lanes64_avx512
                              : ch.kernel == ChainKernel::lanes_avx2 ? lanes64_avx2
                                                                     : lanes64_base;
    run_tiled<LaneA, LaneB<std::int64_t>>(
        pl, pl.lane_stride, kLaneRows, threads, out,
        {kernel, decode_lane_row, decode_lane_panel<std::int64_t>});
  } else { // 32-bit lanes carry G in a's significand
    void (*kernel)(Tile32&) = ch.kernel == ChainKernel::lanes_avx512 ? lanes32_avx512
                              : ch.kernel == ChainKernel::lanes_avx2 ? lanes32_avx2
                                                                     : lanes32_base;
    run_tiled<LaneA, LaneB<std::int32_t>>(
        pl, pl.lane_stride, kLaneRows, threads, out,
        {kernel, decode_lane_row, decode_lane_panel<std::int32_t>});
  }
}

} // namespace mmaemu::model
