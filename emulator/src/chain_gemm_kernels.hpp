// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Internal to chain_gemm (emulator/src/chain_gemm*.cpp): what the files of the fast path share.
// chain_gemm.cpp builds a call's Plan and dispatches it (chain_gemm_dispatch.cpp picks the
// kernel); chain_gemm_decode.cpp decodes rows and panels; chain_gemm_tiles.cpp runs the tiles
// and promotes the chunk results; chain_gemm_lanes.cpp and chain_gemm_i16_tile.inc (compiled by
// chain_gemm_i16.cpp and chain_gemm_i16_vnni.cpp) are the kernels.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "chain_gemm_internal.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/chain_gemm.hpp"

// The instruction sets of the kernels' target attributes.
#define MMAEMU_AVX512_TARGET "avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
#define MMAEMU_AVX2_TARGET "avx2"
#define MMAEMU_F32_TARGET "avx2,fma"

namespace mmaemu::model::cg {

using detail::ChainKernel;
using ReduceFn = std::uint32_t (*)(const std::uint32_t*, int, const std::string&);

constexpr int kLanes = 16;  // output columns per panel and per vector
constexpr int kMaxRows = 8; // rows of a tile

// Exponents given to zero operands: low enough that a zero pair never sets a block exponent.
// Every real term lies above -101 (products: >= -28; c: a result below 2^-100 is sent to the
// exact path), while a zero pair stays below -112 in both layouts.
constexpr int kZeroExpA = -1000;
constexpr int kZeroExpB8 = -128;
constexpr int kZeroExp16 = -1000;
// The binary32 kernel's byte exponents: a zero code's is kZeroExpF, so that a pair with a
// zero factor sums (saturating) to at most -85, below kNoTermExpF; real products are >= -28.
constexpr int kZeroExpF = -100;
constexpr int kNoTermExpF = -64;
// MXCSR for the binary32 kernel: round toward zero, every exception masked, no flush-to-zero,
// no denormals-are-zero.
constexpr unsigned kMxcsrTowardZero = 0x7F80u;
constexpr int kLowestFastExp = -100; // block results outside [2^-100, 2^128) go exact
constexpr int kHighestFastExp = 127;
// The binary32 carry's window (i16_carry32_fits): inside it c (exponent >= kCarryLo) scaled
// by 2^-(E - frac) keeps a normal exponent field (>= kCarryLo + 127 - kCarryHi >= 1), and a
// block result (exponent in [kCarryLo, kCarryHi + 23]) lies in the fast range.
constexpr int kCarryLo = -62;
constexpr int kCarryHi = 64;
static_assert(kCarryHi - kCarryLo <= 126 && kCarryLo >= kLowestFastExp &&
              kCarryHi + 23 <= kHighestFastExp);

constexpr auto kFinite = static_cast<std::uint8_t>(ValueClass::finite);

// One chunk of a plan: a chain from +0 over [k0, k0 + L) in nblocks blocks, decoded from entry
// `off` of every decoded row and panel (the chunks of a call are decoded one after the other).
struct Segment {
  std::size_t k0;
  std::int64_t L;
  std::int64_t nblocks;
  std::size_t off;
};

// a[m][k] for the lanes kernels: broadcast to the 16 lanes.
struct LaneA {
  std::int32_t mag; // |significand| (<< G when the lanes are 32-bit)
  std::int32_t exp; // alignment exponent, kZeroExpA for a zero
  std::int32_t sgn; // 0 or -1
};

// A code of the rows' format as the row decoders write it, with `special` set for NaN and
// Inf codes (which are written as zeros). Built once per call from the operand table.
struct RowCode {
  LaneA lane;                  // lanes kernels (|significand| << shift)
  std::uint16_t mag, exp, sgn; // the AVX-512 kernel's 16-bit halves of a PairA
  std::uint8_t special;
  float fmag;         // the binary32 kernel: |value| ...
  std::uint32_t fsgn; // ... its sign bit (0 or 0x80000000) ...
  std::int8_t fexp;   // ... and its alignment exponent (kZeroExpF for a zero)
};

// A code of the panels' format for the binary32 kernel.
struct PanelCodeF {
  float mag;  // |value|
  float sgn;  // +1.0 or -1.0
  int8_t exp; // alignment exponent, kZeroExpF for a zero
  std::uint8_t special;
};

// The rows' codes for the AVX-512 kernel as tables of 128 16-bit entries, indexed by a code's
// low 7 bits, so that 32 codes are looked up by two vpermi2w each: RowCode::mag and
// RowCode::exp (the same for codes c and c | 0x80), RowCode::special as 0 / 0xFFFF, and
// RowCode::sgn of the code c | 0x80 (that of c is 0). Built by pair_codes16, which returns
// false where a format's codes are not symmetric in this way (then the scalar decoder runs).
struct alignas(64) PairCodes16 {
  std::uint16_t mag[128], exp[128], special[128], sgn_neg[128];
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
  ReduceFn reduce;                      // null: every part is an output of its own
  const std::string* scheme;            // the reduction's scheme
  std::size_t lane_stride, pair_stride; // decoded entries of a row or panel
  int nfma;
  int frac, fo; // term and result fraction bits
  int G;        // products are pre-shifted left by G
  int bias;     // a product's right shift is E - e + bias
  int cpre;     // c is kept as its frac_out-bit significand shifted left by cpre ...
  int cshift;   // ... and its term is that >> (E - ec + cshift)
  int min_exp;
  bool rne;
  // The AVX-512 kernel keeps c as binary32 bits (i16_carry32_fits); then b's exponents are
  // decoded less frac, so that a block's largest exponent is its unit's.
  bool carry32 = false;
  int b_exp_offset = 0;
  // Whether min_exp can exceed a block's largest exponent when the block has a nonzero term:
  // false when it lies at or below Pmin - frac, the least exponent of a nonzero product or c
  // (i16_carry32_fits); then the binary32 carry skips it.
  bool min_exp_binds = true;
  const RowCode* row_tab;               // the rows' codes (row_codes)
  const PairCodes16* row16 = nullptr;   // row_tab as 16-bit tables (AVX-512 row decoder), or null
  const PairCodes16* panel16 = nullptr; // panel_tab as the same (AVX-512 panel decoder), or null
  const Fp8Operand* panel_tab;          // the panels' operand table
  const PanelCodeF* panel_ftab;         // the same for the binary32 kernel (panel_codes_f32)
};

// b[n][k] for the 16 columns n of a panel, one lane each: |significand| in bits 0-7, the
// alignment exponent (kZeroExpB8 for a zero) in bits 8-15, the sign in the top bit.
template <class T> struct alignas(64) LaneB { T lane[kLanes]; };

template <class T> T pack_lane(int mag, int exp, bool neg) {
  using U = std::make_unsigned_t<T>;
  const U top = U{1} << (sizeof(T) * 8 - 1);
  return static_cast<T>(static_cast<U>(mag) | (static_cast<U>(exp & 0xFF) << 8) | (neg ? top : 0));
}

// The AVX-512 BW kernel's operands: 16-bit halves, two consecutive k of a block per 32 bits.
struct PairA {       // a[m][2q], a[m][2q + 1] in the low and high halves
  std::uint32_t mag; // |significand| << G
  std::uint32_t exp; // alignment exponents, kZeroExp16 for a zero
  std::uint32_t sgn; // the byte offset of the pair's signs in PairB::sgn (pair_sign_offset)
};

// The four sign patterns of a pair of a: bit 0 for a negative a[m][2q], bit 1 for a negative
// a[m][2q + 1]; PairA::sgn is the pattern's byte offset in PairB::sgn.
constexpr std::uint32_t pair_sign_offset(bool lo_neg, bool hi_neg) {
  return (lo_neg ? 1u : 0u) * 64u + (hi_neg ? 2u : 0u) * 64u;
}

struct alignas(64) PairB {
  std::int16_t mag[2 * kLanes];
  std::int16_t exp[2 * kLanes];
  // The signs of the products, +1 or -1 (0x0001 / 0xFFFF), for each sign pattern of a's pair:
  // the kernel loads them instead of combining a's signs with b's.
  std::int16_t sgn[4][2 * kLanes];
};

// The binary32 kernel's operands, two consecutive k of a block per entry.
struct PairFA {
  float mag[2];         // |a[m][2q]|, |a[m][2q + 1]|
  std::uint32_t sgn[2]; // their sign bits
  std::uint16_t exp;    // their alignment exponents, int8 in the low and high byte
};

struct alignas(32) PairFB {
  float mag[2][kLanes];        // |b| of k = 2q + p for the 16 columns
  float sgn[2][kLanes];        // +1.0 or -1.0
  std::int8_t exp[2 * kLanes]; // byte 2c + p: the exponent of column c at k = 2q + p
};

// One tile: `rows` rows of a against one panel of b.
template <class A, class B> struct Tile {
  const Plan* plan;
  const Segment* seg;     // the chunk to compute
  const A* row[kMaxRows]; // decoded rows
  const B* panel;
  int rows;
  std::uint32_t out[kMaxRows][kLanes]; // binary32 bits
  std::uint16_t bad[kMaxRows];         // lanes that must be recomputed exactly
  // Where the AVX-512 kernel with the binary32 carry adds its results instead of writing out
  // (the promotion by the CPU's adds, a NaN sum made canonical), or null.
  std::uint32_t (*promote_into)[kLanes] = nullptr;
};

using Tile32 = Tile<LaneA, LaneB<std::int32_t>>;
using Tile64 = Tile<LaneA, LaneB<std::int64_t>>;
using TileI16 = Tile<PairA, PairB>;
using TileF32 = Tile<PairFA, PairFB>;

// The kernels (chain_gemm_lanes.cpp, chain_gemm_i16_tile.inc): the chunk t.seg of every output of
// the tile into t.out, with t.bad marking the lanes whose chain the kernel cannot represent.
constexpr int kLaneRows = 4; // rows of a lanes tile
void lanes32_avx512(Tile32& t);
void lanes64_avx512(Tile64& t);
void lanes32_avx2(Tile32& t);
void lanes64_avx2(Tile64& t);
void lanes32_base(Tile32& t);
void lanes64_base(Tile64& t);
void i16_avx512(TileI16& t);
void i16_avx512_vnni(TileI16& t); // the same kernel with vpdpwssd (chain_gemm_i16_tile.inc)
void f32_avx2(TileF32& t);        // chain_gemm_f32.cpp
constexpr int kF32Rows = 4;       // rows of a binary32 tile (run as pairs of rows)

// Kernel choice (chain_gemm_dispatch.cpp).
struct Choice {
  ChainKernel kernel;
  bool wide;   // lanes kernels: 64-bit lanes
  bool forced; // a test forced the kernel (detail::force_chain_kernel)
};
Choice choose(const Preset& p, FormatPair fmt);
// The smallest exponent (alignment exponents' sum) of a nonzero product of fmt's codes.
int lowest_product_exp(FormatPair fmt);
// Whether the AVX-512 kernel may keep c as binary32 bits (chain_gemm_i16_tile.inc) in a call
// whose chains are at most max_len long: blocks rounded toward zero, products not pre-scaled
// beyond G (bias 0), every block sum below 2^24 (so that it converts exactly), and every
// chain inside the carry's window [kCarryLo, kCarryHi] with each nonzero product above -127
// (a zero c's exponent field less 127), so that the kernel checks neither. With P the
// exponents of the nonzero products (a product lies below 2^(P + 2)): c lies below
// max_len * 2^(Pmax + 2), so a block's exponent E lies below Pmax + 2 + log2(max_len); a
// nonzero c is at least one unit of the block that made it, so E >= Pmin - frac; the unit
// exponent E - frac thus lies in [Pmin - 2 frac, Pmax + 2 + log2(max_len) - frac].
bool i16_carry32_fits(const Preset& p, FormatPair fmt, std::int64_t max_len);
// The slab size forced by a test (detail::force_chain_slab_bytes), 0 for the default.
std::size_t forced_slab_bytes();

// Decoding (chain_gemm_decode.cpp), chunk after chunk (codes: a row or column from k = 0). The
// row decoders return true if some code of the row is not finite (its outputs go exact); the
// panel decoders set col_special for each of the panel's columns.
std::array<RowCode, 256> row_codes(const Fp8Operand* tab, Format f, int lane_shift, int G);
bool decode_lane_row(const Plan& pl, const std::uint8_t* codes, LaneA* dst);
template <class T>
void decode_lane_panel(const Plan& pl, std::size_t n0, LaneB<T>* dst, std::uint8_t* col_special);
bool pair_codes16(const RowCode* tab, PairCodes16& out);
// The panels' codes as PairCodes16 (sgn_neg unused): |significand| and alignment exponent
// plus pl.b_exp_offset, as decode_pair_panel writes them; false where a format's codes are not
// symmetric in the sign bit.
bool panel_codes16(const Fp8Operand* tab, int exp_offset, PairCodes16& out);
bool decode_pair_row(const Plan& pl, const std::uint8_t* codes, PairA* dst);
// decode_pair_row's full blocks 32 codes at a time (chain_gemm_i16.cpp; an AVX-512 BW CPU,
// pl.row16 set, nfma even): the pairs [first, first + n) of the layout from codes[k0 ...], no
// padding. Returns whether some code is NaN or Inf.
bool decode_pair_run_avx512(const Plan& pl, const std::uint8_t* codes, std::size_t n, PairA* dst);
void decode_pair_panel(const Plan& pl, std::size_t n0, PairB* dst, std::uint8_t* col_special);
// decode_pair_panel's full blocks for 16 columns at once (chain_gemm_i16.cpp; an AVX-512 BW
// CPU, pl.panel16 set, nfma even): the pairs [0, n) of the layout from cols[c][0 ...], no
// padding. Returns which of the 16 columns hold a NaN or Inf code (bit c).
std::uint16_t decode_panel_run_avx512(const Plan& pl, const std::uint8_t* const* cols,
                                      std::size_t n, PairB* dst);
std::array<PanelCodeF, 256> panel_codes_f32(const Fp8Operand* tab, Format f);
bool decode_f32_row(const Plan& pl, const std::uint8_t* codes, PairFA* dst);
void decode_f32_panel(const Plan& pl, std::size_t n0, PairFB* dst, std::uint8_t* col_special);

// Where the parts of output (row, col) of the kernels' view go: part[s][row * ldr + col * ldc].
struct Outputs {
  std::uint32_t* const* part;
  std::size_t ldr, ldc;
};

// Decodes the operands and runs every tile (chain_gemm_tiles.cpp), for the row and panel
// layout of A and B: stride entries per decoded row or panel, tiles of tile_rows rows.
template <class A, class B> struct TileKernel {
  void (*kernel)(Tile<A, B>&);
  bool (*decode_row)(const Plan&, const std::uint8_t*, A*);
  void (*decode_panel)(const Plan&, std::size_t, B*, std::uint8_t*);
};
template <class A, class B>
void run_tiled(const Plan& pl, std::size_t stride, int tile_rows, unsigned threads,
               const Outputs& out, const TileKernel<A, B>& k);

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

} // namespace mmaemu::model::cg
