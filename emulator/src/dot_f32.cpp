// SPDX-License-Identifier: BSD-2-Clause
// model::dot's chain with AVX2 and FMA: each block's codes decoded 8 at a time into binary32
// values by bit arithmetic, its exponent as block_fma computes it (the largest ea + eb, min_exp,
// c's), every product truncated toward zero to a multiple of u = 2^(E - frac) by
// fma(|a|, |b|, C) - C with C = 2^(E - frac + 23) in round-toward-zero, and the exact sum
// rounded by clearing fraction bits (chain_gemm_f32.cpp says why each step is exact).
// Whatever this arithmetic does not represent goes to block_fma for that block, or to the
// caller's block chain for the whole chain.

#include "dot_f32.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include <immintrin.h>

#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/specialize.hpp"

namespace mmaemu::model::detail {

namespace {

constexpr unsigned kMxcsrTowardZero = 0x7F80u; // round toward zero, all masked, no FTZ/DAZ
// above: block_fma (C would leave the range)
constexpr int kMaxCExp = specialize::kF32KernelMaxCExp;

std::atomic<bool> g_on{true};

// An FP8 format's codes as binary32 values by bit arithmetic: a normal code's 7 magnitude bits
// shifted so that its exponent field meets binary32's, plus the exponent bias difference; a
// subnormal code (exponent field 0, at most 8 of them) from a table.
template <bool E5M2> struct Decode {
  static constexpr int kShift = E5M2 ? 21 : 20;
  static constexpr int kFracBits = E5M2 ? 2 : 3;
  static constexpr int kBias = E5M2 ? 15 : 7; // ea = max(exponent field, 1) - bias
  static constexpr int kRebias = (127 - kBias) << 23;
  static constexpr int kFirstNormal = 1 << kFracBits;
  static constexpr int kSpecial = E5M2 ? 0x7C : 0x7F; // NaN or Inf: (code & kSpecial) == kSpecial

  // |value| of the 8 codes (7 magnitude bits each) in m7; subnormal codes m * 2^(1 - bias -
  // frac_bits) from the table (zero included).
  __attribute__((target("avx2"))) static __m256 magnitude(__m256i m7) {
    const float u = std::ldexp(1.0f, 1 - kBias - kFracBits);
    const __m256 sub = _mm256_setr_ps(0, u, 2 * u, 3 * u, 4 * u, 5 * u, 6 * u, 7 * u);
    const __m256 normal = _mm256_castsi256_ps(
        _mm256_add_epi32(_mm256_slli_epi32(m7, kShift), _mm256_set1_epi32(kRebias)));
    const __m256 small = _mm256_permutevar8x32_ps(sub, m7);
    const __m256i is_sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(kFirstNormal), m7);
    return _mm256_blendv_ps(normal, small, _mm256_castsi256_ps(is_sub));
  }
  // max(exponent field, 1): the alignment exponent plus the bias.
  __attribute__((target("avx2"))) static __m256i exponent(__m256i m7) {
    return _mm256_max_epi32(_mm256_srli_epi32(m7, kFracBits), _mm256_set1_epi32(1));
  }
};

int max_mant(Format f) {
  return f == Format::e5m2 ? 7 : 15;
}

// 8 codes (fewer at the end of a block: +0 codes after them).
inline std::uint64_t load8(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  if (n >= 8) {
    std::memcpy(&v, p, 8); // one load
  } else {
    for (int i = 0; i < n; ++i)
      v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  }
  return v;
}

__attribute__((target("avx2"))) inline __m256i widen(std::uint64_t v) {
  return _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(v)));
}

// Whether some of the n codes is NaN or Inf: (code & special) == special.
__attribute__((target("avx2"))) bool any_special(const std::uint8_t* p, std::size_t n,
                                                 int special) {
  const __m256i sp = _mm256_set1_epi8(static_cast<char>(special));
  std::size_t i = 0;
  __m256i hit = _mm256_setzero_si256();
  for (; i + 32 <= n; i += 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(_mm256_and_si256(x, sp), sp));
  }
  bool any = !_mm256_testz_si256(hit, hit);
  for (; i < n; ++i)
    any |= (p[i] & special) == special;
  return any;
}

__attribute__((target("avx2"))) inline int hmax(__m256i v) {
  __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4E));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xB1));
  return _mm_cvtsi128_si32(m);
}

__attribute__((target("avx2"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The constants of a chain's blocks.
struct Consts {
  const Preset* p;
  const BlockContext* ctx;
  std::uint32_t fo_mask; // clears the fraction bits below frac_out
  unsigned saved;        // the caller's MXCSR
};

// One block of n codes, in G groups of 8 (G > 0: n == 8 * G, so the loops unroll; G == 0:
// any n up to kMaxNfma), from c: the next c. overflow is set when the block is +-Inf.
template <bool A5, bool B5, int G>
__attribute__((target("avx2,fma"), always_inline)) inline std::uint32_t
block_t(const std::uint8_t* a, const std::uint8_t* b, int n, std::uint32_t c, const Consts& k,
        bool& overflow) {
  using DA = Decode<A5>;
  using DB = Decode<B5>;
  constexpr int kGroups = G > 0 ? G : Preset::kMaxNfma / 8;
  const int groups = G > 0 ? G : (n + 7) / 8;
  const __m256i low7 = _mm256_set1_epi32(0x7F);
  const __m256i sign_bit = _mm256_set1_epi32(INT32_MIN);
  const __m256 fzero = _mm256_setzero_ps();
  __m256 prod[kGroups];
  __m256i sg[kGroups];
  // The biased exponent sums max(field_a, 1) + max(field_b, 1) are >= 2; a pair with a zero
  // factor (a zero product) counts as 0.
  __m256i emax = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (int g = 0; g < groups; ++g) {
    const std::uint64_t ca = load8(a + 8 * g, G > 0 ? 8 : n - 8 * g);
    const std::uint64_t cb = load8(b + 8 * g, G > 0 ? 8 : n - 8 * g);
    const __m256i m7a = _mm256_and_si256(widen(ca), low7);
    const __m256i m7b = _mm256_and_si256(widen(cb), low7);
    prod[g] = _mm256_mul_ps(DA::magnitude(m7a), DB::magnitude(m7b)); // exact
    // The sign bits: bit 7 of each code's XOR, sign-extended, as binary32 sign bits.
    sg[g] = _mm256_and_si256(
        _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(static_cast<long long>(ca ^ cb))), sign_bit);
    const __m256i e = _mm256_add_epi32(DA::exponent(m7a), DB::exponent(m7b));
    const __m256 zero_pair = _mm256_cmp_ps(prod[g], fzero, _CMP_EQ_OQ);
    emax = _mm256_max_epi32(emax, _mm256_andnot_si256(_mm256_castps_si256(zero_pair), e));
  }
  const Preset& p = *k.p;
  const int Emax = hmax(emax);
  const std::uint32_t cabs = c & 0x7FFFFFFFu;
  const int cfield = static_cast<int>(cabs >> 23);
  int E = std::max(Emax - DA::kBias - DB::kBias, p.min_exp);
  if (cabs != 0)
    E = std::max(E, cfield ? cfield - 127 : -126);
  if (Emax == 0 || E > kMaxCExp) {
    // No nonzero product (block_fma lets a zero pair's exponent enter E), or C beyond the
    // range: block_fma computes the block.
    _mm_setcsr(k.saved);
    c = block_fma(*k.ctx, a, b, n, c);
    _mm_setcsr(kMxcsrTowardZero);
    overflow = (c & 0x7F800000u) == 0x7F800000u;
    return c;
  }
  const auto Cbits = static_cast<std::uint32_t>(E - p.frac + 23 + 127) << 23;
  const __m256 C = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(Cbits)));
  // The signed truncated terms, summed as a tree (every sum is exact, in any order).
  __m256 T[kGroups];
#pragma GCC unroll 4
  for (int g = 0; g < groups; ++g) {
    const __m256 t = _mm256_sub_ps(_mm256_add_ps(prod[g], C), C);
    T[g] = _mm256_xor_ps(t, _mm256_castsi256_ps(sg[g]));
  }
#pragma GCC unroll 4
  for (int w = 1; w < groups; w *= 2) {
#pragma GCC unroll 4
    for (int g = 0; g + w < groups; g += 2 * w)
      T[g] = _mm256_add_ps(T[g], T[g + w]);
  }
  // c's term: |c| truncated to a multiple of u, with c's sign; then the exact sum.
  const float Cs = std::bit_cast<float>(Cbits);
  const float tc = (std::bit_cast<float>(cabs) + Cs) - Cs;
  const float s =
      hsum(T[0]) + std::bit_cast<float>(std::bit_cast<std::uint32_t>(tc) | (c & 0x80000000u));
  const std::uint32_t sbits = std::bit_cast<std::uint32_t>(s);
  if ((sbits & 0x7FFFFFFFu) == 0)
    return 0u; // a zero sum is +0
  if ((sbits & 0x7F800000u) == 0) {
    _mm_setcsr(k.saved); // a binary32 subnormal sum: rounded by block_fma
    c = block_fma(*k.ctx, a, b, n, c);
    _mm_setcsr(kMxcsrTowardZero);
    return c;
  }
  return sbits & k.fo_mask;
}

// The chain for one format pair; NG > 0: the preset's blocks hold 8 * NG pairs.
template <bool A5, bool B5, int NG>
__attribute__((target("avx2,fma"))) bool
chain_t(const std::uint8_t* a, const std::uint8_t* b, std::size_t K, std::uint32_t c_bits,
        const Preset& p, FormatPair fmt, std::uint32_t& out) {
  if (any_special(a, K, Decode<A5>::kSpecial) || any_special(b, K, Decode<B5>::kSpecial))
    return false; // the caller's block chain applies the non-finite rule
  const BlockContext ctx(fmt.a, fmt.b, p);
  const Consts k{&p, &ctx, ~((1u << (23 - p.frac_out)) - 1u), _mm_getcsr()};
  const auto nfma = static_cast<std::size_t>(p.nfma);
  std::uint32_t c = c_bits;
  bool overflow = false; // then the caller's chain ends the chain there
  _mm_setcsr(kMxcsrTowardZero);
  std::size_t k0 = 0;
  if constexpr (NG > 0) {
    for (; k0 + nfma <= K && !overflow; k0 += nfma)
      c = block_t<A5, B5, NG>(a + k0, b + k0, 8 * NG, c, k, overflow);
  }
  for (; k0 < K && !overflow; k0 += nfma) {
    const int n = static_cast<int>(std::min(nfma, K - k0));
    c = block_t<A5, B5, 0>(a + k0, b + k0, n, c, k, overflow);
  }
  out = c;
  __asm__ volatile("" ::: "memory"); // every result above is computed before the mode returns
  _mm_setcsr(k.saved);
  return !overflow;
}

// Two chains of the same length, block by block in turn: their blocks are independent, so the
// CPU overlaps one chain's latency (a block's exponent needs the previous block's result) with
// the other's work. ok[i] is false where chain i needs the caller's block chain.
template <bool A5, bool B5, int NG>
__attribute__((target("avx2,fma"))) void chain2_t(const std::uint8_t* const* a,
                                                  const std::uint8_t* const* b, std::size_t K,
                                                  const std::uint32_t* c_bits, const Preset& p,
                                                  FormatPair fmt, std::uint32_t* out, bool* ok) {
  const BlockContext ctx(fmt.a, fmt.b, p);
  const Consts k{&p, &ctx, ~((1u << (23 - p.frac_out)) - 1u), _mm_getcsr()};
  const auto nfma = static_cast<std::size_t>(p.nfma);
  std::uint32_t c0 = c_bits[0], c1 = c_bits[1];
  bool over0 = false, over1 = false;
  _mm_setcsr(kMxcsrTowardZero);
  std::size_t k0 = 0;
  if constexpr (NG > 0) {
    for (; k0 + nfma <= K && !over0 && !over1; k0 += nfma) {
      c0 = block_t<A5, B5, NG>(a[0] + k0, b[0] + k0, 8 * NG, c0, k, over0);
      c1 = block_t<A5, B5, NG>(a[1] + k0, b[1] + k0, 8 * NG, c1, k, over1);
    }
  }
  for (; k0 < K && !over0 && !over1; k0 += nfma) {
    const int n = static_cast<int>(std::min(nfma, K - k0));
    c0 = block_t<A5, B5, 0>(a[0] + k0, b[0] + k0, n, c0, k, over0);
    c1 = block_t<A5, B5, 0>(a[1] + k0, b[1] + k0, n, c1, k, over1);
  }
  const bool done = k0 >= K;
  out[0] = c0;
  out[1] = c1;
  __asm__ volatile("" ::: "memory"); // every result above is computed before the mode returns
  _mm_setcsr(k.saved);
  // A chain that stopped early (an overflow, of its own or of the other) is left to the caller.
  ok[0] = done && !over0;
  ok[1] = done && !over1;
}

template <bool A5, bool B5>
bool chain_nfma(const std::uint8_t* a, const std::uint8_t* b, std::size_t K, std::uint32_t c_bits,
                const Preset& p, FormatPair fmt, std::uint32_t& out) {
  switch (p.nfma) {
  case 16:
    return chain_t<A5, B5, 2>(a, b, K, c_bits, p, fmt, out);
  case 32:
    return chain_t<A5, B5, 4>(a, b, K, c_bits, p, fmt, out);
  default:
    return chain_t<A5, B5, 0>(a, b, K, c_bits, p, fmt, out);
  }
}

} // namespace

__attribute__((target("avx2,fma"), noinline)) bool cpu_rounds_toward_zero() {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(kMxcsrTowardZero);
  volatile float one = 1.0f, tiny = 0x3p-25f;
  const float sum = _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(one), _mm_set_ss(tiny)));
  _mm_setcsr(saved);
  return std::bit_cast<std::uint32_t>(sum) == 0x3F800000u;
}

bool chain_f32_applies(const Preset& p, FormatPair fmt) {
  static const bool cpu = (__builtin_cpu_init(), true) && __builtin_cpu_supports("avx2") &&
                          __builtin_cpu_supports("fma") && cpu_rounds_toward_zero();
  if (!cpu || !g_on.load(std::memory_order_relaxed) || !is_fp8(fmt.a) || !is_fp8(fmt.b))
    return false;
  if (p.late_c || p.rounding != BlockRounding::toward_zero || p.frac > 21 ||
      p.min_exp < p.frac - 149 || p.min_exp > kMaxCExp || p.nfma > Preset::kMaxNfma)
    return false;
  // The largest block sum in units of u: nfma products below 2^(frac + 2) each (at most
  // max_mant^2 << (frac - frac_bits)), and c's term below 2^(frac + 1).
  const int s0 = p.frac - spec(fmt.a).frac_bits - spec(fmt.b).frac_bits;
  const double product = static_cast<double>(max_mant(fmt.a) * max_mant(fmt.b)) *
                         (s0 >= 0 ? static_cast<double>(1u << s0) : 1.0);
  return product * p.nfma + static_cast<double>(1u << (p.frac + 1)) < 0x1p24;
}

bool use_chain_f32(bool on) {
  return g_on.exchange(on);
}

bool chain_f32(const std::uint8_t* a, const std::uint8_t* b, std::size_t K, std::uint32_t c_bits,
               const Preset& p, FormatPair fmt, std::uint32_t& out) {
  const bool a5 = fmt.a == Format::e5m2, b5 = fmt.b == Format::e5m2;
  if (a5)
    return b5 ? chain_nfma<true, true>(a, b, K, c_bits, p, fmt, out)
              : chain_nfma<true, false>(a, b, K, c_bits, p, fmt, out);
  return b5 ? chain_nfma<false, true>(a, b, K, c_bits, p, fmt, out)
            : chain_nfma<false, false>(a, b, K, c_bits, p, fmt, out);
}

template <bool A5, bool B5>
void chain2_nfma(const std::uint8_t* const* a, const std::uint8_t* const* b, std::size_t K,
                 const std::uint32_t* c_bits, const Preset& p, FormatPair fmt, std::uint32_t* out,
                 bool* ok) {
  switch (p.nfma) {
  case 16:
    return chain2_t<A5, B5, 2>(a, b, K, c_bits, p, fmt, out, ok);
  case 32:
    return chain2_t<A5, B5, 4>(a, b, K, c_bits, p, fmt, out, ok);
  default:
    return chain2_t<A5, B5, 0>(a, b, K, c_bits, p, fmt, out, ok);
  }
}

void chain2_f32(const std::uint8_t* const* a, const std::uint8_t* const* b, std::size_t K,
                const std::uint32_t* c_bits, const Preset& p, FormatPair fmt, std::uint32_t* out,
                bool* ok) {
  for (int i = 0; i < 2; ++i) {
    const auto sa = fmt.a == Format::e5m2 ? 0x7C : 0x7F;
    const auto sb = fmt.b == Format::e5m2 ? 0x7C : 0x7F;
    if (((c_bits[i] >> 23) & 0xFFu) == 0xFFu || any_special(a[i], K, sa) ||
        any_special(b[i], K, sb)) {
      ok[0] = ok[1] = false; // the caller computes both, one at a time
      return;
    }
  }
  const bool a5 = fmt.a == Format::e5m2, b5 = fmt.b == Format::e5m2;
  if (a5) {
    if (b5)
      chain2_nfma<true, true>(a, b, K, c_bits, p, fmt, out, ok);
    else
      chain2_nfma<true, false>(a, b, K, c_bits, p, fmt, out, ok);
  } else if (b5) {
    chain2_nfma<false, true>(a, b, K, c_bits, p, fmt, out, ok);
  } else {
    chain2_nfma<false, false>(a, b, K, c_bits, p, fmt, out, ok);
  }
}

} // namespace mmaemu::model::detail
