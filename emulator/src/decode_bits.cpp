// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/decode_bits.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "mmaemu/emulator/encode_bits.hpp"

namespace mmaemu {

Exact decode_bits(Format f, std::uint32_t code) {
  const FormatSpec& s = spec(f);
  code &= s.code_mask();
  Exact x;
  x.neg = (code & s.sign_mask()) != 0;
  const std::uint32_t frac_mask = (1u << s.frac_bits) - 1u;
  const std::uint32_t exp_ones = (1u << s.exp_bits) - 1u;
  const std::uint32_t e = (code >> s.frac_bits) & exp_ones;
  const std::uint32_t m = code & frac_mask;
  if (e == exp_ones) {
    if (s.specials == Specials::ieee) {
      x.cls = m == 0 ? ValueClass::inf : ValueClass::nan;
      return x;
    }
    if (m == frac_mask) {
      x.cls = ValueClass::nan;
      return x;
    }
  }
  if (e == 0) {
    if (m == 0) {
      x.cls = ValueClass::zero;
      return x;
    }
    x.cls = ValueClass::finite;
    x.sig = m;
    x.exp = s.emin() - s.frac_bits;
    return x;
  }
  x.cls = ValueClass::finite;
  x.sig = m | (1u << s.frac_bits);
  x.exp = static_cast<int>(e) - s.bias - s.frac_bits;
  return x;
}

double decode_to_double(Format f, std::uint32_t code) {
  const Exact x = decode_bits(f, code);
  double v = 0.0;
  switch (x.cls) {
  case ValueClass::zero:
    v = 0.0;
    break;
  case ValueClass::finite:
    v = std::ldexp(static_cast<double>(x.sig), x.exp);
    break;
  case ValueClass::inf:
    v = std::numeric_limits<double>::infinity();
    break;
  case ValueClass::nan:
    return std::numeric_limits<double>::quiet_NaN();
  }
  return x.neg ? -v : v;
}

bool binary32_bits_of(double v, std::uint32_t& bits) {
  if (std::isnan(v))
    return false;
  float fv = static_cast<float>(v);
  if (static_cast<double>(fv) != v)
    return false; // not a bit claim: exactness check
  std::memcpy(&bits, &fv, sizeof bits);
  return true;
}

} // namespace mmaemu
