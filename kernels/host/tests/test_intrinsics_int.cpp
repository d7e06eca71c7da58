// SPDX-License-Identifier: BSD-2-Clause
// The integer intrinsics against independent scalar definitions: the per-byte SIMD ones over
// all 256 x 256 byte pairs in each lane, with the other lanes random (so a carry or borrow that
// leaks across lanes shows), the bit counts over every power of two and seeded random words.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "mmaemu/kernels/host/intrinsics.hpp"

namespace {

constexpr std::uint64_t kSeed = 0x76656374ull; // "vect"

using Bytes = std::array<std::uint8_t, 4>;

// Lane i is the byte at bits 8i..8i+7, whatever the host's byte order.
Bytes lanes(std::uint32_t w) {
  return {static_cast<std::uint8_t>(w), static_cast<std::uint8_t>(w >> 8),
          static_cast<std::uint8_t>(w >> 16), static_cast<std::uint8_t>(w >> 24)};
}

std::uint32_t word(const Bytes& b) {
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
         std::uint32_t{b[3]} << 24;
}

std::int8_t as_signed(std::uint8_t x) {
  std::int8_t s;
  std::memcpy(&s, &x, 1);
  return s;
}

std::uint8_t from_int(int v) {
  return static_cast<std::uint8_t>(v & 0xff);
}

struct ByteOp {
  const char* name;
  unsigned int (*simd)(unsigned int, unsigned int);
  std::uint8_t (*scalar)(std::uint8_t, std::uint8_t);
};

const ByteOp kByteOps[] = {
    {"__vaddss4", __vaddss4,
     [](std::uint8_t x, std::uint8_t y) {
       return from_int(std::clamp(int{as_signed(x)} + int{as_signed(y)}, -128, 127));
     }},
    {"__vsubss4", __vsubss4,
     [](std::uint8_t x, std::uint8_t y) {
       return from_int(std::clamp(int{as_signed(x)} - int{as_signed(y)}, -128, 127));
     }},
    {"__vadd4", __vadd4, [](std::uint8_t x, std::uint8_t y) { return from_int(x + y); }},
    {"__vsub4", __vsub4, [](std::uint8_t x, std::uint8_t y) { return from_int(x - y); }},
    {"__vmaxs4", __vmaxs4,
     [](std::uint8_t x, std::uint8_t y) {
       return from_int(std::max(int{as_signed(x)}, int{as_signed(y)}));
     }},
    {"__vmins4", __vmins4,
     [](std::uint8_t x, std::uint8_t y) {
       return from_int(std::min(int{as_signed(x)}, int{as_signed(y)}));
     }},
    {"__vmaxu4", __vmaxu4, [](std::uint8_t x, std::uint8_t y) { return std::max(x, y); }},
    {"__vminu4", __vminu4, [](std::uint8_t x, std::uint8_t y) { return std::min(x, y); }},
};

TEST(HostSimdIntrinsics, EveryBytePairInEveryLaneMatchesTheScalarDefinition) {
  SCOPED_TRACE("mt19937_64 seed " + std::to_string(kSeed));
  for (const ByteOp& op : kByteOps) {
    std::mt19937_64 rng(kSeed);
    unsigned failures = 0;
    for (int lane = 0; lane < 4; ++lane) {
      for (unsigned x = 0; x < 256; ++x) {
        for (unsigned y = 0; y < 256; ++y) {
          Bytes a = lanes(static_cast<std::uint32_t>(rng()));
          Bytes b = lanes(static_cast<std::uint32_t>(rng()));
          a[lane] = static_cast<std::uint8_t>(x);
          b[lane] = static_cast<std::uint8_t>(y);
          Bytes want;
          for (int i = 0; i < 4; ++i) {
            want[i] = op.scalar(a[i], b[i]);
          }
          const std::uint32_t got = op.simd(word(a), word(b));
          if (got != word(want) && ++failures <= 5) {
            ADD_FAILURE() << op.name << "(" << std::hex << word(a) << ", " << word(b)
                          << ") = " << got << ", want " << word(want);
          }
        }
      }
    }
    EXPECT_EQ(failures, 0u) << op.name;
  }
}

TEST(HostSimdIntrinsics, SaturationHitsBothEnds) {
  EXPECT_EQ(__vaddss4(0x7f7f8080u, 0x01ff80ffu), 0x7f7e8080u);
  EXPECT_EQ(__vsubss4(0x807f0000u, 0x01ff0080u), 0x807f007fu);
  EXPECT_EQ(__vmaxs4(0x80ff7f00u, 0x7f0080ffu), 0x7f007f00u);
  EXPECT_EQ(__vmaxu4(0x80ff7f00u, 0x7f0080ffu), 0x80ff80ffu);
}

int clz_by_loop(std::uint64_t x, int width) {
  int n = 0;
  for (int i = width - 1; i >= 0 && ((x >> i) & 1) == 0; --i) {
    ++n;
  }
  return n;
}

int popc_by_loop(std::uint64_t x) {
  int n = 0;
  for (; x != 0; x >>= 1) {
    n += static_cast<int>(x & 1);
  }
  return n;
}

int ffs_by_loop(std::uint64_t x, int width) {
  for (int i = 0; i < width; ++i) {
    if ((x >> i) & 1) {
      return i + 1;
    }
  }
  return 0;
}

int to_int(std::uint32_t x) {
  int v;
  std::memcpy(&v, &x, sizeof v);
  return v;
}

long long to_ll(std::uint64_t x) {
  long long v;
  std::memcpy(&v, &x, sizeof v);
  return v;
}

TEST(HostBitIntrinsics, ZeroAndEveryPowerOfTwo) {
  EXPECT_EQ(__clz(0), 32);
  EXPECT_EQ(__clzll(0), 64);
  EXPECT_EQ(__ffs(0), 0);
  EXPECT_EQ(__ffsll(0), 0);
  EXPECT_EQ(__popc(0u), 0);
  for (int k = 0; k < 32; ++k) {
    const std::uint32_t p = std::uint32_t{1} << k;
    EXPECT_EQ(__clz(to_int(p)), 31 - k) << k;
    EXPECT_EQ(__clz(to_int(p | (p - 1))), 31 - k) << k;
    EXPECT_EQ(__ffs(to_int(p)), k + 1) << k;
    EXPECT_EQ(__popc(p), 1) << k;
    EXPECT_EQ(__brev(p), std::uint32_t{1} << (31 - k)) << k;
  }
  for (int k = 0; k < 64; ++k) {
    const std::uint64_t p = std::uint64_t{1} << k;
    EXPECT_EQ(__clzll(to_ll(p)), 63 - k) << k;
    EXPECT_EQ(__ffsll(to_ll(p)), k + 1) << k;
    EXPECT_EQ(__popcll(p), 1) << k;
  }
}

TEST(HostBitIntrinsics, SeededRandomWordsMatchLoops) {
  SCOPED_TRACE("mt19937_64 seed " + std::to_string(kSeed + 1));
  std::mt19937_64 rng(kSeed + 1);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t r = rng();
    // Shifting right by a random amount gives every leading-zero count its share.
    const std::uint64_t x64 = r >> (rng() % 64);
    const auto x32 = static_cast<std::uint32_t>(x64 >> (rng() % 32));
    ASSERT_EQ(__clz(to_int(x32)), clz_by_loop(x32, 32)) << x32;
    ASSERT_EQ(__clzll(to_ll(x64)), clz_by_loop(x64, 64)) << x64;
    ASSERT_EQ(__popc(x32), popc_by_loop(x32)) << x32;
    ASSERT_EQ(__popcll(x64), popc_by_loop(x64)) << x64;
    ASSERT_EQ(__ffs(to_int(x32)), ffs_by_loop(x32, 32)) << x32;
    ASSERT_EQ(__ffsll(to_ll(x64)), ffs_by_loop(x64, 64)) << x64;
    const std::uint32_t rev = __brev(x32);
    for (int b = 0; b < 32; ++b) {
      ASSERT_EQ((rev >> (31 - b)) & 1, (x32 >> b) & 1) << x32 << " bit " << b;
    }
  }
}

TEST(HostMinMax, OverloadsFollowCuda) {
  EXPECT_EQ(min(-3, 2), -3);
  EXPECT_EQ(max(-3, 2), 2);
  EXPECT_EQ(min(3u, 2u), 2u);
  EXPECT_EQ(umax(3u, 7u), 7u);
  EXPECT_EQ(umin(3u, 7u), 3u);
  // Mixed signedness compares as unsigned, as CUDA's overloads do: -1 is 0xffffffff.
  EXPECT_EQ(min(-1, 1u), 1u);
  EXPECT_EQ(max(1u, -1), 0xffffffffu);
  EXPECT_EQ(min(std::int64_t{-5}, std::int64_t{4}), -5);
  EXPECT_EQ(max(std::numeric_limits<long long>::min(), 0ll), 0ll);
  EXPECT_EQ(max(1ull, 2ull), 2ull);
  // fminf / fmaxf: a NaN operand gives the other one.
  EXPECT_EQ(__float_as_uint(min(std::numeric_limits<float>::quiet_NaN(), 2.0f)),
            __float_as_uint(2.0f));
  EXPECT_EQ(__float_as_uint(max(-1.0f, std::numeric_limits<float>::quiet_NaN())),
            __float_as_uint(-1.0f));
}

} // namespace
