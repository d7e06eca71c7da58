// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The floating-point formats that mmaemu reads and writes, described as data.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu {

// tf32 is NVIDIA's TensorFloat-32: 1 sign, 8 exponent and 10 fraction bits (bias 127), a
// 19-bit code; in a 32-bit register or a binary32 container it is the top 19 bits (the low 13
// are zero), so its code is the binary32 pattern shifted right by 13. It comes last so that
// the other formats keep their values.
enum class Format : std::uint8_t { e4m3, e5m2, fp16, bf16, fp32, tf32 };

// How a format spells Inf and NaN.
enum class Specials : std::uint8_t {
  ieee,   // all-ones exponent: Inf (fraction 0) and NaN (fraction != 0)
  fn_nan, // torch float8_e4m3fn: no Inf; only S.1111.111 is NaN
};

struct FormatSpec {
  Format format;
  const char* name;       // short name: "e4m3", "e5m2", "fp16", "bf16", "fp32", "tf32"
  const char* torch_name; // torch dtype: "float8_e4m3fn", ... ("tf32": torch has none)
  int width;              // bits in a code
  int exp_bits;
  int frac_bits;
  int bias;
  Specials specials;
  std::uint32_t canonical_nan; // the code mmaemu writes for any NaN

  int emin() const { return 1 - bias; } // exponent of the smallest normal
  // Exponent of the largest finite value.
  int emax() const { return (1 << exp_bits) - 1 - bias - (specials == Specials::ieee ? 1 : 0); }
  std::uint32_t code_mask() const { return width == 32 ? 0xFFFFFFFFu : (1u << width) - 1u; }
  std::uint32_t sign_mask() const { return 1u << (width - 1); }
};

// The spec of a format; never fails.
const FormatSpec& spec(Format f);

// Parses a format name: short ("e4m3", "tf32"), upper case ("E4M3"), torch
// ("float8_e4m3fn", "float16", "bfloat16", "float32") or "fp32"/"binary32". Returns nothing if
// unknown.
std::optional<Format> parse_format(std::string_view name);

// The short name of a format ("e4m3").
inline const char* format_name(Format f) {
  return spec(f).name;
}

inline bool is_fp8(Format f) {
  return f == Format::e4m3 || f == Format::e5m2;
}

// The formats of 16-bit and tf32 tensor-core operands (HMMA-class instructions).
inline bool is_hmma_input(Format f) {
  return f == Format::fp16 || f == Format::bf16 || f == Format::tf32;
}

// The tf32 code of a binary32 container whose low 13 bits are zero (what cvt.rna.tf32.f32
// writes), and back. tf32_code_of_container ignores the low 13 bits, as an mma does.
inline std::uint32_t tf32_code_of_container(std::uint32_t bits) {
  return bits >> 13;
}
inline std::uint32_t tf32_container_of_code(std::uint32_t code) {
  return (code & 0x7FFFFu) << 13;
}

} // namespace mmaemu
