// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/format.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "mmaemu/emulator/specialize.hpp"

namespace mmaemu {

namespace {
constexpr std::array<FormatSpec, 6> kSpecs = {{
    {Format::e4m3, "e4m3", "float8_e4m3fn", 8, 4, 3, 7, Specials::fn_nan,
     specialize::kFp8CanonicalNaN},
    {Format::e5m2, "e5m2", "float8_e5m2", 8, 5, 2, 15, Specials::ieee,
     specialize::kFp8CanonicalNaN},
    {Format::fp16, "fp16", "float16", 16, 5, 10, 15, Specials::ieee, specialize::kF16CanonicalNaN},
    {Format::bf16, "bf16", "bfloat16", 16, 8, 7, 127, Specials::ieee, specialize::kF16CanonicalNaN},
    {Format::fp32, "fp32", "float32", 32, 8, 23, 127, Specials::ieee, specialize::kF32CanonicalNaN},
    // No torch dtype: torch_name repeats the short name (what messages print).
    {Format::tf32, "tf32", "tf32", 19, 8, 10, 127, Specials::ieee, specialize::kTf32CanonicalNaN},
}};
} // namespace

const FormatSpec& spec(Format f) {
  return kSpecs[static_cast<std::size_t>(f)];
}

std::optional<Format> parse_format(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (s.rfind("torch.", 0) == 0)
    s = s.substr(6);
  for (const auto& sp : kSpecs) {
    if (s == sp.name || s == sp.torch_name)
      return sp.format;
  }
  if (s == "e4m3fn" || s == "float8_e4m3")
    return Format::e4m3;
  if (s == "binary32" || s == "float")
    return Format::fp32;
  if (s == "half" || s == "binary16")
    return Format::fp16;
  if (s == "tensorfloat32" || s == "tensorfloat-32")
    return Format::tf32;
  return std::nullopt;
}

} // namespace mmaemu
