// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// An independent derivation of the block for fp16, bf16 and tf32 operands (block-fma.md, "The
// same block for fp16, bf16 and tf32 inputs") for tests: operand values are binary64 numbers
// from the codes' bit fields with ldexp (tf32 also through its binary32 container), every
// product and truncated term is exact in binary64 (at most 22 and 28 significant bits), the
// block sum is exact (below 2^53), and rounding uses floor / nearbyint on binary64. It shares
// no code with the emulator (emulator/src/dot_codes.cpp).

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace reftest::wide {

struct Fmt {
  int width, exp_bits, frac_bits, bias;
};
inline constexpr Fmt kFP16{16, 5, 10, 15};
inline constexpr Fmt kBF16{16, 8, 7, 127};
inline constexpr Fmt kTF32{19, 8, 10, 127};

enum class Cls { zero, finite, inf, nan };

inline Cls cls_of(const Fmt& f, std::uint32_t code) {
  const std::uint32_t e = (code >> f.frac_bits) & ((1u << f.exp_bits) - 1u);
  const std::uint32_t m = code & ((1u << f.frac_bits) - 1u);
  if (e == (1u << f.exp_bits) - 1u)
    return m == 0 ? Cls::inf : Cls::nan;
  return (e == 0 && m == 0) ? Cls::zero : Cls::finite;
}

// The signed value of a finite code.
inline double value(const Fmt& f, std::uint32_t code) {
  const int s = static_cast<int>((code >> (f.width - 1)) & 1u);
  const int e = static_cast<int>((code >> f.frac_bits) & ((1u << f.exp_bits) - 1u));
  const int m = static_cast<int>(code & ((1u << f.frac_bits) - 1u));
  const double mag = e == 0 ? std::ldexp(m, 1 - f.bias - f.frac_bits)
                            : std::ldexp(m + (1 << f.frac_bits), e - f.bias - f.frac_bits);
  return s ? -mag : mag;
}

// floor(log2|x|), never below emin (a subnormal keeps the format's emin).
inline int align_exp(const Fmt& f, double x) {
  return std::max(std::ilogb(x), 1 - f.bias);
}

inline float from_bits(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}
inline std::uint32_t to_bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// fp16 codes from / to binary64 values that are fp16 values (bit fields, not the emulator).
inline double fp16_value(std::uint16_t h) {
  return value(kFP16, h);
}
inline std::uint16_t fp16_code_of_exact(double v) {
  const std::uint16_t s = std::signbit(v) ? 0x8000u : 0u;
  const double a = std::fabs(v);
  if (a == 0.0)
    return s;
  if (std::isinf(a))
    return s | 0x7C00u;
  if (a < std::ldexp(1.0, -14))
    return s | static_cast<std::uint16_t>(std::ldexp(a, 24)); // subnormal: m * 2^-24
  const int e = std::ilogb(a);
  const auto m = static_cast<std::uint16_t>(std::ldexp(a, 10 - e) - 1024.0);
  return s | static_cast<std::uint16_t>(((e + 15) << 10) | m);
}

// Rounds a binary64 value (any magnitude, exact) to nearest even fp16, overflow to Inf:
// the candidates' spacing is 2^(max(e, -14) - 10).
inline std::uint16_t fp16_nearest(double v) {
  if (v == 0.0)
    return std::signbit(v) ? 0x8000u : 0u;
  const double a = std::fabs(v);
  const int e = std::max(std::ilogb(a), -14);
  std::fesetround(FE_TONEAREST);
  const double q = std::ldexp(std::nearbyint(std::ldexp(a, 10 - e)), e - 10);
  const double r = v < 0 ? -q : q;
  if (std::fabs(r) > 65504.0)
    return v < 0 ? 0xFC00u : 0x7C00u;
  return fp16_code_of_exact(r);
}

struct Params {
  int nfma, frac, frac_out;
  bool rne;
  int min_exp;
  enum class Half { block_then_nearest, sum_to_nearest } half = Half::sum_to_nearest;
};

// One block; c is a binary32 value (fp32 accumulator) or an fp16 value (half = true), the
// result in the same format (binary32 bits or an fp16 code). Finite codes only.
inline std::uint32_t block(const Fmt& f, const std::uint32_t* a, const std::uint32_t* b, int n,
                           std::uint32_t c_code, bool half, const Params& p) {
  std::vector<double> terms;
  std::vector<int> exps;
  for (int i = 0; i < n; ++i) {
    const double x = value(f, a[i]);
    const double y = value(f, b[i]);
    if (x == 0.0 || y == 0.0)
      continue;             // a pair with a zero factor is no term (exact test, no bit claim)
    terms.push_back(x * y); // exact: at most 22 significant bits
    exps.push_back(align_exp(f, x) + align_exp(f, y));
  }
  const double c = half ? fp16_value(static_cast<std::uint16_t>(c_code))
                        : static_cast<double>(from_bits(c_code));
  if (c != 0.0) {
    terms.push_back(c);
    exps.push_back(std::max(std::ilogb(c), -126));
  }
  int E = p.min_exp;
  for (int e : exps)
    E = std::max(E, e);
  double S = 0.0;
  for (double t : terms) {
    const double mag = std::floor(std::ldexp(std::fabs(t), p.frac - E));
    S += t < 0 ? -mag : mag;
  }
  if (S == 0.0)
    return 0u;
  const double v = std::ldexp(std::fabs(S), E - p.frac); // exact
  if (half && p.half == Params::Half::sum_to_nearest)
    return fp16_nearest(S < 0 ? -v : v);
  // The binary32 block result: frac_out bits, subnormals at 2^-149.
  const int e = std::ilogb(v);
  const int q = std::max(e - p.frac_out, -149);
  std::fesetround(FE_TONEAREST);
  const double scaled = std::ldexp(v, -q);
  const double m = p.rne ? std::nearbyint(scaled) : std::floor(scaled);
  const double r = std::ldexp(m, q);
  const double signed_r = S < 0 ? -r : r;
  if (half)
    return fp16_nearest(signed_r); // block_then_nearest
  if (std::fabs(r) > std::ldexp(0x1.fffffep0, 127))
    return to_bits(static_cast<float>(S < 0 ? -INFINITY : INFINITY));
  return to_bits(static_cast<float>(signed_r)); // exact: a binary32 value
}

inline std::uint32_t chain(const Fmt& f, const std::vector<std::uint32_t>& a,
                           const std::vector<std::uint32_t>& b, std::uint32_t c, bool half,
                           const Params& p) {
  for (std::size_t k = 0; k < a.size(); k += p.nfma) {
    const int n = static_cast<int>(std::min<std::size_t>(p.nfma, a.size() - k));
    c = block(f, a.data() + k, b.data() + k, n, c, half, p);
    // A block that overflowed (an fp16 accumulator can) gives +-Inf, which ends the chain.
    if ((half ? (c & 0x7FFFu) : (c & 0x7FFFFFFFu)) == (half ? 0x7C00u : 0x7F800000u))
      return c;
  }
  return c;
}

} // namespace reftest::wide
