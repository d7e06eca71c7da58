// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/dot_codes.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::model {

namespace {

// An operand as the block sees it: |x| = sig * 2^(ea - frac_bits) with
// ea = max(floor(log2 |x|), emin), so a subnormal keeps ea = emin and sig < 2^frac_bits.
struct Operand {
  std::uint32_t sig = 0; // 0: a zero (or a NaN / Inf code, counted as zero)
  int ea = 0;
  bool neg = false;
  ValueClass cls = ValueClass::zero;
};

Operand operand(Format f, std::uint32_t code) {
  const Exact x = decode_bits(f, code);
  Operand o;
  o.neg = x.neg;
  o.cls = x.cls;
  if (x.cls == ValueClass::finite) {
    o.sig = static_cast<std::uint32_t>(x.sig);
    o.ea = x.exp + spec(f).frac_bits; // emin for subnormals
  }
  return o;
}

// The accumulator value c as binary32 bits: c itself for fp32, the exact widening of an fp16
// code (every fp16 value is a binary32 value).
std::uint32_t c_as_binary32(std::uint32_t c, Format acc) {
  if (acc == Format::fp32)
    return c;
  return encode_exact_bits(Format::fp32, decode_bits(acc, c), Overflow::infinity);
}

bool is_nonfinite(std::uint32_t c, Format acc) {
  const ValueClass k = decode_bits(acc, c).cls;
  return k == ValueClass::inf || k == ValueClass::nan;
}

// floor(v * 2^k) for v >= 0 (v < 2^52, k <= 11).
std::uint64_t scale_floor(std::uint64_t v, int k) {
  if (k >= 0)
    return v << k;
  return -k >= 64 ? 0 : v >> -k;
}

// The exact block sum (-1)^neg * mag * 2^lsb_exp rounded into the accumulator format.
std::uint32_t round_sum(bool neg, std::uint64_t mag, int lsb_exp, const Preset& p, Format acc) {
  if (mag == 0)
    return 0u; // an exact zero sum is +0
  if (acc == Format::fp32)
    return round_block_result(neg, mag, lsb_exp, p);
  // fp16 accumulator (check_codes_call admits it only with half_out != none).
  if (p.half_out == HalfOutput::block_then_nearest) {
    const std::uint32_t r32 = round_block_result(neg, mag, lsb_exp, p);
    return encode_binary32_bits(Format::fp16, r32, Overflow::infinity);
  }
  return round_exact_bits(Format::fp16, neg, mag, lsb_exp, false, Overflow::infinity);
}

// late c (a custom preset's choice): the exact value s1 * 2^e1 + s2 * 2^e2 of the truncated
// product sum and c, rounded into the accumulator format. The smaller is jammed into a sticky
// bit when it lies more than 100 bits below the larger (far below any rounding position).
std::uint32_t add_late_c(std::int64_t s1, int e1, std::int64_t s2, int e2, const Preset& p,
                         Format acc) {
  if (s1 == 0 && s2 == 0)
    return 0u;
  auto top = [](std::int64_t s, int e) {
    return s == 0 ? -100000 : e + 63 - std::countl_zero(static_cast<std::uint64_t>(s < 0 ? -s : s));
  };
  const int bottom = std::max(top(s1, e1), top(s2, e2)) - 100;
  auto place = [bottom](std::int64_t s, int e) -> __int128 {
    if (s == 0)
      return 0;
    const auto mag = static_cast<std::uint64_t>(s < 0 ? -s : s);
    unsigned __int128 v;
    if (e >= bottom) {
      v = static_cast<unsigned __int128>(mag) << (e - bottom);
    } else {
      const int d = bottom - e;
      v = d >= 64 ? 1u : ((mag >> d) | ((mag & ((std::uint64_t{1} << d) - 1u)) != 0 ? 1u : 0u));
    }
    return s < 0 ? -static_cast<__int128>(v) : static_cast<__int128>(v);
  };
  const __int128 sum = place(s1, e1) + place(s2, e2);
  if (sum == 0)
    return 0u;
  const bool neg = sum < 0;
  unsigned __int128 mag = static_cast<unsigned __int128>(neg ? -sum : sum);
  if (acc == Format::fp32)
    return round_block_result(neg, mag, bottom, p);
  // fp16: bring the magnitude below 2^64, the dropped bits jammed into bit 0 (sticky).
  int lsb = bottom;
  while ((mag >> 64) != 0) {
    mag = (mag >> 1) | (mag & 1u);
    ++lsb;
  }
  const auto m64 = static_cast<std::uint64_t>(mag);
  if (p.half_out == HalfOutput::block_then_nearest) {
    const std::uint32_t r32 = round_block_result(neg, m64, lsb, p);
    return encode_binary32_bits(Format::fp16, r32, Overflow::infinity);
  }
  return round_exact_bits(Format::fp16, neg, m64, lsb, false, Overflow::infinity);
}

// The non-finite rule over a whole chain; true and `out` set when some operand or c is not
// finite.
bool nonfinite_result(const std::uint32_t* a, const std::uint32_t* b, std::size_t K,
                      std::uint32_t c, FormatPair fmt, Format acc, std::uint32_t& out) {
  bool any = false, nan = false, pos_inf = false, neg_inf = false;
  const Exact xc = decode_bits(acc, c);
  if (xc.cls == ValueClass::nan) {
    any = nan = true;
  } else if (xc.cls == ValueClass::inf) {
    any = true;
    (xc.neg ? neg_inf : pos_inf) = true;
  }
  for (std::size_t k = 0; k < K; ++k) {
    const Exact x = decode_bits(fmt.a, a[k]);
    const Exact y = decode_bits(fmt.b, b[k]);
    const auto finite = [](const Exact& v) {
      return v.cls == ValueClass::zero || v.cls == ValueClass::finite;
    };
    if (finite(x) && finite(y))
      continue;
    any = true;
    if (x.cls == ValueClass::nan || y.cls == ValueClass::nan) {
      nan = true;
    } else if (x.cls == ValueClass::zero || y.cls == ValueClass::zero) {
      nan = true; // Inf * 0
    } else {
      ((x.neg != y.neg) ? neg_inf : pos_inf) = true;
    }
  }
  if (!any)
    return false;
  const FormatSpec& s = spec(acc);
  const std::uint32_t inf = ((1u << s.exp_bits) - 1u) << s.frac_bits;
  if (nan || (pos_inf && neg_inf)) {
    out = s.canonical_nan;
  } else {
    out = pos_inf ? inf : (s.sign_mask() | inf);
  }
  return true;
}

std::uint32_t chain(const std::uint32_t* a, const std::uint32_t* b, std::size_t K,
                    std::uint32_t c_in, const Preset& p, FormatPair fmt, Format acc) {
  const bool c_finite = !is_nonfinite(c_in, acc);
  bool maybe_nonfinite = !c_finite;
  std::uint32_t c = c_finite ? c_in : 0u;
  const auto nfma = static_cast<std::size_t>(p.nfma);
  for (std::size_t k0 = 0; k0 < K; k0 += nfma) {
    const std::size_t n = std::min(K - k0, nfma);
    c = block_fma_codes(a + k0, b + k0, static_cast<int>(n), c, p, fmt, acc, maybe_nonfinite);
    if (is_nonfinite(c, acc)) {
      // The later blocks' codes go unseen: the non-finite rule must scan them.
      maybe_nonfinite = true;
      break; // an overflow to Inf ends the chain
    }
  }
  std::uint32_t special;
  if (maybe_nonfinite && nonfinite_result(a, b, K, c_in, fmt, acc, special))
    return special;
  return c;
}

} // namespace

void check_codes_call(const Preset& p, FormatPair fmt, Format acc, const char* who) {
  if (!is_hmma_input(fmt.a) || !is_hmma_input(fmt.b)) {
    throw ValueError(std::string(who) + ": formats " + format_name(fmt.a) + " x " +
                     format_name(fmt.b) +
                     " are not fp16, bf16 or tf32 (FP8 codes go through model::dot)");
  }
  check_preset_takes(p, fmt.a, fmt.b, who);
  if (acc == Format::fp32)
    return;
  if (acc == Format::fp16 && p.half_out != HalfOutput::none)
    return;
  throw ValueError(std::string(who) + ": accumulator " + format_name(acc) + " is not fp32" +
                   (p.half_out != HalfOutput::none ? " or fp16" : "") + " (preset '" + p.name +
                   "')");
}

std::uint32_t block_fma_codes(const std::uint32_t* a, const std::uint32_t* b, int n,
                              std::uint32_t c, const Preset& p, FormatPair fmt, Format acc,
                              bool& nonfinite) {
  check_codes_call(p, fmt, acc, "block_fma_codes");
  if (n < 0 || n > p.nfma) {
    throw ValueError("block_fma_codes: n = " + std::to_string(n) + " is outside 0.." +
                     std::to_string(p.nfma) + " (preset '" + p.name + "')");
  }
  // c as mant * 2^(ec - 23), ec its binary32 exponent (-126 for subnormals).
  const std::uint32_t c32 = c_as_binary32(c, acc);
  const bool cneg = (c32 >> 31) != 0;
  const std::uint32_t cexp = (c32 >> 23) & 0xFFu;
  const std::uint32_t cm = cexp == 0 ? (c32 & 0x7FFFFFu) : ((c32 & 0x7FFFFFu) | 0x800000u);
  const int ec = cexp == 0 ? -126 : static_cast<int>(cexp) - 127;

  // Steps 1 and 4: the products and the largest exponent.
  const int fa = spec(fmt.a).frac_bits, fb = spec(fmt.b).frac_bits;
  std::uint64_t prod[Preset::kMaxNfma];
  int exps[Preset::kMaxNfma];
  bool negs[Preset::kMaxNfma];
  int terms = 0;
  int E = p.min_exp;
  for (int i = 0; i < n; ++i) {
    const Operand x = operand(fmt.a, a[i]);
    const Operand y = operand(fmt.b, b[i]);
    if (x.cls == ValueClass::inf || x.cls == ValueClass::nan || y.cls == ValueClass::inf ||
        y.cls == ValueClass::nan) {
      nonfinite = true;
      continue;
    }
    if (x.sig == 0 || y.sig == 0)
      continue; // step 1: a pair with a zero factor is no term
    prod[terms] = static_cast<std::uint64_t>(x.sig) * y.sig;
    exps[terms] = x.ea + y.ea;
    negs[terms] = x.neg != y.neg;
    E = std::max(E, exps[terms]);
    ++terms;
  }
  const bool c_in_block = cm != 0 && !p.late_c;
  if (c_in_block)
    E = std::max(E, ec);

  // Step 5: each term truncated toward zero to a multiple of 2^(E - frac), summed exactly.
  // A product's value is prod * 2^(e - fa - fb), so its scaled magnitude is
  // prod * 2^(e - fa - fb + frac - E); |S| < 257 * 2^(frac + 2) <= 2^59 for frac <= 48.
  std::int64_t S = 0;
  for (int i = 0; i < terms; ++i) {
    const auto t = static_cast<std::int64_t>(scale_floor(prod[i], exps[i] - fa - fb + p.frac - E));
    S += negs[i] ? -t : t;
  }
  if (c_in_block) {
    const auto t = static_cast<std::int64_t>(scale_floor(cm, ec - 23 + p.frac - E));
    S += cneg ? -t : t;
  }
  if (p.late_c && cm != 0) {
    const auto cs = static_cast<std::int64_t>(cm);
    return add_late_c(S, E - p.frac, cneg ? -cs : cs, ec - 23, p, acc);
  }
  const bool neg = S < 0;
  return round_sum(neg, static_cast<std::uint64_t>(neg ? -S : S), E - p.frac, p, acc);
}

std::uint32_t dot_codes(std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                        std::uint32_t c, const Preset& p, FormatPair fmt, Format acc) {
  check_codes_call(p, fmt, acc, "dot_codes");
  if (a.size() != b.size()) {
    throw ValueError("dot_codes: a has " + std::to_string(a.size()) + " elements but b has " +
                     std::to_string(b.size()));
  }
  return chain(a.data(), b.data(), a.size(), c & spec(acc).code_mask(), p, fmt, acc);
}

void dot_codes_rows(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                    std::size_t rows, std::size_t K, const Preset& p, FormatPair fmt, Format acc,
                    std::uint32_t* out) {
  check_codes_call(p, fmt, acc, "dot_codes");
  for (std::size_t r = 0; r < rows; ++r) {
    out[r] = chain(a + r * K, b + r * K, K, c ? c[r] & spec(acc).code_mask() : 0u, p, fmt, acc);
  }
}

} // namespace mmaemu::model
