// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Exact host definitions of the CUDA device intrinsics the kernels use, in the global namespace
// as in CUDA. The float operations give CUDA's bits: IEEE binary32 results with subnormal inputs
// and outputs kept (no flush to zero), correctly rounded in the named mode whatever the host's
// current rounding mode is, and whatever -frounding-math or -ffp-contract the including TU uses:
// they compute an exact double result (see detail::) and round it with integer operations.
// A NaN result is always CUDA's canonical NaN, 0x7fffffff, whatever the input NaN's payload.

#include <bit>
#include <cmath>
#include <cstdint>

namespace mmaemu::kernels::host::detail {

enum class Rounding { nearest_even, toward_zero };

inline constexpr std::uint32_t kCanonicalNaN = 0x7fffffffu;
inline constexpr std::uint32_t kInfBits = 0x7f800000u;
inline constexpr std::uint32_t kMaxFiniteBits = 0x7f7fffffu;

// Rounds `exact` (finite, non-zero, normal as a double) to the nearest binary32 in `mode`,
// giving its bits; subnormal results are kept, overflow gives Inf (nearest) or the largest
// finite value (toward zero). Integer operations only, so the host rounding mode is irrelevant.
constexpr std::uint32_t round_to_float_bits(double exact, Rounding mode) {
  const auto d = std::bit_cast<std::uint64_t>(exact);
  const auto sign = static_cast<std::uint32_t>(d >> 32) & 0x80000000u;
  const int e = static_cast<int>((d >> 52) & 0x7ff) - 1023;
  const std::uint64_t sig = (d & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
  // Keep 24 significant bits for a normal result, fewer below 2^-126 (fixed LSB 2^-149).
  const int shift = e >= -126 ? 29 : 29 + (-126 - e);
  if (shift > 54) {
    return sign; // |exact| < 2^-151: below half the smallest subnormal in either mode
  }
  std::uint64_t q = sig >> shift;
  const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (mode == Rounding::nearest_even && (rem > half || (rem == half && (q & 1) != 0))) {
    ++q;
  }
  if (e >= 128) {
    return sign | (mode == Rounding::nearest_even ? kInfBits : kMaxFiniteBits);
  }
  // q carries the implicit bit, so a rounding carry out of the significand moves the
  // exponent field up by itself; a subnormal that rounds up to 2^-126 becomes the min normal.
  const std::uint64_t mag = e >= -126 ? (static_cast<std::uint64_t>(e + 126) << 23) + q : q;
  if (mag >= kInfBits) {
    return sign | (mode == Rounding::nearest_even ? kInfBits : kMaxFiniteBits);
  }
  return sign | static_cast<std::uint32_t>(mag);
}

// Exponent of the last significand bit of a finite binary32 magnitude (bits without sign).
constexpr int lsb_exponent(std::uint32_t magnitude) {
  const int biased = static_cast<int>(magnitude >> 23);
  return biased == 0 ? -149 : biased - 150;
}

// a + b on binary32 bit patterns, correctly rounded in `mode`.
constexpr std::uint32_t add_bits(std::uint32_t ua, std::uint32_t ub, Rounding mode) {
  std::uint32_t ma = ua & 0x7fffffffu;
  std::uint32_t mb = ub & 0x7fffffffu;
  if (ma > kInfBits || mb > kInfBits) {
    return kCanonicalNaN;
  }
  if (ma == kInfBits) {
    return (mb == kInfBits && ((ua ^ ub) >> 31) != 0) ? kCanonicalNaN : ua;
  }
  if (mb == kInfBits) {
    return ub;
  }
  if (ma == 0 || mb == 0) {
    // x + 0 is x exactly; +0 + -0 is +0 and -0 + -0 is -0 (in both modes).
    return ma == 0 ? (mb == 0 ? (ua & ub) : ub) : ua;
  }
  if (ma < mb) {
    const std::uint32_t t = ua;
    ua = ub;
    ub = t;
    ma = ua & 0x7fffffffu;
    mb = ub & 0x7fffffffu;
  }
  const double da = static_cast<double>(std::bit_cast<float>(ua));
  double db = static_cast<double>(std::bit_cast<float>(ub));
  const int ea = lsb_exponent(ma);
  if (ea - lsb_exponent(mb) > 28) {
    // The exact sum would need more than 53 bits. Then |b| < 2^(ea-5), far below any midpoint
    // or neighbour of a (a is normal here), so a stand-in of 2^(ea-6) with b's sign lands in the
    // same rounding interval in every mode and makes the double sum exact.
    db = std::bit_cast<double>((static_cast<std::uint64_t>(ub >> 31) << 63) |
                               (static_cast<std::uint64_t>(ea - 6 + 1023) << 52));
  }
  // Exact: both operands are multiples of 2^min(lsb) and the sum spans at most 53 bits, so no
  // rounding happens and the host mode cannot matter.
  const double s = da + db;
  if (s == 0.0) {
    return 0; // x + (-x) is +0 in round-to-nearest and toward zero (only downward gives -0)
  }
  return round_to_float_bits(s, mode);
}

// a * b on binary32 bit patterns, correctly rounded in `mode`.
constexpr std::uint32_t mul_bits(std::uint32_t ua, std::uint32_t ub, Rounding mode) {
  const std::uint32_t ma = ua & 0x7fffffffu;
  const std::uint32_t mb = ub & 0x7fffffffu;
  const std::uint32_t sign = (ua ^ ub) & 0x80000000u;
  if (ma > kInfBits || mb > kInfBits) {
    return kCanonicalNaN;
  }
  if (ma == kInfBits || mb == kInfBits) {
    return (ma == 0 || mb == 0) ? kCanonicalNaN : (sign | kInfBits);
  }
  if (ma == 0 || mb == 0) {
    return sign;
  }
  // Exact: 24 x 24 significand bits fit in 53, and 2^-298 .. 2^256 is inside the double range.
  const double p =
      static_cast<double>(std::bit_cast<float>(ua)) * static_cast<double>(std::bit_cast<float>(ub));
  return round_to_float_bits(p, mode);
}

// The bits of sign * mag * 2^lo (mag > 0) rounded to binary32 in `mode`: an exact integer
// rounded with integer operations (fma_bits' last step).
constexpr std::uint32_t round_scaled_bits(std::uint32_t sign, unsigned __int128 mag, int lo,
                                          Rounding mode) {
  int top = 127;
  while (((mag >> top) & 1) == 0)
    --top;
  // The LSB a binary32 keeps: 24 significant bits, never below 2^-149.
  int lsb = lo + top - 23;
  if (lsb < -149)
    lsb = -149;
  unsigned __int128 q = 0;
  if (lsb <= lo) {
    q = mag << (lo - lsb);
  } else {
    const int shift = lsb - lo;
    if (shift > top + 1)
      return sign; // below half the smallest subnormal: 0 in either mode
    q = mag >> shift;
    const unsigned __int128 rem = mag & ((static_cast<unsigned __int128>(1) << shift) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    if (mode == Rounding::nearest_even && (rem > half || (rem == half && (q & 1) != 0)))
      ++q;
  }
  // q carries the implicit bit (q in [2^23, 2^24] for a normal result), so a carry moves the
  // exponent field by itself; a subnormal q that reaches 2^23 is the smallest normal.
  const unsigned __int128 bits =
      lsb == -149 ? q : (static_cast<unsigned __int128>(lsb + 23 + 126) << 23) + q;
  if (lsb + 23 > 127 || bits >= kInfBits)
    return sign | (mode == Rounding::nearest_even ? kInfBits : kMaxFiniteBits);
  return sign | static_cast<std::uint32_t>(bits);
}

// a * b + c on binary32 bit patterns with one rounding in `mode` (fused multiply-add).
constexpr std::uint32_t fma_bits(std::uint32_t ua, std::uint32_t ub, std::uint32_t uc,
                                 Rounding mode) {
  const std::uint32_t ma = ua & 0x7fffffffu, mb = ub & 0x7fffffffu, mc = uc & 0x7fffffffu;
  const std::uint32_t psign = (ua ^ ub) & 0x80000000u, csign = uc & 0x80000000u;
  if (ma > kInfBits || mb > kInfBits || mc > kInfBits)
    return kCanonicalNaN;
  if (ma == kInfBits || mb == kInfBits) {
    if (ma == 0 || mb == 0)
      return kCanonicalNaN; // Inf * 0
    if (mc == kInfBits && psign != csign)
      return kCanonicalNaN; // Inf - Inf
    return psign | kInfBits;
  }
  if (mc == kInfBits)
    return uc;
  if (ma == 0 || mb == 0) {
    // An exact zero product: c unchanged, or the sign rule of a zero sum (+0 unless both -0).
    return mc != 0 ? uc : (psign & csign);
  }
  // The product exactly: a 48-bit integer times 2^pe.
  const auto sig = [](std::uint32_t m) -> std::uint64_t {
    return m >= 0x00800000u ? (m & 0x7fffffu) | 0x800000u : m;
  };
  const std::uint64_t sp = sig(ma) * sig(mb);
  const int pe = lsb_exponent(ma) + lsb_exponent(mb);
  if (mc == 0)
    return round_scaled_bits(psign, sp, pe, mode);
  std::uint64_t sc = sig(mc);
  int ce = lsb_exponent(mc);
  // The position of each operand's leading bit, and a stand-in for an operand that lies
  // entirely below the other's last bit by more than 4: a single bit at 2^(lsb - 5) of its
  // sign falls in the same rounding interval as the true value in either mode (it is below
  // half the result's ulp and not zero), and keeps the exact span within 128 bits.
  const auto top_of = [](std::uint64_t v, int e) {
    int t = 63;
    while (((v >> t) & 1) == 0)
      --t;
    return e + t;
  };
  std::uint64_t spp = sp;
  int pee = pe;
  if (top_of(sc, ce) < pee - 4) {
    sc = 1;
    ce = pee - 5;
  } else if (top_of(spp, pee) < ce - 4) {
    spp = 1;
    pee = ce - 5;
  }
  const int lo = pee < ce ? pee : ce;
  const unsigned __int128 xp = static_cast<unsigned __int128>(spp) << (pee - lo);
  const unsigned __int128 xc = static_cast<unsigned __int128>(sc) << (ce - lo);
  if (psign == csign)
    return round_scaled_bits(psign, xp + xc, lo, mode);
  if (xp == xc)
    return 0; // an exact zero sum is +0 in round-to-nearest and toward zero
  return xp > xc ? round_scaled_bits(psign, xp - xc, lo, mode)
                 : round_scaled_bits(csign, xc - xp, lo, mode);
}

// Applies `op` to each of the four bytes of a and b (lane 0 in bits 0..7), as unsigned values.
template <class Op> constexpr unsigned int per_byte(unsigned int a, unsigned int b, Op op) {
  unsigned int r = 0;
  for (int lane = 0; lane < 4; ++lane) {
    const unsigned int x = (a >> (8 * lane)) & 0xffu;
    const unsigned int y = (b >> (8 * lane)) & 0xffu;
    r |= (static_cast<unsigned int>(op(x, y)) & 0xffu) << (8 * lane);
  }
  return r;
}

// A byte read as two's-complement signed.
constexpr int signed_byte(unsigned int x) {
  return x >= 0x80u ? static_cast<int>(x) - 256 : static_cast<int>(x);
}

constexpr int saturate_signed_byte(int v) {
  return v > 127 ? 127 : (v < -128 ? -128 : v);
}

} // namespace mmaemu::kernels::host::detail

// --- Float arithmetic with an explicit rounding mode ---------------------------------------

inline float __fadd_rn(float a, float b) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(add_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b), Rounding::nearest_even));
}
inline float __fadd_rz(float a, float b) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(add_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b), Rounding::toward_zero));
}
// a - b is a + (-b) bit for bit (the sign flip is exact), including x - x = +0.
inline float __fsub_rn(float a, float b) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(add_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b) ^ 0x80000000u,
                                       Rounding::nearest_even));
}
inline float __fsub_rz(float a, float b) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(add_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b) ^ 0x80000000u,
                                       Rounding::toward_zero));
}
inline float __fmul_rn(float a, float b) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(mul_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b), Rounding::nearest_even));
}
inline float __fmul_rz(float a, float b) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(mul_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b), Rounding::toward_zero));
}

// a * b + c, one rounding toward zero (CUDA's fma.rz.f32; the v9 kernel's FFMA.RZ).
inline float __fmaf_rz(float a, float b, float c) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(fma_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b),
                                       std::bit_cast<std::uint32_t>(c), Rounding::toward_zero));
}
inline float __fmaf_rn(float a, float b, float c) {
  using namespace mmaemu::kernels::host::detail;
  return std::bit_cast<float>(fma_bits(std::bit_cast<std::uint32_t>(a),
                                       std::bit_cast<std::uint32_t>(b),
                                       std::bit_cast<std::uint32_t>(c), Rounding::nearest_even));
}

// --- Reinterpretation ------------------------------------------------------------------------

inline unsigned int __float_as_uint(float x) {
  return std::bit_cast<unsigned int>(x);
}
inline float __uint_as_float(unsigned int x) {
  return std::bit_cast<float>(x);
}
inline int __float_as_int(float x) {
  return std::bit_cast<int>(x);
}
inline float __int_as_float(int x) {
  return std::bit_cast<float>(x);
}

// --- Per-byte SIMD (lane i is bits 8i..8i+7) --------------------------------------------------

// Signed bytes added, each sum clamped to -128..127.
inline unsigned int __vaddss4(unsigned int a, unsigned int b) {
  using namespace mmaemu::kernels::host::detail;
  return per_byte(a, b, [](unsigned int x, unsigned int y) {
    return static_cast<unsigned int>(saturate_signed_byte(signed_byte(x) + signed_byte(y)));
  });
}
// Signed bytes subtracted (a - b), each difference clamped to -128..127.
inline unsigned int __vsubss4(unsigned int a, unsigned int b) {
  using namespace mmaemu::kernels::host::detail;
  return per_byte(a, b, [](unsigned int x, unsigned int y) {
    return static_cast<unsigned int>(saturate_signed_byte(signed_byte(x) - signed_byte(y)));
  });
}
// Bytes added modulo 256, no carry between lanes.
inline unsigned int __vadd4(unsigned int a, unsigned int b) {
  return mmaemu::kernels::host::detail::per_byte(
      a, b, [](unsigned int x, unsigned int y) { return x + y; });
}
// Bytes subtracted (a - b) modulo 256, no borrow between lanes.
inline unsigned int __vsub4(unsigned int a, unsigned int b) {
  return mmaemu::kernels::host::detail::per_byte(
      a, b, [](unsigned int x, unsigned int y) { return x - y; });
}
inline unsigned int __vmaxs4(unsigned int a, unsigned int b) {
  using namespace mmaemu::kernels::host::detail;
  return per_byte(a, b, [](unsigned int x, unsigned int y) {
    return signed_byte(x) >= signed_byte(y) ? x : y;
  });
}
inline unsigned int __vmins4(unsigned int a, unsigned int b) {
  using namespace mmaemu::kernels::host::detail;
  return per_byte(a, b, [](unsigned int x, unsigned int y) {
    return signed_byte(x) <= signed_byte(y) ? x : y;
  });
}
inline unsigned int __vmaxu4(unsigned int a, unsigned int b) {
  return mmaemu::kernels::host::detail::per_byte(
      a, b, [](unsigned int x, unsigned int y) { return x >= y ? x : y; });
}
inline unsigned int __vminu4(unsigned int a, unsigned int b) {
  return mmaemu::kernels::host::detail::per_byte(
      a, b, [](unsigned int x, unsigned int y) { return x <= y ? x : y; });
}

// --- Bit counting -----------------------------------------------------------------------------

// Leading zero bits of the 32-bit pattern; 32 for 0.
inline int __clz(int x) {
  return std::countl_zero(static_cast<std::uint32_t>(x));
}
// Leading zero bits of the 64-bit pattern; 64 for 0.
inline int __clzll(long long x) {
  return std::countl_zero(static_cast<std::uint64_t>(x));
}
inline int __popc(unsigned int x) {
  return std::popcount(x);
}
inline int __popcll(unsigned long long x) {
  return std::popcount(x);
}
// 1-based position of the least significant set bit; 0 for 0.
inline int __ffs(int x) {
  return x == 0 ? 0 : std::countr_zero(static_cast<std::uint32_t>(x)) + 1;
}
inline int __ffsll(long long x) {
  return x == 0 ? 0 : std::countr_zero(static_cast<std::uint64_t>(x)) + 1;
}
// The 32 bits in reverse order (bit 0 becomes bit 31).
inline unsigned int __brev(unsigned int x) {
  unsigned int r = 0;
  for (int i = 0; i < 32; ++i) {
    r |= ((x >> i) & 1u) << (31 - i);
  }
  return r;
}

// --- min / max as CUDA overloads them (mixed int/unsigned compares as unsigned) -------------

inline int min(int a, int b) {
  return a < b ? a : b;
}
inline int max(int a, int b) {
  return a > b ? a : b;
}
inline unsigned int min(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
inline unsigned int max(unsigned int a, unsigned int b) {
  return a > b ? a : b;
}
inline unsigned int min(int a, unsigned int b) {
  return min(static_cast<unsigned int>(a), b);
}
inline unsigned int max(int a, unsigned int b) {
  return max(static_cast<unsigned int>(a), b);
}
inline unsigned int min(unsigned int a, int b) {
  return min(a, static_cast<unsigned int>(b));
}
inline unsigned int max(unsigned int a, int b) {
  return max(a, static_cast<unsigned int>(b));
}
inline long min(long a, long b) {
  return a < b ? a : b;
}
inline long max(long a, long b) {
  return a > b ? a : b;
}
inline unsigned long min(unsigned long a, unsigned long b) {
  return a < b ? a : b;
}
inline unsigned long max(unsigned long a, unsigned long b) {
  return a > b ? a : b;
}
inline long long min(long long a, long long b) {
  return a < b ? a : b;
}
inline long long max(long long a, long long b) {
  return a > b ? a : b;
}
inline unsigned long long min(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
inline unsigned long long max(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}
// fminf / fmaxf: a NaN operand yields the other operand.
inline float min(float a, float b) {
  return std::fmin(a, b);
}
inline float max(float a, float b) {
  return std::fmax(a, b);
}
inline unsigned int umin(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
inline unsigned int umax(unsigned int a, unsigned int b) {
  return a > b ? a : b;
}
