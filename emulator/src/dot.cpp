// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/dot.hpp"

#include <string>

#include "dot_f32.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/specialize.hpp"

namespace mmaemu::model {

namespace {

constexpr std::uint32_t kCanonicalNaN32 = specialize::kF32CanonicalNaN;
constexpr std::uint32_t kPosInf32 = specialize::kF32PosInf;
constexpr std::uint32_t kNegInf32 = specialize::kF32NegInf;

void check_formats(FormatPair fmt, const Preset& p) {
  if (!is_fp8(fmt.a)) {
    throw ValueError(std::string("dot: format of a must be e4m3 or e5m2, got ") +
                     format_name(fmt.a) + " (fp16, bf16 and tf32 codes: model::dot_codes)");
  }
  if (!is_fp8(fmt.b)) {
    throw ValueError(std::string("dot: format of b must be e4m3 or e5m2, got ") +
                     format_name(fmt.b) + " (fp16, bf16 and tf32 codes: model::dot_codes)");
  }
  check_preset_takes(p, fmt.a, fmt.b, "dot"); // a 16-bit or tf32 preset takes no FP8 codes
}

// The non-finite rule over a whole chain. Returns true and sets `out` when some operand or c
// is not finite.
bool nonfinite_result(const std::uint8_t* a, const std::uint8_t* b, std::size_t K,
                      std::uint32_t c_bits, FormatPair fmt, std::uint32_t& out) {
  const auto& ta = fp8_operand_table(fmt.a);
  const auto& tb = fp8_operand_table(fmt.b);
  constexpr auto kFinite = static_cast<std::uint8_t>(ValueClass::finite);
  constexpr auto kZero = static_cast<std::uint8_t>(ValueClass::zero);
  constexpr auto kInf = static_cast<std::uint8_t>(ValueClass::inf);
  bool any = false;
  bool nan = false;
  bool pos_inf = false;
  bool neg_inf = false;
  if (((c_bits >> 23) & 0xFFu) == 0xFFu) {
    any = true;
    if (c_bits & 0x7FFFFFu) {
      nan = true;
    } else {
      ((c_bits >> 31) ? neg_inf : pos_inf) = true;
    }
  }
  for (std::size_t k = 0; k < K; ++k) {
    const Fp8Operand& x = ta[a[k]];
    const Fp8Operand& y = tb[b[k]];
    if (x.cls <= kFinite && y.cls <= kFinite)
      continue;
    any = true;
    if (x.cls > kInf || y.cls > kInf) {
      nan = true; // a NaN operand
    } else if (x.cls == kZero || y.cls == kZero) {
      nan = true; // Inf * 0
    } else {
      ((x.neg ^ y.neg) ? neg_inf : pos_inf) = true;
    }
  }
  if (!any)
    return false;
  if (nan || (pos_inf && neg_inf)) {
    out = kCanonicalNaN32;
  } else {
    out = pos_inf ? kPosInf32 : kNegInf32;
  }
  return true;
}

// fast: detail::chain_f32 applies to the preset and format pair (it then computes the chain
// unless a code is NaN or Inf or a block overflows).
std::uint32_t chain(const std::uint8_t* a, const std::uint8_t* b, std::size_t K,
                    std::uint32_t c_bits, const Preset& p, FormatPair fmt, bool fast) {
  // One pass: the blocks themselves report NaN or Inf codes (which they count as zeros), and
  // only then is the whole-chain non-finite rule applied. A non-finite c counts as zero in
  // the blocks for the same reason.
  const bool c_finite = ((c_bits >> 23) & 0xFFu) != 0xFFu;
  std::uint32_t fast_out;
  if (fast && c_finite && detail::chain_f32(a, b, K, c_bits, p, fmt, fast_out))
    return fast_out;
  bool maybe_nonfinite = !c_finite;
  const BlockContext ctx(fmt.a, fmt.b, p);
  std::uint32_t c = c_finite ? c_bits : 0u;
  const auto nfma = static_cast<std::size_t>(p.nfma);
  for (std::size_t k0 = 0; k0 < K; k0 += nfma) {
    const std::size_t n = K - k0 < nfma ? K - k0 : nfma;
    c = block_fma(ctx, a + k0, b + k0, static_cast<int>(n), c, maybe_nonfinite);
    if (((c >> 23) & 0xFFu) == 0xFFu) {
      // The later blocks' codes go unseen: the non-finite rule must scan them.
      maybe_nonfinite = true;
      break; // an overflow to Inf ends the chain
    }
  }
  std::uint32_t special;
  if (maybe_nonfinite && nonfinite_result(a, b, K, c_bits, fmt, special))
    return special;
  return c;
}

} // namespace

std::uint32_t dot(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                  std::uint32_t c_bits, const Preset& p, FormatPair fmt) {
  check_formats(fmt, p);
  if (a.size() != b.size()) {
    throw ValueError("dot: a has " + std::to_string(a.size()) + " elements but b has " +
                     std::to_string(b.size()));
  }
  return chain(a.data(), b.data(), a.size(), c_bits, p, fmt, detail::chain_f32_applies(p, fmt));
}

void dot_rows(const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c,
              std::size_t rows, std::size_t K, const Preset& p, FormatPair fmt, std::uint32_t* out,
              ChainPath path) {
  check_formats(fmt, p);
  const bool fast = path == ChainPath::automatic && detail::chain_f32_applies(p, fmt);
  std::size_t r = 0;
  if (fast) {
    // Rows two at a time (chain2_f32 overlaps their latencies), alone where it cannot.
    for (; r + 2 <= rows; r += 2) {
      const std::uint8_t* ar[2] = {a + r * K, a + (r + 1) * K};
      const std::uint8_t* br[2] = {b + r * K, b + (r + 1) * K};
      const std::uint32_t cr[2] = {c ? c[r] : 0u, c ? c[r + 1] : 0u};
      bool ok[2];
      detail::chain2_f32(ar, br, K, cr, p, fmt, out + r, ok);
      for (int i = 0; i < 2; ++i) {
        if (!ok[i])
          out[r + i] = chain(ar[i], br[i], K, cr[i], p, fmt, false);
      }
    }
  }
  for (; r < rows; ++r)
    out[r] = chain(a + r * K, b + r * K, K, c ? c[r] : 0u, p, fmt, fast);
}

} // namespace mmaemu::model
