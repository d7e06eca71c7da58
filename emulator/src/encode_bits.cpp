// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/encode_bits.hpp"

#include <bit>
#include <cstring>

#include "mmaemu/emulator/decode_bits.hpp"

namespace mmaemu {

namespace {

std::uint32_t max_finite_code(const FormatSpec& s) {
  const std::uint32_t exp_ones = (1u << s.exp_bits) - 1u;
  const std::uint32_t frac_mask = (1u << s.frac_bits) - 1u;
  if (s.specials == Specials::ieee)
    return ((exp_ones - 1u) << s.frac_bits) | frac_mask;
  return (exp_ones << s.frac_bits) | (frac_mask - 1u);
}

std::uint32_t overflow_code(const FormatSpec& s, bool neg, Overflow ov) {
  const std::uint32_t sign = neg ? s.sign_mask() : 0u;
  if (ov == Overflow::saturate)
    return sign | max_finite_code(s);
  if (s.specials == Specials::ieee)
    return sign | (((1u << s.exp_bits) - 1u) << s.frac_bits);
  return s.canonical_nan;
}

} // namespace

std::uint32_t round_exact_bits(Format f, bool neg, std::uint64_t sig, int exp, bool sticky,
                               Overflow ov) {
  const FormatSpec& s = spec(f);
  const std::uint32_t sign = neg ? s.sign_mask() : 0u;
  if (sig == 0) {
    // Only sticky bits: a positive amount below 2^exp. It rounds to zero unless it can be
    // at least half the smallest subnormal, which callers avoid by passing exact values.
    return sign;
  }
  const int msb = 63 - std::countl_zero(sig);
  const int ev = exp + msb;                     // exponent of the leading bit
  const int et = ev > s.emin() ? ev : s.emin(); // exponent of the target binade
  int qe = et - s.frac_bits;                    // exponent of the target's last place
  std::uint64_t m;
  if (exp >= qe) {
    m = sig << (exp - qe); // exact; m < 2^(frac+1) since ev <= et
  } else {
    const int r = qe - exp; // bits dropped, >= 1
    std::uint64_t rem;
    std::uint64_t half;
    bool above_half;
    bool at_half;
    if (r >= 64) {
      m = 0;
      rem = sig;
      if (r == 64) {
        half = std::uint64_t{1} << 63;
        above_half = rem > half || (rem == half && sticky);
        at_half = rem == half && !sticky;
      } else {
        above_half = false;
        at_half = false;
      }
    } else {
      m = sig >> r;
      rem = sig & ((std::uint64_t{1} << r) - 1u);
      half = std::uint64_t{1} << (r - 1);
      above_half = rem > half || (rem == half && sticky);
      at_half = rem == half && !sticky;
    }
    if (above_half || (at_half && (m & 1u)))
      ++m;
    if (m == (std::uint64_t{1} << (s.frac_bits + 1))) {
      m >>= 1;
      ++qe;
    }
  }
  if (m == 0)
    return sign;
  std::uint32_t biased;
  std::uint32_t field;
  if (m < (std::uint64_t{1} << s.frac_bits)) {
    biased = 0; // subnormal: et == emin
    field = static_cast<std::uint32_t>(m);
  } else {
    const int be = qe + s.frac_bits + s.bias;
    if (be >= (1 << s.exp_bits))
      return overflow_code(s, neg, ov);
    biased = static_cast<std::uint32_t>(be);
    field = static_cast<std::uint32_t>(m) & ((1u << s.frac_bits) - 1u);
  }
  const std::uint32_t mag = (biased << s.frac_bits) | field;
  if (mag > max_finite_code(s))
    return overflow_code(s, neg, ov);
  return sign | mag;
}

std::uint32_t encode_exact_bits(Format f, const Exact& x, Overflow ov) {
  const FormatSpec& s = spec(f);
  switch (x.cls) {
  case ValueClass::nan:
    return s.canonical_nan;
  case ValueClass::zero:
    return x.neg ? s.sign_mask() : 0u;
  case ValueClass::inf:
    if (ov == Overflow::saturate)
      return (x.neg ? s.sign_mask() : 0u) | max_finite_code(s);
    return overflow_code(s, x.neg, ov);
  case ValueClass::finite:
    break;
  }
  return round_exact_bits(f, x.neg, x.sig, x.exp, false, ov);
}

std::uint32_t encode_binary64_bits(Format f, double v, Overflow ov) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  Exact x;
  x.neg = (b >> 63) != 0;
  const std::uint64_t e = (b >> 52) & 0x7FFu;
  const std::uint64_t m = b & ((std::uint64_t{1} << 52) - 1u);
  if (e == 0x7FF) {
    x.cls = m == 0 ? ValueClass::inf : ValueClass::nan;
  } else if (e == 0) {
    x.cls = m == 0 ? ValueClass::zero : ValueClass::finite;
    x.sig = m;
    x.exp = -1074;
  } else {
    x.cls = ValueClass::finite;
    x.sig = m | (std::uint64_t{1} << 52);
    x.exp = static_cast<int>(e) - 1075;
  }
  return encode_exact_bits(f, x, ov);
}

std::uint32_t encode_binary32_bits(Format f, std::uint32_t fp32_bits, Overflow ov) {
  return encode_exact_bits(f, decode_bits(Format::fp32, fp32_bits), ov);
}

} // namespace mmaemu
