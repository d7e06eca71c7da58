// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/f32_arith.hpp"

#include <bit>

#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"

namespace mmaemu {

namespace {

int msb128(unsigned __int128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  if (hi)
    return 127 - std::countl_zero(hi);
  return 63 - std::countl_zero(static_cast<std::uint64_t>(v));
}

// Rounds (-1)^neg * mag * 2^exp (mag > 0) to binary32.
std::uint32_t round128(bool neg, unsigned __int128 mag, int exp, bool sticky) {
  const int n = msb128(mag);
  if (n > 62) {
    const int s = n - 62;
    sticky = sticky || (mag & ((static_cast<unsigned __int128>(1) << s) - 1u)) != 0;
    mag >>= s;
    exp += s;
  }
  return round_exact_bits(Format::fp32, neg, static_cast<std::uint64_t>(mag), exp, sticky,
                          Overflow::infinity);
}

} // namespace

std::uint32_t f32_add_bits(std::uint32_t a, std::uint32_t b) {
  const Exact x = decode_bits(Format::fp32, a);
  const Exact y = decode_bits(Format::fp32, b);
  if (x.cls == ValueClass::nan || y.cls == ValueClass::nan)
    return kF32CanonicalNaN;
  if (x.cls == ValueClass::inf || y.cls == ValueClass::inf) {
    if (x.cls == ValueClass::inf && y.cls == ValueClass::inf && x.neg != y.neg) {
      return kF32CanonicalNaN;
    }
    return x.cls == ValueClass::inf ? a : b;
  }
  if (x.cls == ValueClass::zero && y.cls == ValueClass::zero) {
    return (x.neg && y.neg) ? 0x80000000u : 0u; // -0 only when both are -0
  }
  if (x.cls == ValueClass::zero)
    return b;
  if (y.cls == ValueClass::zero)
    return a;
  // Both finite and nonzero. Align to a window 100 bits below the larger top bit; the bits of
  // the smaller value below the window are jammed into one sticky unit at its bottom (far
  // below the rounding position, so the rounding sees them only as "a bit more / less").
  const int tx = x.exp + 63 - std::countl_zero(x.sig);
  const int ty = y.exp + 63 - std::countl_zero(y.sig);
  const int bottom = std::max(std::min(x.exp, y.exp), std::max(tx, ty) - 100);
  auto place = [bottom](const Exact& v) -> unsigned __int128 {
    if (v.exp >= bottom)
      return static_cast<unsigned __int128>(v.sig) << (v.exp - bottom);
    const int d = bottom - v.exp; // the bits below the window become one sticky unit
    if (d >= 64)
      return 1u;
    return (v.sig >> d) | ((v.sig & ((std::uint64_t{1} << d) - 1u)) != 0 ? 1u : 0u);
  };
  const unsigned __int128 px = place(x);
  const unsigned __int128 py = place(y);
  unsigned __int128 mag;
  bool neg;
  if (x.neg == y.neg) {
    mag = px + py;
    neg = x.neg;
  } else if (px >= py) {
    mag = px - py;
    neg = x.neg;
  } else {
    mag = py - px;
    neg = y.neg;
  }
  if (mag == 0)
    return 0u; // exact cancellation: +0 under round to nearest
  return round128(neg, mag, bottom, false);
}

std::uint32_t f32_mul_bits(std::uint32_t a, std::uint32_t b) {
  const Exact x = decode_bits(Format::fp32, a);
  const Exact y = decode_bits(Format::fp32, b);
  const bool neg = x.neg != y.neg;
  if (x.cls == ValueClass::nan || y.cls == ValueClass::nan)
    return kF32CanonicalNaN;
  if (x.cls == ValueClass::inf || y.cls == ValueClass::inf) {
    if (x.cls == ValueClass::zero || y.cls == ValueClass::zero)
      return kF32CanonicalNaN;
    return neg ? 0xFF800000u : 0x7F800000u;
  }
  if (x.cls == ValueClass::zero || y.cls == ValueClass::zero)
    return neg ? 0x80000000u : 0u;
  const unsigned __int128 prod = static_cast<unsigned __int128>(x.sig) * y.sig;
  return round128(neg, prod, x.exp + y.exp, false);
}

} // namespace mmaemu
