// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/compare_bits.hpp"

#include <iomanip>
#include <sstream>

#include "mmaemu/emulator/decode_bits.hpp"

namespace mmaemu {

const char* mismatch_name(Mismatch m) {
  switch (m) {
  case Mismatch::none:
    return "none";
  case Mismatch::zero_sign:
    return "zero_sign";
  case Mismatch::nan_payload:
    return "nan_payload";
  case Mismatch::value:
    return "value";
  }
  return "?";
}

Mismatch compare_bits(std::uint32_t expected, std::uint32_t actual, Format f, NanPolicy nan) {
  const FormatSpec& s = spec(f);
  expected &= s.code_mask();
  actual &= s.code_mask();
  if (expected == actual)
    return Mismatch::none;
  const Exact e = decode_bits(f, expected);
  const Exact a = decode_bits(f, actual);
  if (e.cls == ValueClass::nan && a.cls == ValueClass::nan) {
    return nan == NanPolicy::mask ? Mismatch::none : Mismatch::nan_payload;
  }
  if (e.cls == ValueClass::zero && a.cls == ValueClass::zero)
    return Mismatch::zero_sign;
  return Mismatch::value;
}

std::string decompose_bits(std::uint32_t code, Format f) {
  const FormatSpec& s = spec(f);
  code &= s.code_mask();
  const unsigned sign = (code & s.sign_mask()) ? 1u : 0u;
  const unsigned exp = (code >> s.frac_bits) & ((1u << s.exp_bits) - 1u);
  const unsigned frac = code & ((1u << s.frac_bits) - 1u);
  std::ostringstream os;
  os << std::hex << std::setfill('0') << "0x" << std::setw(s.width / 4) << code << " (s=" << sign
     << " e=0x" << std::setw(2) << exp << " f=0x" << std::setw((s.frac_bits + 3) / 4) << frac
     << ')';
  return os.str();
}

} // namespace mmaemu
