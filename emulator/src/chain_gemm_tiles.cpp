// SPDX-License-Identifier: BSD-2-Clause
// The tiles of a chain_gemm call: decoding the operands in slabs (or streaming the rows through
// the decoded panels), running the kernel on every tile chunk after chunk, recomputing through
// model::dot what the kernel cannot represent, and promoting the chunk results into each
// part's accumulator.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <emmintrin.h>

#include "chain_gemm_kernels.hpp"
#include "mmaemu/emulator/f32_arith.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"

namespace mmaemu::model::cg {

namespace {

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

// The shipped promotion and reduction (promote_fp32_add, reduce_fp32_by_scheme: IEEE binary32
// adds, round to nearest even) are the CPU's SSE adds whenever the thread's SSE environment is
// the default one: round to nearest, no flush-to-zero, no denormals-are-zero, every exception
// masked. Then a row of chunk results is promoted, and the parts of a row reduced, with vector
// adds, and a NaN sum (a NaN operand, or Inf + -Inf) becomes their canonical NaN. Any other
// promotion or reduction (a swapped decision) is called value by value.
bool default_sse_environment() {
  return (_mm_getcsr() & 0xFFC0u) == 0x1F80u;
}

// binary32 a + b as promote_fp32_add and reduce_fp32_by_scheme compute it, in the default SSE
// environment.
inline std::uint32_t sse_add(std::uint32_t a, std::uint32_t b) {
  const auto sum = std::bit_cast<std::uint32_t>(std::bit_cast<float>(a) + std::bit_cast<float>(b));
  return (sum & 0x7FFFFFFFu) > 0x7F800000u ? kF32CanonicalNaN : sum;
}

// What a worker needs besides the tile: whether the CPU's adds may be used, and room for the
// parts of a tile when they are reduced inside the call.
struct TileState {
  bool hw_promote = false, hw_reduce = false;
  std::vector<std::uint32_t> parts;    // [part][row][lane], when pl.reduce is set
  std::vector<std::uint32_t> partials; // one output's parts, for a swapped reduction
};

TileState tile_state(const Plan& pl) {
  TileState st;
  const bool sse = default_sse_environment();
  st.hw_promote = sse && pl.promote == &promote_fp32_add;
  st.hw_reduce = sse && pl.reduce == &reduce_fp32_by_scheme;
  if (pl.reduce) {
    st.parts.resize(pl.parts.size() * kMaxRows * kLanes);
    st.partials.resize(pl.parts.size());
  }
  return st;
}

void promote_row(const Plan& pl, bool hardware, std::uint32_t* acc, const std::uint32_t* chunk,
                 int cols) {
  if (hardware) {
    // sse_add four lanes at a time: a NaN sum becomes the canonical NaN.
    const __m128 nan = _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(kF32CanonicalNaN)));
    for (int l = 0; l < kLanes; l += 4) {
      const __m128 sum = _mm_add_ps(_mm_loadu_ps(reinterpret_cast<const float*>(acc + l)),
                                    _mm_loadu_ps(reinterpret_cast<const float*>(chunk + l)));
      const __m128 is_nan = _mm_cmpunord_ps(sum, sum);
      _mm_storeu_ps(reinterpret_cast<float*>(acc + l),
                    _mm_or_ps(_mm_and_ps(is_nan, nan), _mm_andnot_ps(is_nan, sum)));
    }
  } else {
    for (int l = 0; l < cols; ++l)
      acc[l] = pl.promote(acc[l], chunk[l]);
  }
}

// The S parts of a tile's outputs (parts[s] holds part s, rows x kLanes) reduced into parts[0]
// by the CPU's adds, in reduce_fp32_by_scheme's order: pairwise as a binary tree over the
// parts (each level adds neighbours, an odd last one moves up unchanged), every other scheme
// serially in part order.
void reduce_tile_hw(std::uint32_t* parts, std::size_t S, int rows, bool pairwise) {
  constexpr std::size_t kPart = kMaxRows * kLanes;
  const std::size_t n = static_cast<std::size_t>(rows) * kLanes;
  if (!pairwise) {
    for (std::size_t s = 1; s < S; ++s) {
      for (std::size_t i = 0; i < n; ++i)
        parts[i] = sse_add(parts[i], parts[s * kPart + i]);
    }
    return;
  }
  for (std::size_t level = S; level > 1; level = (level + 1) / 2) {
    for (std::size_t j = 0; j < level / 2; ++j) {
      for (std::size_t i = 0; i < n; ++i)
        parts[j * kPart + i] = sse_add(parts[2 * j * kPart + i], parts[(2 * j + 1) * kPart + i]);
    }
    if (level % 2)
      std::memcpy(parts + level / 2 * kPart, parts + (level - 1) * kPart, n * sizeof *parts);
  }
}

// Whether the kernel promotes each chunk result into the part's accumulator itself (the
// AVX-512 kernel with the binary32 carry, which marks no lane bad, and the CPU's adds).
template <class A, class B>
bool fused_promotion(const Plan& pl, const Tile<A, B>&, const TileState& st) {
  if constexpr (std::is_same_v<A, PairA>)
    return pl.carry32 && pl.promote != nullptr && st.hw_promote;
  else
    return false;
}

// Every part of the outputs of one tile (rows row0 .. row0 + t.rows - 1 of the kernels' view
// against the panel of columns col0 .. col0 + 15): chunk after chunk through the kernel, a
// chunk that the kernel cannot represent (t.bad) or whose row or column holds a non-finite
// code recomputed by model::dot, then promoted into the part's accumulator; with pl.reduce,
// the parts reduced into one output.
template <class A, class B, class Kernel>
void tile_outputs(const Plan& pl, Tile<A, B>& t, TileState& st, std::size_t row0, std::size_t col0,
                  const std::uint8_t* row_special, const std::uint8_t* col_special, Kernel kernel,
                  const Outputs& out) {
  const int cols = static_cast<int>(std::min<std::size_t>(kLanes, pl.op->N - col0));
  std::uint16_t col_mask = 0;
  for (int l = 0; l < cols; ++l)
    col_mask = static_cast<std::uint16_t>(col_mask | (col_special[col0 + l] ? 1u << l : 0u));
  std::uint16_t special[kMaxRows];
  for (int r = 0; r < t.rows; ++r)
    special[r] = row_special[r] ? std::uint16_t{0xFFFF} : col_mask;

  const auto write = [&](std::uint32_t* dst, const std::uint32_t(*acc)[kLanes]) {
    for (int r = 0; r < t.rows; ++r) {
      for (int l = 0; l < cols; ++l) {
        dst[(row0 + static_cast<std::size_t>(r)) * out.ldr +
            (col0 + static_cast<std::size_t>(l)) * out.ldc] = acc[r][l];
      }
    }
  };
  alignas(64) std::uint32_t local[kMaxRows][kLanes];
  const std::size_t S = pl.parts.size();
  for (std::size_t s = 0; s < S; ++s) {
    auto* acc =
        pl.reduce
            ? reinterpret_cast<std::uint32_t(*)[kLanes]>(st.parts.data() + s * kMaxRows * kLanes)
            : local;
    for (int r = 0; r < t.rows; ++r)
      std::fill_n(acc[r], kLanes, 0u);
    if (fused_promotion(pl, t, st)) {
      // The kernel promotes every chunk into acc itself (it marks no lane bad); the lanes of a
      // non-finite code are then recomputed chunk by chunk.
      t.promote_into = acc;
      for (std::size_t g = pl.parts[s].first; g < pl.parts[s].second; ++g) {
        t.seg = &pl.segs[g];
        kernel(t);
      }
      t.promote_into = nullptr;
      for (int r = 0; r < t.rows; ++r) {
        for (int l = 0; special[r] && l < cols; ++l) {
          if (!((special[r] >> l) & 1u))
            continue;
          acc[r][l] = 0u;
          for (std::size_t g = pl.parts[s].first; g < pl.parts[s].second; ++g) {
            acc[r][l] =
                sse_add(acc[r][l], exact_chunk(pl, pl.segs[g], row0 + static_cast<std::size_t>(r),
                                               col0 + static_cast<std::size_t>(l)));
          }
        }
      }
      if (!pl.reduce)
        write(out.part[s], acc);
      continue;
    }
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
          promote_row(pl, st.hw_promote, acc[r], t.out[r], cols);
        else
          std::memcpy(acc[r], t.out[r], sizeof acc[r]);
      }
    }
    if (!pl.reduce)
      write(out.part[s], acc);
  }
  if (!pl.reduce)
    return;
  std::uint32_t* parts = st.parts.data();
  if (st.hw_reduce) {
    reduce_tile_hw(parts, S, t.rows, *pl.scheme == "pairwise");
  } else {
    std::vector<std::uint32_t>& partials = st.partials;
    for (int r = 0; r < t.rows; ++r) {
      for (int l = 0; l < cols; ++l) {
        const std::size_t i = static_cast<std::size_t>(r) * kLanes + static_cast<std::size_t>(l);
        for (std::size_t s = 0; s < S; ++s)
          partials[s] = parts[s * kMaxRows * kLanes + i];
        parts[i] = pl.reduce(partials.data(), static_cast<int>(S), *pl.scheme);
      }
    }
  }
  write(out.part[0], reinterpret_cast<const std::uint32_t(*)[kLanes]>(parts));
}

// Decodes the operands and runs every tile; every output is computed by one tile whatever the
// thread count, so the bits do not depend on it. The decoded operands take several bytes per
// code, so the work is arranged to keep them small and in cache:
// * Streaming (the panels of the whole call fit in kGroupBytes, e.g. a single row of a
//   against many of b, once transposed): the panels are decoded once; each thread then takes
//   kStreamRows rows at a time, decodes them into its own buffer (in L1/L2) and runs them
//   against every panel. Nothing of the size of the operands is allocated.
// * Slabs (otherwise): the rows are decoded in slabs of at most kSlabBytes (a multiple of
//   kSlabRowStep rows). Per slab the work items are groups of panels (about kGroupBytes, at
//   least one panel) taken from a shared counter: a thread decodes its group into its own
//   buffer, which stays in its L2, and runs every row tile of the slab against it. b is thus
//   decoded once per slab of rows (a slab holds a thousand rows or more), never written out
//   whole; decoding every panel of a slab up front instead wrote tens of MB per call (page
//   faulted in, sent to memory, read back), and ran M 256 at 3.7x SGEMM instead of 2.3x.
constexpr std::size_t kSlabBytes = std::size_t{16} << 20;
constexpr std::size_t kGroupBytes = std::size_t{512} << 10;
constexpr std::size_t kSlabRowStep = 64;
constexpr std::size_t kStreamRows = 16;

// The rows of a tile starting at m0 below m_hi: tile_rows, halved until they fit.
int tile_rows_at(int tile_rows, std::size_t m0, std::size_t m_hi) {
  auto rows = static_cast<std::size_t>(tile_rows);
  while (rows > m_hi - m0)
    rows /= 2;
  return static_cast<int>(rows);
}

} // namespace

template <class A, class B>
void run_tiled(const Plan& pl, std::size_t stride, int tile_rows, unsigned threads,
               const Outputs& out, const TileKernel<A, B>& k) {
  const GemmOperands& op = *pl.op;
  const std::size_t npanels = (op.N + kLanes - 1) / kLanes;
  const std::size_t row_bytes = std::max<std::size_t>(stride * sizeof(A), 1);
  const std::size_t panel_bytes = std::max<std::size_t>(stride * sizeof(B), 1);
  const std::size_t forced = forced_slab_bytes();
  const std::size_t slab_bytes = forced ? forced : kSlabBytes;
  std::vector<std::uint8_t> col_special(op.N);

  if (!forced && npanels * panel_bytes <= kGroupBytes) {
    auto bdec = std::make_unique_for_overwrite<B[]>(npanels * stride);
    std::atomic<std::size_t> next_panel{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, npanels)), [&] {
      for (std::size_t pn; (pn = next_panel.fetch_add(1, std::memory_order_relaxed)) < npanels;)
        k.decode_panel(pl, pn * kLanes, bdec.get() + pn * stride, col_special.data());
    });
    const std::size_t items = (op.M + kStreamRows - 1) / kStreamRows;
    std::atomic<std::size_t> next{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, items)), [&] {
      auto adec = std::make_unique_for_overwrite<A[]>(kStreamRows * stride);
      std::uint8_t row_special[kStreamRows];
      TileState st = tile_state(pl);
      Tile<A, B> t;
      t.plan = &pl;
      for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
        const std::size_t m_lo = i * kStreamRows;
        const std::size_t m_hi = std::min(op.M, m_lo + kStreamRows);
        for (std::size_t m = m_lo; m < m_hi; ++m)
          row_special[m - m_lo] =
              k.decode_row(pl, op.a + m * op.lda, adec.get() + (m - m_lo) * stride);
        for (std::size_t m0 = m_lo; m0 < m_hi; m0 += static_cast<std::size_t>(t.rows)) {
          t.rows = tile_rows_at(tile_rows, m0, m_hi);
          for (int r = 0; r < t.rows; ++r)
            t.row[r] = adec.get() + (m0 + static_cast<std::size_t>(r) - m_lo) * stride;
          for (std::size_t pn = 0; pn < npanels; ++pn) {
            t.panel = bdec.get() + pn * stride;
            tile_outputs(pl, t, st, m0, pn * kLanes, row_special + (m0 - m_lo), col_special.data(),
                         k.kernel, out);
          }
        }
      }
    });
    return;
  }

  const std::size_t group =
      std::clamp<std::size_t>(std::min(kGroupBytes, slab_bytes) / panel_bytes, 1, npanels);
  const std::size_t slab_rows =
      std::min(op.M, std::max(kSlabRowStep, slab_bytes / row_bytes / kSlabRowStep * kSlabRowStep));
  auto adec = std::make_unique_for_overwrite<A[]>(slab_rows * stride);
  std::vector<std::uint8_t> row_special(op.M);
  const std::size_t ngroups = (npanels + group - 1) / group;

  for (std::size_t m_lo = 0; m_lo < op.M; m_lo += slab_rows) {
    const std::size_t m_hi = std::min(op.M, m_lo + slab_rows);
    std::atomic<std::size_t> next_row{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, m_hi - m_lo)), [&] {
      for (std::size_t m; (m = m_lo + next_row.fetch_add(1, std::memory_order_relaxed)) < m_hi;)
        row_special[m] = k.decode_row(pl, op.a + m * op.lda, adec.get() + (m - m_lo) * stride);
    });
    std::atomic<std::size_t> next{0};
    run_parallel(static_cast<unsigned>(std::min<std::size_t>(threads, ngroups)), [&] {
      auto bdec = std::make_unique_for_overwrite<B[]>(group * stride);
      TileState st = tile_state(pl);
      Tile<A, B> t;
      t.plan = &pl;
      for (std::size_t g; (g = next.fetch_add(1, std::memory_order_relaxed)) < ngroups;) {
        const std::size_t g_lo = g * group;
        const std::size_t g_hi = std::min(npanels, g_lo + group);
        for (std::size_t pn = g_lo; pn < g_hi; ++pn)
          k.decode_panel(pl, pn * kLanes, bdec.get() + (pn - g_lo) * stride, col_special.data());
        for (std::size_t m0 = m_lo; m0 < m_hi; m0 += static_cast<std::size_t>(t.rows)) {
          t.rows = tile_rows_at(tile_rows, m0, m_hi);
          for (int r = 0; r < t.rows; ++r)
            t.row[r] = adec.get() + (m0 + static_cast<std::size_t>(r) - m_lo) * stride;
          for (std::size_t pn = g_lo; pn < g_hi; ++pn) {
            t.panel = bdec.get() + (pn - g_lo) * stride;
            tile_outputs(pl, t, st, m0, pn * kLanes, row_special.data() + m0, col_special.data(),
                         k.kernel, out);
          }
        }
      }
    });
  }
}

template void run_tiled<LaneA, LaneB<std::int32_t>>(const Plan&, std::size_t, int, unsigned,
                                                    const Outputs&,
                                                    const TileKernel<LaneA, LaneB<std::int32_t>>&);
template void run_tiled<LaneA, LaneB<std::int64_t>>(const Plan&, std::size_t, int, unsigned,
                                                    const Outputs&,
                                                    const TileKernel<LaneA, LaneB<std::int64_t>>&);
template void run_tiled<PairA, PairB>(const Plan&, std::size_t, int, unsigned, const Outputs&,
                                      const TileKernel<PairA, PairB>&);
template void run_tiled<PairFA, PairFB>(const Plan&, std::size_t, int, unsigned, const Outputs&,
                                        const TileKernel<PairFA, PairFB>&);

} // namespace mmaemu::model::cg
