// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/block_fma.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include <immintrin.h>

#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"

namespace mmaemu::model {

namespace {

std::array<Fp8Operand, 256> build_table(Format f) {
  const FormatSpec& s = spec(f);
  std::array<Fp8Operand, 256> t{};
  for (std::uint32_t code = 0; code < 256; ++code) {
    const Exact x = decode_bits(f, code);
    Fp8Operand& o = t[code];
    o.neg = x.neg ? 1 : 0;
    o.cls = static_cast<std::uint8_t>(x.cls);
    if (x.cls == ValueClass::finite) {
      o.mant = static_cast<std::uint8_t>(x.sig);
      o.ea = static_cast<std::int8_t>(x.exp + s.frac_bits); // emin for subnormals
    } else {
      o.mant = 0;
      o.ea = static_cast<std::int8_t>(kZeroExp);
    }
  }
  return t;
}

// Magnitude and exponent of a finite binary32: |c| = mant * 2^(ec - 23), ec the unbiased
// exponent (-126 for subnormals). mant = 0 for a zero.
void split_binary32(std::uint32_t bits, std::uint32_t& mant, int& ec, bool& neg) {
  neg = (bits >> 31) != 0;
  const std::uint32_t e = (bits >> 23) & 0xFFu;
  const std::uint32_t m = bits & 0x7FFFFFu;
  if (e == 0) {
    mant = m;
    ec = -126;
  } else {
    mant = m | 0x800000u;
    ec = static_cast<int>(e) - 127;
  }
}

// floor(v * 2^k) for v >= 0.
std::int64_t shift_floor(std::int64_t v, int k) {
  if (k >= 0)
    return v << k;
  return -k >= 63 ? 0 : v >> -k;
}

// The exact sum of two signed values s1 * 2^e1 and s2 * 2^e2, rounded by the preset. The
// smaller one is jammed into a sticky bit when it lies more than 100 bits below the larger.
std::uint32_t add_round(std::int64_t s1, int e1, std::int64_t s2, int e2, const Preset& p) {
  if (s1 == 0 && s2 == 0)
    return 0u;
  auto top = [](std::int64_t s, int e) {
    return s == 0 ? -100000 : e + 63 - std::countl_zero(static_cast<std::uint64_t>(s < 0 ? -s : s));
  };
  const int bottom = std::max(top(s1, e1), top(s2, e2)) - 100;
  auto place = [bottom](std::int64_t s, int e) -> __int128 {
    if (s == 0)
      return 0;
    const bool neg = s < 0;
    const auto mag = static_cast<std::uint64_t>(neg ? -s : s);
    unsigned __int128 v;
    if (e >= bottom) {
      v = static_cast<unsigned __int128>(mag) << (e - bottom);
    } else {
      const int d = bottom - e;
      v = d >= 64 ? 1u : ((mag >> d) | ((mag & ((std::uint64_t{1} << d) - 1u)) != 0 ? 1u : 0u));
    }
    return neg ? -static_cast<__int128>(v) : static_cast<__int128>(v);
  };
  const __int128 sum = place(s1, e1) + place(s2, e2);
  const bool neg = sum < 0;
  return round_block_result(neg, static_cast<unsigned __int128>(neg ? -sum : sum), bottom, p);
}

// A magnitude below 2^128 brought below 2^64 without changing its rounding: the bits shifted
// out are jammed into bit 0. A block result keeps at most 24 bits, so a jammed bit lies far
// below the rounding position and only says "more than zero", which is all rounding needs.
std::uint64_t jam_to_64(unsigned __int128 mag, int& lsb_exp) {
  const auto hi = static_cast<std::uint64_t>(mag >> 64);
  if (hi == 0)
    return static_cast<std::uint64_t>(mag);
  const int k = 64 - std::countl_zero(hi); // 1..64
  const unsigned __int128 dropped = mag & ((static_cast<unsigned __int128>(1) << k) - 1u);
  lsb_exp += k;
  return static_cast<std::uint64_t>(mag >> k) | (dropped != 0 ? 1u : 0u);
}

// Rounds mag * 2^lsb_exp (mag != 0) to the preset's block result and returns its binary32
// magnitude bits: frac_out fraction bits, binary32 subnormals as multiples of 2^-149, Inf
// beyond the binary32 range.
[[gnu::always_inline]] inline std::uint32_t round_magnitude(std::uint64_t mag, int lsb_exp,
                                                            const Preset& p) {
  const int e = lsb_exp + 63 - std::countl_zero(mag); // value in [2^e, 2^(e+1))
  const int q = std::max(e - p.frac_out, -149);       // exponent of the result's last place
  std::uint64_t m;
  if (q <= lsb_exp) {
    m = mag << (lsb_exp - q); // exact: m < 2^(frac_out + 1)
  } else if (q - lsb_exp >= 64) {
    // Only a subnormal q gets here; the whole value lies below 2^q. To nearest it is one
    // unit when above half of 2^q (exactly 2^63 units at r = 64; never for larger r).
    const bool above_half = q - lsb_exp == 64 && mag > (std::uint64_t{1} << 63);
    m = p.rounding == BlockRounding::nearest_even && above_half ? 1u : 0u;
  } else {
    const int r = q - lsb_exp; // bits dropped, 1..63
    m = mag >> r;
    if (p.rounding == BlockRounding::nearest_even) {
      const std::uint64_t rem = mag & ((std::uint64_t{1} << r) - 1u);
      const std::uint64_t half = std::uint64_t{1} << (r - 1);
      if (rem > half || (rem == half && (m & 1u)))
        ++m;
    }
  }
  if (e >= -126 && e <= 127) {
    // A normal result (the usual case): m is in [2^frac_out, 2^(frac_out+1)], its leading bit
    // lands on the exponent field's lowest bit, so a carry out of rounding (m = 2^(frac_out+1))
    // steps the exponent, up to Inf (0x7F800000) above 2^127.
    return (static_cast<std::uint32_t>(e + 126) << 23) +
           static_cast<std::uint32_t>(m << (23 - p.frac_out));
  }
  // Subnormal or beyond the range: m * 2^q is a binary32 value (m <= 2^24, q >= -149) unless
  // it overflows: encode exactly.
  return round_exact_bits(Format::fp32, false, m, q, false, Overflow::infinity);
}

// round_block_result for a magnitude below 2^64 (every block sum but late c's). Inlined into
// each block kernel variant.
[[gnu::always_inline]] inline std::uint32_t round_signed(bool neg, std::uint64_t mag, int lsb_exp,
                                                         const Preset& p) {
  if (mag == 0)
    return 0u; // an exact zero sum is +0
  const std::uint32_t sign = neg ? 0x80000000u : 0u;
  return sign | round_magnitude(mag, lsb_exp, p);
}

// The largest frac for 32-bit terms: a term is below 2^(frac + 2) (a significand product is
// below 4), a block holds at most kMaxNfma = 2^8 of them plus c's (below 2^(frac + 1)), so
// |S| < 2^(frac + 11) <= 2^31; a pre-shifted product is below 2^(8 + G) <= 2^(8 + frac).
constexpr int kNarrowMaxFrac = 20;
static_assert(Preset::kMaxNfma <= 256);

// ValueClass inf and nan are the two classes with bit 1 set: OR-ing the classes of all codes
// tells in one test whether any is not finite.
constexpr unsigned kNonFiniteClassBit = 2u;
static_assert(static_cast<unsigned>(ValueClass::zero) == 0u &&
              static_cast<unsigned>(ValueClass::finite) == 1u &&
              static_cast<unsigned>(ValueClass::inf) == 2u &&
              static_cast<unsigned>(ValueClass::nan) == 3u);

// Steps 2, 4 and 5 for terms held in Int (std::int32_t when frac <= kNarrowMaxFrac, else
// std::int64_t), one pair at a time: the plain x86-64 code, and the reference for the
// vector variants.
template <class IntT> struct ScalarTerms {
  using Int = IntT;
  int e[Preset::kMaxNfma];
  Int mags[Preset::kMaxNfma];
  Int signs[Preset::kMaxNfma];
  int n = 0;

  // Steps 2 and 4: each pair's exponent ea + eb, its significand product (magnitude
  // pre-shifted by G, and a sign mask 0 or -1); returns the largest exponent, at least E0.
  // A zero, NaN or Inf code has mant 0 and kZeroExp: its term is 0. ORs the codes' classes.
  // Such a pair's exponent (kZeroExp plus the other's, at most -85) still enters E, as it
  // always has here; block-fma.md drops the pair, which differs only for a block with no
  // nonzero product and a c below 2^-85.
  int load(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b, int count, int E0,
           unsigned& classes) {
    n = count;
    int E = E0;
    for (int i = 0; i < n; ++i) {
      const Fp8Operand x = ctx.ta[a[i]];
      const Fp8Operand y = ctx.tb[b[i]];
      e[i] = x.ea + y.ea;
      E = std::max(E, e[i]);
      mags[i] = static_cast<Int>(x.mant * y.mant) << ctx.G;
      signs[i] = -static_cast<Int>(x.neg ^ y.neg);
      classes |= x.cls | y.cls;
    }
    return E;
  }

  // Step 5 for the products: each magnitude truncated by a right shift of bias - e, summed
  // with its sign (clamped: a shift by the width minus one clears every term).
  // The truncation of a term is also written in Avx2Terms::sum, chain_gemm_lanes.cpp,
  // chain_gemm_i16_tile.inc and kernels/cuda/mmaemu_chain.cuh (truncate_term); the differential
  // tests that bind them: KernelVariants and BlockFmaKernels (test_block_fma.cpp), ChainGemmKernel
  // (test_chain_gemm.cpp) and HostKernel (kernels/tests/test_host_kernels.cpp).
  Int sum(int bias) const {
    constexpr int kMaxShift = static_cast<int>(sizeof(Int)) * 8 - 1;
    Int S = 0;
    for (int i = 0; i < n; ++i) {
      const int d = std::min(bias - e[i], kMaxShift);
      const Int mag = mags[i];
      const Int m = signs[i];
      S += ((mag >> d) ^ m) - m;
    }
    return S;
  }
};

// The same for eight pairs at a time in AVX2 registers, 32-bit terms only. An Fp8Operand is
// one 32-bit word, so a gather fetches eight of them; a block is padded with +0 codes to a
// multiple of eight (their exponent 2 * kZeroExp is below every min_exp, their term is 0).
static_assert(sizeof(Fp8Operand) == 4 && offsetof(Fp8Operand, mant) == 0 &&
              offsetof(Fp8Operand, ea) == 1 && offsetof(Fp8Operand, neg) == 2 &&
              offsetof(Fp8Operand, cls) == 3);
static_assert(2 * kZeroExp < -160, "padding must never set the block exponent");

struct Avx2Terms {
  using Int = std::int32_t;
  alignas(32) std::int32_t e[Preset::kMaxNfma];
  alignas(32) std::int32_t mags[Preset::kMaxNfma];
  alignas(32) std::int32_t signs[Preset::kMaxNfma];
  int chunks = 0;

  __attribute__((target("avx2,bmi2"))) int load(const BlockContext& ctx, const std::uint8_t* a,
                                                const std::uint8_t* b, int count, int E0,
                                                unsigned& classes) {
    const auto* ta = reinterpret_cast<const int*>(ctx.ta);
    const auto* tb = reinterpret_cast<const int*>(ctx.tb);
    const __m128i G = _mm_cvtsi32_si128(ctx.G);
    const __m256i low_byte = _mm256_set1_epi32(0xFF);
    __m256i Emax = _mm256_set1_epi32(E0);
    __m256i cls = _mm256_setzero_si256();
    chunks = (count + 7) / 8;
    for (int j = 0; j < chunks; ++j) {
      std::uint64_t ca = 0; // +0 codes beyond the block
      std::uint64_t cb = 0;
      if (count - 8 * j >= 8) {
        std::memcpy(&ca, a + 8 * j, 8); // one load (a short copy would stall its reload)
        std::memcpy(&cb, b + 8 * j, 8);
      } else {
        std::memcpy(&ca, a + 8 * j, static_cast<std::size_t>(count - 8 * j));
        std::memcpy(&cb, b + 8 * j, static_cast<std::size_t>(count - 8 * j));
      }
      const __m256i x = _mm256_i32gather_epi32(
          ta, _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(ca))), 4);
      const __m256i y = _mm256_i32gather_epi32(
          tb, _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(cb))), 4);
      // ea is byte 1 (signed), mant byte 0, neg bit 16, cls byte 3.
      const __m256i ex = _mm256_add_epi32(_mm256_srai_epi32(_mm256_slli_epi32(x, 16), 24),
                                          _mm256_srai_epi32(_mm256_slli_epi32(y, 16), 24));
      Emax = _mm256_max_epi32(Emax, ex);
      const __m256i prod =
          _mm256_mullo_epi16(_mm256_and_si256(x, low_byte), _mm256_and_si256(y, low_byte));
      const __m256i sign = _mm256_srai_epi32(_mm256_slli_epi32(_mm256_xor_si256(x, y), 15), 31);
      cls = _mm256_or_si256(cls, _mm256_or_si256(x, y));
      _mm256_store_si256(reinterpret_cast<__m256i*>(e + 8 * j), ex);
      _mm256_store_si256(reinterpret_cast<__m256i*>(mags + 8 * j), _mm256_sll_epi32(prod, G));
      _mm256_store_si256(reinterpret_cast<__m256i*>(signs + 8 * j), sign);
    }
    // Only the non-finite bit of the classes matters to the caller.
    if (!_mm256_testz_si256(cls, _mm256_set1_epi32(static_cast<int>(kNonFiniteClassBit << 24))))
      classes |= kNonFiniteClassBit;
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128(Emax), _mm256_extracti128_si256(Emax, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4E)); // swap 64-bit halves
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xB1)); // swap neighbours
    return _mm_cvtsi128_si32(m);
  }

  __attribute__((target("avx2,bmi2"))) std::int32_t sum(int bias) const {
    const __m256i vbias = _mm256_set1_epi32(bias);
    const __m256i max_shift = _mm256_set1_epi32(31);
    __m256i acc = _mm256_setzero_si256();
    for (int j = 0; j < chunks; ++j) {
      const __m256i ej = _mm256_load_si256(reinterpret_cast<const __m256i*>(e + 8 * j));
      const __m256i mag = _mm256_load_si256(reinterpret_cast<const __m256i*>(mags + 8 * j));
      const __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(signs + 8 * j));
      const __m256i d = _mm256_min_epi32(_mm256_sub_epi32(vbias, ej), max_shift);
      // The truncation of a term (ScalarTerms::sum names its other places and their tests).
      const __m256i t = _mm256_sub_epi32(_mm256_xor_si256(_mm256_srlv_epi32(mag, d), m), m);
      acc = _mm256_add_epi32(acc, t);
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
  }
};

// One block over the terms of Terms (ScalarTerms or Avx2Terms). Always inlined, so that each
// target variant compiles its own copy.
template <class Terms>
[[gnu::always_inline]] inline std::uint32_t
block_fma_kernel(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b, int n,
                 std::uint32_t c_bits, bool& nonfinite) {
  using Int = typename Terms::Int;
  const Preset& p = *ctx.preset;
  std::uint32_t cm;
  int ec;
  bool cneg;
  split_binary32(c_bits, cm, ec, cneg);

  Terms terms;
  unsigned classes = 0;
  int E = terms.load(ctx, a, b, n, p.min_exp, classes);
  if (classes & kNonFiniteClassBit)
    nonfinite = true;
  const bool c_in_block = cm != 0 && !p.late_c;
  if (c_in_block)
    E = std::max(E, ec);

  // Step 5: truncate each term's magnitude to a multiple of 2^(E - frac) and sum exactly.
  // The products are pre-shifted by G >= s0, so t = |p| * 2^(s0 - (E - e)) is a right shift
  // by E - e + G - s0 >= 0.
  Int S = terms.sum(E + ctx.G - ctx.s0);
  if (c_in_block) {
    const auto t = static_cast<Int>(shift_floor(cm, ec - 23 - E + p.frac));
    S += cneg ? -t : t;
  }
  if (p.late_c && cm != 0) {
    return add_round(S, E - p.frac, cneg ? -static_cast<std::int64_t>(cm) : cm, ec - 23, p);
  }
  const bool neg = S < 0;
  const auto mag = static_cast<std::uint64_t>(neg ? -static_cast<std::int64_t>(S) : S);
  return round_signed(neg, mag, E - p.frac, p);
}

bool has_avx2() {
  static const bool ok = (__builtin_cpu_init(), true) && __builtin_cpu_supports("avx2") &&
                         __builtin_cpu_supports("bmi2");
  return ok;
}

std::uint32_t block_fma_narrow(const BlockContext& ctx, const std::uint8_t* a,
                               const std::uint8_t* b, int n, std::uint32_t c_bits,
                               bool& nonfinite) {
  return block_fma_kernel<ScalarTerms<std::int32_t>>(ctx, a, b, n, c_bits, nonfinite);
}

std::uint32_t block_fma_wide(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b,
                             int n, std::uint32_t c_bits, bool& nonfinite) {
  return block_fma_kernel<ScalarTerms<std::int64_t>>(ctx, a, b, n, c_bits, nonfinite);
}

// The 32-bit kernel with AVX2 passes (the library's baseline is plain x86-64, which has no
// gathers and no per-lane variable shifts). Chosen at run time.
__attribute__((target("avx2,bmi2"))) std::uint32_t
block_fma_narrow_avx2(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b, int n,
                      std::uint32_t c_bits, bool& nonfinite) {
  return block_fma_kernel<Avx2Terms>(ctx, a, b, n, c_bits, nonfinite);
}

} // namespace

const std::array<Fp8Operand, 256>& fp8_operand_table(Format f) {
  static const std::array<Fp8Operand, 256> e4m3 = build_table(Format::e4m3);
  static const std::array<Fp8Operand, 256> e5m2 = build_table(Format::e5m2);
  return f == Format::e5m2 ? e5m2 : e4m3;
}

std::uint32_t round_block_result(bool neg, unsigned __int128 mag, int lsb_exp, const Preset& p) {
  const std::uint64_t mag64 = jam_to_64(mag, lsb_exp); // may raise lsb_exp
  return round_signed(neg, mag64, lsb_exp, p);
}

BlockContext::BlockContext(Format fa, Format fb, const Preset& p)
    : ta(fp8_operand_table(fa).data()), tb(fp8_operand_table(fb).data()), preset(&p),
      s0(p.frac - spec(fa).frac_bits - spec(fb).frac_bits),
      G(std::max(p.frac - spec(fa).frac_bits - spec(fb).frac_bits, 0)) {}

std::uint32_t block_fma(const std::uint8_t* a, Format fa, const std::uint8_t* b, Format fb, int n,
                        std::uint32_t c_bits, const Preset& p) {
  return block_fma(BlockContext(fa, fb, p), a, b, n, c_bits);
}

std::uint32_t block_fma(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b,
                        int n, std::uint32_t c_bits) {
  bool nonfinite = false; // the caller promises finite codes
  return block_fma(ctx, a, b, n, c_bits, nonfinite);
}

std::uint32_t block_fma(const BlockContext& ctx, const std::uint8_t* a, const std::uint8_t* b,
                        int n, std::uint32_t c_bits, bool& nonfinite) {
  return block_fma(BlockKernel::automatic, ctx, a, b, n, c_bits, nonfinite);
}

bool block_kernel_supported(BlockKernel k) {
  return k != BlockKernel::avx2 || has_avx2();
}

std::uint32_t block_fma(BlockKernel k, const BlockContext& ctx, const std::uint8_t* a,
                        const std::uint8_t* b, int n, std::uint32_t c_bits, bool& nonfinite) {
  // 32-bit terms hold every sum when frac <= kNarrowMaxFrac.
  const bool narrow = ctx.preset->frac <= kNarrowMaxFrac;
  if (k == BlockKernel::automatic || (k == BlockKernel::avx2 && !has_avx2()))
    k = has_avx2() ? BlockKernel::avx2 : BlockKernel::baseline;
  if (narrow && k == BlockKernel::avx2)
    return block_fma_narrow_avx2(ctx, a, b, n, c_bits, nonfinite);
  if (narrow && k == BlockKernel::baseline)
    return block_fma_narrow(ctx, a, b, n, c_bits, nonfinite);
  return block_fma_wide(ctx, a, b, n, c_bits, nonfinite);
}

} // namespace mmaemu::model
