// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// An independent derivation of block-fma.md for tests: the values are binary64 numbers
// computed from the codes' bit fields with ldexp, the block sum is exact in binary64 (every
// term is an integer below 2^45), and rounding uses floor / nearbyint. It shares no code
// with the emulator's integer core.

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace reftest {

struct Fmt {
  int exp_bits, frac_bits, bias;
  bool fn; // e4m3fn: no Inf, only all-ones is NaN
};
inline constexpr Fmt kE4M3{4, 3, 7, true};
inline constexpr Fmt kE5M2{5, 2, 15, false};

// Value of an FP8 code; sets `finite` false for Inf/NaN codes.
inline double value(const Fmt& f, std::uint8_t code, bool* finite = nullptr) {
  const int s = code >> 7;
  const int e = (code >> f.frac_bits) & ((1 << f.exp_bits) - 1);
  const int m = code & ((1 << f.frac_bits) - 1);
  const int ones = (1 << f.exp_bits) - 1;
  bool fin = true;
  if (f.fn) {
    if (e == ones && m == (1 << f.frac_bits) - 1)
      fin = false;
  } else if (e == ones) {
    fin = false;
  }
  if (finite)
    *finite = fin;
  if (!fin)
    return NAN;
  const double mag = e == 0 ? std::ldexp(m, 1 - f.bias - f.frac_bits)
                            : std::ldexp(m + (1 << f.frac_bits), e - f.bias - f.frac_bits);
  return s ? -mag : mag;
}

// floor(log2|x|) but never below emin (the operand's alignment exponent).
inline int align_exp(const Fmt& f, double x) {
  return std::max(std::ilogb(x), 1 - f.bias);
}

inline float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline std::uint32_t to_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct Params {
  int nfma, frac, frac_out;
  bool rne;
  int min_exp;
};

inline std::uint32_t block(const Fmt& fa, const Fmt& fb, const std::uint8_t* a,
                           const std::uint8_t* b, int n, std::uint32_t c_bits, const Params& p) {
  std::vector<double> prods;
  std::vector<int> exps;
  for (int i = 0; i < n; ++i) {
    const double x = value(fa, a[i]);
    const double y = value(fb, b[i]);
    if (x == 0.0 || y == 0.0)
      continue;             // step 1 (exact zero test, not a bit claim)
    prods.push_back(x * y); // exact: at most 8 significant bits
    exps.push_back(align_exp(fa, x) + align_exp(fb, y));
  }
  const double c = from_bits(c_bits);
  if (c != 0.0) {
    prods.push_back(c);
    exps.push_back(std::max(std::ilogb(c), -126));
  }
  int E = p.min_exp;
  for (int e : exps)
    E = std::max(E, e);
  double S = 0.0;
  for (double t : prods) {
    const double mag = std::floor(std::ldexp(std::fabs(t), p.frac - E));
    S += t < 0 ? -mag : mag;
  }
  if (S == 0.0)
    return 0u;
  const double v = std::ldexp(std::fabs(S), E - p.frac);
  const int e = std::ilogb(v);
  const int q = std::max(e - p.frac_out, -149);
  const double scaled = std::ldexp(v, -q);
  std::fesetround(FE_TONEAREST);
  const double m = p.rne ? std::nearbyint(scaled) : std::floor(scaled);
  const double r = std::ldexp(m, q);
  const float out = static_cast<float>(S < 0 ? -r : r); // exact: r is a binary32 value
  return to_bits(out);
}

inline std::uint32_t chain(const Fmt& fa, const Fmt& fb, const std::vector<std::uint8_t>& a,
                           const std::vector<std::uint8_t>& b, std::uint32_t c, const Params& p) {
  for (std::size_t k = 0; k < a.size(); k += p.nfma) {
    const int n = static_cast<int>(std::min<std::size_t>(p.nfma, a.size() - k));
    c = block(fa, fb, a.data() + k, b.data() + k, n, c, p);
  }
  return c;
}

} // namespace reftest
