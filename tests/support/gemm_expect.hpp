// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Independent derivations for the GEMM tests (plans, epilogue): fp32 adds and multiplies on
// the HOST FPU (volatile float, SSE, round to nearest even; FTZ/DAZ must be off), rounding to
// bf16 / fp16 / FP8 written here with integer and binary64 arithmetic (no mmaemu encoder),
// seeded FP8 codes, and tensor builders. Nothing here calls mmaemu's soft-float or encoder.

#include <xmmintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/tensor.hpp"

namespace gemmx {

inline float f(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}
inline std::uint32_t u(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

inline bool ftz_daz_off() {
  return (_mm_getcsr() & 0x8040u) == 0u;
}

inline bool is_nan32(std::uint32_t b) {
  return (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu);
}

// Host fp32 operations; any NaN result is mapped to mmaemu's canonical NaN 0x7FFFFFFF.
inline std::uint32_t canon32(std::uint32_t b) {
  return is_nan32(b) ? 0x7FFFFFFFu : b;
}
inline std::uint32_t hadd(std::uint32_t a, std::uint32_t b) {
  volatile float x = f(a);
  volatile float y = f(b);
  volatile float r = x + y;
  return canon32(u(r));
}
inline std::uint32_t hmul(std::uint32_t a, std::uint32_t b) {
  volatile float x = f(a);
  volatile float y = f(b);
  volatile float r = x * y;
  return canon32(u(r));
}

// bf16: round to nearest even on the fp32 bits with integers (the classic bias trick).
inline std::uint32_t to_bf16(std::uint32_t b) {
  if (is_nan32(b))
    return 0x7FFFu;
  const std::uint32_t lsb = (b >> 16) & 1u;
  return ((b + 0x7FFFu + lsb) >> 16) & 0xFFFFu; // finite overflow carries into Inf
}

// fp16 by binary64 arithmetic (not the library's integer code): scale |x| so that one fp16
// step of its binade (2^-24 below 2^-14) is 1, round with nearbyint (the default mode, to
// nearest even), scale back exactly, then read the fields off the rounded value.
inline std::uint32_t to_fp16(std::uint32_t b) {
  if (is_nan32(b))
    return 0x7FFFu;
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  const double ax = std::fabs(static_cast<double>(f(b)));
  if (std::isinf(ax))
    return sign | 0x7C00u;
  if (ax == 0.0)
    return sign;
  int e2 = 0;
  std::frexp(ax, &e2); // ax = m * 2^e2, m in [0.5, 1)
  const int ue = std::max(e2 - 1, -14);
  const double r = std::ldexp(std::nearbyint(std::ldexp(ax, 10 - ue)), ue - 10);
  if (r > 65504.0)
    return sign | 0x7C00u;
  if (r < 0x1p-14)
    return sign | static_cast<std::uint32_t>(std::ldexp(r, 24));
  std::frexp(r, &e2);
  const int re = e2 - 1;
  const auto mant = static_cast<std::uint32_t>(std::ldexp(r, 10 - re)) - 1024u;
  return sign | (static_cast<std::uint32_t>(re + 15) << 10) | mant;
}

// The value of an FP8 code from its bit fields (binary64, exact); finite=false for Inf/NaN.
inline double fp8_value(mmaemu::Format fmt, std::uint32_t code, bool* finite = nullptr) {
  const bool e4 = fmt == mmaemu::Format::e4m3;
  const int mbits = e4 ? 3 : 2, ebits = e4 ? 4 : 5, bias = e4 ? 7 : 15;
  const int s = (code >> 7) & 1, e = (code >> mbits) & ((1 << ebits) - 1),
            m = code & ((1 << mbits) - 1);
  bool fin = e4 ? !(e == 15 && m == 7) : e != 31;
  if (finite)
    *finite = fin;
  if (!fin)
    return NAN;
  const double mag =
      e == 0 ? std::ldexp(m, 1 - bias - mbits) : std::ldexp(m + (1 << mbits), e - bias - mbits);
  return s ? -mag : mag;
}

// FP8 output: round the fp32 value to nearest even on the format's grid (binary64 nearbyint),
// saturate to +-max finite (satfinite, Inf included), NaN -> 0x7F; then find the code with
// that value by scanning the 256 codes (sign taken from the input, so -0 -> 0x80).
inline std::uint32_t to_fp8(std::uint32_t b, mmaemu::Format fmt) {
  if (is_nan32(b))
    return 0x7Fu;
  const bool e4 = fmt == mmaemu::Format::e4m3;
  const int mbits = e4 ? 3 : 2, emin = e4 ? -6 : -14;
  const double maxv = e4 ? 448.0 : 57344.0;
  const bool neg = (b >> 31) != 0;
  const double x = std::fabs(static_cast<double>(f(b)));
  double r;
  if (std::isinf(x)) {
    r = maxv;
  } else if (x == 0.0) {
    r = 0.0;
  } else {
    const int e = std::max(std::ilogb(x), emin);
    const double q = std::ldexp(1.0, e - mbits);
    r = std::nearbyint(x / q) * q; // default rounding mode: nearest even
    if (r > maxv)
      r = maxv;
  }
  for (std::uint32_t c = 0; c < 0x80u; ++c) {
    bool fin = true;
    const double v = fp8_value(fmt, c, &fin);
    if (fin && v == r)
      return c | (neg ? 0x80u : 0u); // exact equality of exact values
  }
  return 0xFFFFFFFFu; // unreachable
}

inline std::uint32_t to_out(std::uint32_t b, mmaemu::Format out) {
  switch (out) {
  case mmaemu::Format::fp32:
    return canon32(b);
  case mmaemu::Format::bf16:
    return to_bf16(b);
  case mmaemu::Format::fp16:
    return to_fp16(b);
  default:
    return to_fp8(b, out);
  }
}

// A finite FP8 code drawn uniformly from the finite codes.
inline std::uint8_t finite_code(std::mt19937& rng, mmaemu::Format fmt) {
  for (;;) {
    const auto c = static_cast<std::uint8_t>(rng() & 0xFFu);
    bool fin = true;
    fp8_value(fmt, c, &fin);
    if (fin)
      return c;
  }
}

// A finite FP8 code with a moderate magnitude (exponent field in a narrow band) or zero,
// so that chains do not collapse onto one dominant term.
inline std::uint8_t moderate_code(std::mt19937& rng, mmaemu::Format fmt) {
  if (rng() % 8 == 0)
    return 0;
  const bool e4 = fmt == mmaemu::Format::e4m3;
  const int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  const int e = bias - 2 + static_cast<int>(rng() % 5);
  const int m = static_cast<int>(rng() % (1u << mbits));
  const int s = static_cast<int>(rng() & 1u);
  return static_cast<std::uint8_t>((s << 7) | (e << mbits) | m);
}

// Row-major [rows][K] codes as a contiguous FP8 tensor.
inline mmaemu::Tensor fp8_tensor(mmaemu::Format fmt, std::int64_t rows, std::int64_t K,
                                 const std::vector<std::uint8_t>& codes) {
  mmaemu::Tensor t = mmaemu::Tensor::zeros(fmt, {rows, K});
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < K; ++k)
      t.set_bits_at(r, k, codes[static_cast<std::size_t>(r * K + k)]);
  return t;
}

} // namespace gemmx
