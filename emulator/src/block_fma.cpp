// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/block_fma.hpp"

#include <algorithm>
#include <bit>

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

int msb128(unsigned __int128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  if (hi)
    return 127 - std::countl_zero(hi);
  return 63 - std::countl_zero(static_cast<std::uint64_t>(v));
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

} // namespace

const std::array<Fp8Operand, 256>& fp8_operand_table(Format f) {
  static const std::array<Fp8Operand, 256> e4m3 = build_table(Format::e4m3);
  static const std::array<Fp8Operand, 256> e5m2 = build_table(Format::e5m2);
  return f == Format::e5m2 ? e5m2 : e4m3;
}

std::uint32_t round_block_result(bool neg, unsigned __int128 mag, int lsb_exp, const Preset& p) {
  if (mag == 0)
    return 0u; // an exact zero sum is +0
  const int n = msb128(mag);
  const int e = lsb_exp + n; // value in [2^e, 2^(e+1))
  const int q = std::max(e - p.frac_out, -149);
  unsigned __int128 m;
  if (q <= lsb_exp) {
    m = mag << (lsb_exp - q);
  } else {
    const int r = q - lsb_exp;
    if (r >= 128) {
      m = 0;
    } else {
      m = mag >> r;
      if (p.rounding == BlockRounding::nearest_even) {
        const unsigned __int128 rem = mag & ((static_cast<unsigned __int128>(1) << r) - 1u);
        const unsigned __int128 half = static_cast<unsigned __int128>(1) << (r - 1);
        if (rem > half || (rem == half && (m & 1u)))
          ++m;
      }
    }
  }
  // m * 2^q is a binary32 value (m <= 2^24, q >= -149) unless it overflows: encode exactly.
  return round_exact_bits(Format::fp32, neg, static_cast<std::uint64_t>(m), q, false,
                          Overflow::infinity);
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
  const Preset& p = *ctx.preset;
  std::uint32_t cm;
  int ec;
  bool cneg;
  split_binary32(c_bits, cm, ec, cneg);

  // Step 2: each pair's exponent ea + eb and signed significand product (exact integers).
  int e[Preset::kMaxNfma];
  std::int64_t prod[Preset::kMaxNfma];
  for (int i = 0; i < n; ++i) {
    const Fp8Operand x = ctx.ta[a[i]];
    const Fp8Operand y = ctx.tb[b[i]];
    e[i] = x.ea + y.ea;
    const std::int64_t m = -static_cast<std::int64_t>(x.neg ^ y.neg); // 0 or -1
    prod[i] = ((static_cast<std::int64_t>(x.mant * y.mant) << ctx.G) ^ m) - m;
  }
  // Step 4: the block exponent (zero pairs carry kZeroExp and never count).
  int E = p.min_exp;
  for (int i = 0; i < n; ++i)
    E = std::max(E, e[i]);
  const bool c_in_block = cm != 0 && !p.late_c;
  if (c_in_block)
    E = std::max(E, ec);

  // Step 5: truncate each term's magnitude to a multiple of 2^(E - frac) and sum exactly.
  // The products are pre-shifted by G >= s0, so t = |p| * 2^(s0 - (E - e)) is a right shift
  // by E - e + G - s0 >= 0 (clamped at 63: everything is shifted out).
  std::int64_t S = 0;
  const int bias = E + ctx.G - ctx.s0;
  for (int i = 0; i < n; ++i) {
    const int d = std::min(bias - e[i], 63);
    const std::int64_t v = prod[i];
    const std::int64_t m = v >> 63; // 0 or -1
    const std::int64_t mag = (v ^ m) - m;
    S += ((mag >> d) ^ m) - m;
  }
  if (c_in_block) {
    const std::int64_t t = shift_floor(cm, ec - 23 - E + p.frac);
    S += cneg ? -t : t;
  }
  if (p.late_c && cm != 0) {
    return add_round(S, E - p.frac, cneg ? -static_cast<std::int64_t>(cm) : cm, ec - 23, p);
  }
  const bool neg = S < 0;
  return round_block_result(neg, static_cast<unsigned __int128>(neg ? -S : S), E - p.frac, p);
}

} // namespace mmaemu::model
