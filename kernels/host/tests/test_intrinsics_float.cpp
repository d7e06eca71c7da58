// SPDX-License-Identifier: BSD-2-Clause
// The float intrinsics against the host FPU: the hardware computes each reference result in the
// intrinsic's rounding mode (fesetround; this file is compiled with -frounding-math and feeds
// the operands through volatile so nothing is folded at compile time), while the intrinsic runs
// under each of the four host modes in turn, which must not matter. Operands: every pair of a
// table of special values, then seeded random pairs in three shapes. Bits are compared as
// uint32; a NaN result matches any NaN and must be the canonical 0x7fffffff.

#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mmaemu/kernels/host/intrinsics.hpp"

namespace {

using mmaemu::kernels::host::detail::add_bits;
using mmaemu::kernels::host::detail::mul_bits;
using mmaemu::kernels::host::detail::Rounding;

constexpr std::uint64_t kSeed = 0x6d6d61656d75ull; // "mmaemu"
constexpr std::size_t kRandomPairs = 1 << 20; // per shape and intrinsic: 3 Mi each, 18 Mi in all
constexpr int kHostModes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

enum class Op { add, sub, mul };

struct Intrinsic {
  const char* name;
  Op op;
  int mode; // the hardware rounding mode that gives the reference
  float (*fn)(float, float);
};

const Intrinsic kIntrinsics[] = {
    {"__fadd_rn", Op::add, FE_TONEAREST, __fadd_rn},
    {"__fadd_rz", Op::add, FE_TOWARDZERO, __fadd_rz},
    {"__fsub_rn", Op::sub, FE_TONEAREST, __fsub_rn},
    {"__fsub_rz", Op::sub, FE_TOWARDZERO, __fsub_rz},
    {"__fmul_rn", Op::mul, FE_TONEAREST, __fmul_rn},
    {"__fmul_rz", Op::mul, FE_TOWARDZERO, __fmul_rz},
};

bool is_nan(std::uint32_t bits) {
  return (bits & 0x7fffffffu) > 0x7f800000u;
}

std::string hex(std::uint32_t bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", bits);
  return buf;
}

// The host FPU's result of a op b in `mode`.
void hardware(Op op, int mode, const std::vector<std::uint32_t>& a,
              const std::vector<std::uint32_t>& b, std::vector<std::uint32_t>& out) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  for (std::size_t i = 0; i < a.size(); ++i) {
    volatile float x = std::bit_cast<float>(a[i]);
    volatile float y = std::bit_cast<float>(b[i]);
    volatile float r = op == Op::add ? x + y : (op == Op::sub ? x - y : x * y);
    out[i] = std::bit_cast<std::uint32_t>(static_cast<float>(r));
  }
  std::fesetround(saved);
}

// Every pair through `f` against the hardware, the host mode rotating every 4096 pairs.
void check_pairs(const Intrinsic& f, const std::vector<std::uint32_t>& a,
                 const std::vector<std::uint32_t>& b) {
  std::vector<std::uint32_t> want(a.size());
  hardware(f.op, f.mode, a, b, want);
  const int saved = std::fegetround();
  std::size_t failures = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i % 4096 == 0) {
      std::fesetround(kHostModes[(i / 4096) % 4]);
    }
    volatile float x = std::bit_cast<float>(a[i]);
    volatile float y = std::bit_cast<float>(b[i]);
    const auto got = std::bit_cast<std::uint32_t>(f.fn(x, y));
    const bool ok = is_nan(want[i]) ? got == 0x7fffffffu : got == want[i];
    if (!ok && ++failures <= 10) {
      ADD_FAILURE() << f.name << "(" << hex(a[i]) << ", " << hex(b[i]) << ") = " << hex(got)
                    << ", hardware " << hex(want[i]) << " (host mode " << kHostModes[(i / 4096) % 4]
                    << ")";
    }
  }
  std::fesetround(saved);
  EXPECT_EQ(failures, 0u) << f.name << ": " << failures << " of " << a.size() << " pairs differ";
}

// Signed zeros, subnormal and normal extremes, 1 and its neighbours, the largest finite values
// and their neighbourhood, Inf, quiet and signalling NaNs, and every power of two with its
// neighbours; each with both signs.
std::vector<std::uint32_t> special_values() {
  std::set<std::uint32_t> v = {
      0x00000000, 0x00000001, 0x00000002, 0x00000003, 0x007fffff, 0x007ffffe, 0x00400000,
      0x00400001, 0x00800000, 0x00800001, 0x00ffffff, 0x3f800000, 0x3f800001, 0x3f7fffff,
      0x3fc00000, 0x40400000, 0x3dcccccd, 0x3eaaaaab, 0x33800000, 0x33800001, 0x337fffff,
      0x4b000000, 0x4b000001, 0x4b7fffff, 0x4b800000, 0x7f7fffff, 0x7f7ffffe, 0x7f7f0000,
      0x7f000000, 0x7effffff, 0x7f400000, 0x7e800000, 0x7f800000, 0x7fc00000, 0x7f800001,
      0x7fffffff, 0x7fa00000};
  for (std::uint32_t k = 0; k < 23; ++k) {
    v.insert(1u << k); // subnormal powers of two
  }
  for (std::uint32_t e = 1; e < 255; ++e) {
    v.insert(e << 23);
    v.insert((e << 23) + 1);
    v.insert((e << 23) - 1);
  }
  std::vector<std::uint32_t> out;
  for (std::uint32_t x : v) {
    out.push_back(x);
    out.push_back(x | 0x80000000u);
  }
  return out;
}

TEST(HostFloatIntrinsics, AllPairsOfSpecialValuesMatchTheHardware) {
  const std::vector<std::uint32_t> s = special_values();
  std::vector<std::uint32_t> a;
  std::vector<std::uint32_t> b;
  a.reserve(s.size() * s.size());
  b.reserve(s.size() * s.size());
  for (std::uint32_t x : s) {
    for (std::uint32_t y : s) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  std::cout << s.size() << " special values, " << a.size() << " pairs per intrinsic\n";
  for (const Intrinsic& f : kIntrinsics) {
    check_pairs(f, a, b);
  }
}

// A significand in TestFloat's spirit: random, all ones, one bit, or a run of ones at either end.
std::uint32_t significand(std::mt19937_64& rng) {
  const auto r = static_cast<std::uint32_t>(rng());
  const std::uint32_t k = (r >> 8) % 23;
  switch (r & 7) {
  case 0:
    return 0x7fffffu;
  case 1:
    return 1u << k;
  case 2:
    return (1u << k) - 1;
  case 3:
    return 0x7fffffu & ~((1u << k) - 1);
  default:
    return (r >> 9) & 0x7fffffu;
  }
}

std::uint32_t with_exponent(std::mt19937_64& rng, int biased) {
  const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1) << 31;
  const int e = biased < 0 ? 0 : (biased > 254 ? 254 : biased);
  return sign | (static_cast<std::uint32_t>(e) << 23) | significand(rng);
}

// Three shapes of random pairs: any bit patterns; exponents within 40 of each other (carries,
// cancellation, the sticky stand-in at the edge of exactness); exponents whose product lands
// near the subnormal range or near overflow.
void random_pairs(std::uint64_t seed, int shape, std::vector<std::uint32_t>& a,
                  std::vector<std::uint32_t>& b) {
  std::mt19937_64 rng(seed);
  a.resize(kRandomPairs);
  b.resize(kRandomPairs);
  for (std::size_t i = 0; i < kRandomPairs; ++i) {
    if (shape == 0) {
      a[i] = static_cast<std::uint32_t>(rng());
      b[i] = static_cast<std::uint32_t>(rng());
    } else if (shape == 1) {
      const int ea = static_cast<int>(rng() % 256);
      a[i] = with_exponent(rng, ea);
      b[i] = with_exponent(rng, ea + static_cast<int>(rng() % 81) - 40);
    } else {
      const int ea = static_cast<int>(rng() % 254) + 1;
      // product exponent (biased) ea + eb - 127 near -24..8 (subnormal) or 250..262 (overflow)
      const int target =
          rng() & 1 ? static_cast<int>(rng() % 33) - 24 : static_cast<int>(rng() % 13) + 250;
      a[i] = with_exponent(rng, ea);
      b[i] = with_exponent(rng, target - ea + 127);
    }
  }
}

TEST(HostFloatIntrinsics, SeededRandomPairsMatchTheHardware) {
  std::cout << "mt19937_64 seed " << kSeed << " (+shape)\n";
  ::testing::Test::RecordProperty("seed", std::to_string(kSeed));
  for (int shape = 0; shape < 3; ++shape) {
    SCOPED_TRACE("mt19937_64 seed " + std::to_string(kSeed + shape) + ", shape " +
                 std::to_string(shape));
    std::vector<std::uint32_t> a;
    std::vector<std::uint32_t> b;
    random_pairs(kSeed + static_cast<std::uint64_t>(shape), shape, a, b);
    for (const Intrinsic& f : kIntrinsics) {
      check_pairs(f, a, b);
    }
  }
}

// Hand-worked cases, checked at compile time (the bit functions are constexpr): ties to even,
// truncation, the sticky stand-in, subnormal rounding and overflow in each mode.
constexpr std::uint32_t kOne = 0x3f800000u;
constexpr std::uint32_t kTwoPowMinus24 = 0x33800000u;                          // half an ulp of 1
static_assert(add_bits(kOne, kTwoPowMinus24, Rounding::nearest_even) == kOne); // tie, even
static_assert(add_bits(kOne + 1, kTwoPowMinus24, Rounding::nearest_even) == kOne + 2);
static_assert(add_bits(kOne + 1, kTwoPowMinus24, Rounding::toward_zero) == kOne + 1);
static_assert(add_bits(kOne, 0x80000001u, Rounding::toward_zero) == 0x3f7fffffu); // 1 - tiny
static_assert(add_bits(kOne, 0x80000001u, Rounding::nearest_even) == kOne);
static_assert(add_bits(0x3f800001u, 0xbf800001u, Rounding::nearest_even) == 0); // x - x = +0
static_assert(add_bits(0x80000000u, 0x80000000u, Rounding::toward_zero) == 0x80000000u);
static_assert(add_bits(0x7f7fffffu, 0x73800000u, Rounding::nearest_even) == 0x7f800000u);
static_assert(add_bits(0x7f7fffffu, 0x73800000u, Rounding::toward_zero) == 0x7f7fffffu);
static_assert(add_bits(0x7f800000u, 0xff800000u, Rounding::nearest_even) == 0x7fffffffu);
static_assert(add_bits(0x00000001u, 0x00000001u, Rounding::toward_zero) == 0x00000002u);
static_assert(mul_bits(0x00000001u, 0x3f000000u, Rounding::nearest_even) == 0); // tie to 0
static_assert(mul_bits(0x00000003u, 0x3f000000u, Rounding::nearest_even) == 2); // 1.5 -> 2
static_assert(mul_bits(0x00000003u, 0x3f000000u, Rounding::toward_zero) == 1);
static_assert(mul_bits(0x00ffffffu, 0x3f000000u, Rounding::nearest_even) == 0x00800000u);
static_assert(mul_bits(0x7f7fffffu, 0x40000000u, Rounding::toward_zero) == 0x7f7fffffu);
static_assert(mul_bits(0x7f7fffffu, 0x40000000u, Rounding::nearest_even) == 0x7f800000u);
static_assert(mul_bits(0x80000000u, 0x7f800000u, Rounding::nearest_even) == 0x7fffffffu);
static_assert(mul_bits(0x80000000u, 0x3f800000u, Rounding::toward_zero) == 0x80000000u);

TEST(HostFloatIntrinsics, NaNResultsAreTheCanonicalNaN) {
  EXPECT_EQ(__float_as_uint(__fadd_rn(__uint_as_float(0xffc00001u), 1.0f)), 0x7fffffffu);
  EXPECT_EQ(__float_as_uint(__fmul_rz(__uint_as_float(0x7f800001u), 0.0f)), 0x7fffffffu);
  EXPECT_EQ(__float_as_uint(__fsub_rn(__uint_as_float(0x7f800000u), __uint_as_float(0x7f800000u))),
            0x7fffffffu);
}

TEST(HostFloatIntrinsics, ReinterpretationKeepsEveryBit) {
  for (std::uint32_t bits : {0u, 0x80000000u, 0x00000001u, 0x7f800001u, 0xffffffffu, 0x3f800000u}) {
    EXPECT_EQ(__float_as_uint(__uint_as_float(bits)), bits);
    EXPECT_EQ(static_cast<std::uint32_t>(__float_as_int(__int_as_float(static_cast<int>(bits)))),
              bits);
  }
  EXPECT_EQ(__float_as_uint(1.0f), 0x3f800000u);
  EXPECT_EQ(__float_as_uint(-2.5f), 0xc0200000u);
}

} // namespace

// --- Fused multiply-add (__fmaf_rz, __fmaf_rn) ----------------------------------------------

struct FmaIntrinsic {
  const char* name;
  int mode;
  float (*fn)(float, float, float);
};

const FmaIntrinsic kFmaIntrinsics[] = {
    {"__fmaf_rz", FE_TOWARDZERO, __fmaf_rz},
    {"__fmaf_rn", FE_TONEAREST, __fmaf_rn},
};

// Every triple through `f` against the host's std::fma in the intrinsic's mode (glibc's fmaf is
// correctly rounded in the current mode), the host mode rotating while `f` runs.
void check_triples(const FmaIntrinsic& f, const std::vector<std::uint32_t>& a,
                   const std::vector<std::uint32_t>& b, const std::vector<std::uint32_t>& c) {
  std::vector<std::uint32_t> want(a.size());
  const int saved = std::fegetround();
  std::fesetround(f.mode);
  for (std::size_t i = 0; i < a.size(); ++i) {
    volatile float x = std::bit_cast<float>(a[i]);
    volatile float y = std::bit_cast<float>(b[i]);
    volatile float z = std::bit_cast<float>(c[i]);
    volatile float r =
        std::fma(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z));
    want[i] = std::bit_cast<std::uint32_t>(static_cast<float>(r));
  }
  std::size_t failures = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i % 4096 == 0)
      std::fesetround(kHostModes[(i / 4096) % 4]);
    const auto got = std::bit_cast<std::uint32_t>(
        f.fn(std::bit_cast<float>(a[i]), std::bit_cast<float>(b[i]), std::bit_cast<float>(c[i])));
    const bool ok = is_nan(want[i]) ? got == 0x7fffffffu : got == want[i];
    if (!ok && ++failures <= 10) {
      ADD_FAILURE() << f.name << "(" << hex(a[i]) << ", " << hex(b[i]) << ", " << hex(c[i])
                    << ") = " << hex(got) << ", hardware " << hex(want[i]);
    }
  }
  std::fesetround(saved);
  EXPECT_EQ(failures, 0u) << f.name << ": " << failures << " of " << a.size() << " triples differ";
}

TEST(HostFmaIntrinsics, TriplesOfSpecialValuesMatchTheHardware) {
  // Every 13th special value (both signs kept by the table's order): about 120 values, 1.8 M
  // triples per intrinsic.
  const std::vector<std::uint32_t> all = special_values();
  std::vector<std::uint32_t> s;
  for (std::size_t i = 0; i < all.size(); i += 13)
    s.push_back(all[i]);
  for (std::uint32_t x : {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u,
                          0xff800000u, 0x7fc00000u, 0x00000001u, 0x7f7fffffu, 0x33800000u})
    s.push_back(x);
  std::vector<std::uint32_t> a, b, c;
  for (std::uint32_t x : s)
    for (std::uint32_t y : s)
      for (std::uint32_t z : s) {
        a.push_back(x);
        b.push_back(y);
        c.push_back(z);
      }
  std::cout << s.size() << " special values, " << a.size() << " triples per intrinsic\n";
  for (const FmaIntrinsic& f : kFmaIntrinsics)
    check_triples(f, a, b, c);
}

// Random triples: any bits; c near the product (cancellation, carries); c far below or above
// the product (the sticky stand-in); products near the subnormal range and overflow.
TEST(HostFmaIntrinsics, SeededRandomTriplesMatchTheHardware) {
  std::cout << "mt19937_64 seed " << kSeed << " (fma)\n";
  std::mt19937_64 rng(kSeed ^ 0x666d61u);
  constexpr std::size_t kTriples = 1 << 20;
  std::vector<std::uint32_t> a(kTriples), b(kTriples), c(kTriples);
  for (std::size_t i = 0; i < kTriples; ++i) {
    const int shape = static_cast<int>(i % 4);
    if (shape == 0) {
      a[i] = static_cast<std::uint32_t>(rng());
      b[i] = static_cast<std::uint32_t>(rng());
      c[i] = static_cast<std::uint32_t>(rng());
      continue;
    }
    const int ea = static_cast<int>(rng() % 200) + 27;
    const int eb = shape == 3 ? (rng() & 1 ? static_cast<int>(rng() % 40) + 1
                                           : static_cast<int>(rng() % 30) + 215) -
                                    ea + 127
                              : static_cast<int>(rng() % 200) + 27;
    a[i] = with_exponent(rng, ea);
    b[i] = with_exponent(rng, eb);
    const int ep = ea + eb - 127;
    const int spread =
        shape == 1 ? static_cast<int>(rng() % 5) - 2 : static_cast<int>(rng() % 121) - 60;
    c[i] = with_exponent(rng, ep + spread);
  }
  for (const FmaIntrinsic& f : kFmaIntrinsics)
    check_triples(f, a, b, c);
}

// Hand-worked cases: truncation of a sum with a tiny opposite term, the stand-in, exact zero.
static_assert(mmaemu::kernels::host::detail::fma_bits(kOne, kOne, 0x80000001u,
                                                      Rounding::toward_zero) == 0x3f7fffffu);
static_assert(mmaemu::kernels::host::detail::fma_bits(kOne, kOne, 0x80000001u,
                                                      Rounding::nearest_even) == kOne);
static_assert(mmaemu::kernels::host::detail::fma_bits(kOne, 0xbf800000u, kOne,
                                                      Rounding::toward_zero) == 0);
static_assert(mmaemu::kernels::host::detail::fma_bits(0x3f800001u, 0x3f800001u, 0xbf800002u,
                                                      Rounding::nearest_even) == 0x28800000u);
