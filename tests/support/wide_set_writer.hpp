// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Test support: synthetic 16-bit and tf32 sets in the public text layout (a_, b_ <GPU>_<fmt>,
// c_, d_ <GPU>_fp32, and d_<GPU>_fp16 for an fp16 accumulator) whose d lines come from the
// independent binary64 derivation ref_chain_wide.hpp, never from the emulator; the preset gives
// only the chain's parameters (nfma, frac, frac_out, min_exp).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/emulator/preset.hpp"
#include "public_set_writer.hpp"
#include "ref_chain_wide.hpp"

namespace testsupport::wide {

namespace fs = std::filesystem;
namespace ref = reftest::wide;

struct WideSpec {
  std::string gpu, fmt; // folder names: "A100", "bf16"
  std::string preset;   // what the importer must map it to
  int K;
  bool fp16_file; // write d_<GPU>_fp16.txt
};

inline void PrintTo(const WideSpec& s, std::ostream* os) {
  *os << s.gpu << "/" << s.fmt;
}

inline const ref::Fmt& ref_fmt(const std::string& f) {
  return f == "fp16" ? ref::kFP16 : (f == "bf16" ? ref::kBF16 : ref::kTF32);
}

// The binary32 pattern of a code of the format (its value is exact in binary32).
inline std::uint32_t binary32_of(const ref::Fmt& f, std::uint32_t code) {
  return ref::to_bits(static_cast<float>(ref::value(f, code)));
}

inline ref::Params params_of(const mmaemu::Preset& p) {
  return {p.nfma, p.frac, p.frac_out, false, p.min_exp};
}

// Writes a set of n lines; returns its folder.
inline fs::path write_wide_set(const fs::path& root, const WideSpec& s, std::size_t n,
                               unsigned seed) {
  const fs::path dir = root / s.gpu / s.fmt;
  fs::create_directories(dir);
  const ref::Fmt& f = ref_fmt(s.fmt);
  const mmaemu::Preset& p = mmaemu::get_preset_quiet(s.preset);
  std::mt19937_64 rng(seed);
  std::vector<std::string> la, lb, lc, ld, ld16;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> a(s.K), b(s.K);
    std::string ta, tb;
    for (int k = 0; k < s.K; ++k) {
      for (auto* v : {&a[k], &b[k]}) {
        const std::uint32_t sign = (rng() & 1u) << (f.width - 1);
        const auto e = static_cast<std::uint32_t>(f.bias - 3 + static_cast<int>(rng() % 6));
        *v = sign | (e << f.frac_bits) |
             (static_cast<std::uint32_t>(rng()) & ((1u << f.frac_bits) - 1u));
      }
      ta += (k ? " " : "") + testsupport::hex8(binary32_of(f, a[k]));
      tb += (k ? " " : "") + testsupport::hex8(binary32_of(f, b[k]));
    }
    const std::uint32_t c = (static_cast<std::uint32_t>(rng()) & 0x807FFFFFu) |
                            (static_cast<std::uint32_t>(125 + rng() % 4) << 23);
    la.push_back(ta);
    lb.push_back(tb);
    lc.push_back(testsupport::binary32_string(c));
    ld.push_back(testsupport::binary32_string(ref::chain(f, a, b, c, false, params_of(p))));
    if (s.fp16_file) {
      // The recorder's c: the c file rounded to nearest fp16.
      const std::uint16_t c16 = ref::fp16_nearest(ref::from_bits(c));
      const auto d16 = static_cast<std::uint16_t>(ref::chain(f, a, b, c16, true, params_of(p)));
      ld16.push_back(
          testsupport::binary32_string(ref::to_bits(static_cast<float>(ref::fp16_value(d16)))));
    }
  }
  testsupport::write_lines(dir / ("a_" + s.gpu + "_" + s.fmt + ".txt"), la);
  testsupport::write_lines(dir / ("b_" + s.gpu + "_" + s.fmt + ".txt"), lb);
  testsupport::write_lines(dir / ("c_" + s.gpu + "_fp32.txt"), lc);
  testsupport::write_lines(dir / ("d_" + s.gpu + "_fp32.txt"), ld);
  if (s.fp16_file)
    testsupport::write_lines(dir / ("d_" + s.gpu + "_fp16.txt"), ld16);
  return dir;
}

} // namespace testsupport::wide
