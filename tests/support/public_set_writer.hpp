// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Test support: fresh temporary folders, and synthetic sets in the text layout of the public
// hardware vectors (shared/truth-public/README.md) whose d lines come from the independent
// binary64 derivation (tests/support/ref_chain.hpp), never from the emulator.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "ref_chain.hpp"
#include "temp_dir.hpp"

namespace testsupport {

namespace fs = std::filesystem;

// The one temporary-folder helper of the tests (temp_dir.hpp).
using TempDir = mmaemu::testing::TempDir;

// Names of the entries of a folder (hidden ones included), sorted.
inline std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out)
    throw std::runtime_error(p.string() + ": cannot write");
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of a text file, without their '\n'.
inline std::vector<std::string> read_lines(const fs::path& p) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(p));
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

inline void write_lines(const fs::path& p, const std::vector<std::string>& lines,
                        const std::string& eol = "\n") {
  std::string text;
  for (const auto& l : lines)
    text += l + eol;
  write_text(p, text);
}

inline std::string hex8(std::uint32_t bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", bits);
  return buf;
}

inline std::string binary32_string(std::uint32_t bits) {
  std::string s(32, '0');
  for (int i = 0; i < 32; ++i)
    if ((bits >> (31 - i)) & 1u)
      s[static_cast<std::size_t>(i)] = '1';
  return s;
}

// The binary32 bits of an FP8 code's value, derived independently of the emulator.
inline std::uint32_t fp8_to_binary32(const reftest::Fmt& f, std::uint8_t code) {
  const double v = reftest::value(f, code);
  return reftest::to_bits(static_cast<float>(v)); // exact: FP8 values are binary32 values
}

inline const reftest::Fmt& ref_fmt(const std::string& fmt) {
  return fmt == "E5M2" ? reftest::kE5M2 : reftest::kE4M3;
}

// The parameters of a preset, written out here (not read from the emulator).
struct PresetParams {
  reftest::Params p;
  bool chain_from_c; // false: the hardware zeroed the accumulator (c file unused)
};
inline PresetParams ada_params() {
  return {{16, 13, 13, false, -132}, true};
}
inline PresetParams hopper_params() {
  return {{32, 13, 13, false, -133}, false};
}
inline PresetParams b200_params() {
  return {{32, 31, 23, true, -133}, true};
}

struct SetSpec {
  std::string gpu = "H100";
  std::string fmt_a = "E4M3";
  std::string fmt_b = "E4M3";
  std::size_t n = 64;
  unsigned seed = 1;
  int K = 32;
  PresetParams params = hopper_params();
};

// What a synthetic set holds, per dot product.
struct SetData {
  fs::path dir;
  fs::path a, b, c, d;
  std::vector<std::uint8_t> a_codes, b_codes; // [n][K]
  std::vector<std::uint32_t> c_bits, d_bits;  // [n]
};

inline bool finite_code(const reftest::Fmt& f, std::uint8_t code) {
  bool fin = true;
  reftest::value(f, code, &fin);
  return fin;
}

// A random binary32 accumulator input: zeros, small and large normals, a few subnormals.
inline std::uint32_t random_c(std::mt19937& rng) {
  const std::uint32_t r = rng();
  const std::uint32_t sign = (r & 1u) << 31;
  const std::uint32_t frac = rng() & 0x7FFFFFu;
  switch ((r >> 1) % 8) {
  case 0:
    return sign; // +-0
  case 1:
    return sign | (frac & 0x7FFFFFu); // subnormal (or zero)
  default: {
    const int e = static_cast<int>((r >> 4) % 60) - 30; // 2^-30 .. 2^29
    return sign | (static_cast<std::uint32_t>(e + 127) << 23) | frac;
  }
  }
}

// Writes a_<GPU>_<FMT_A>.txt, b_<GPU>_<FMT_B>.txt, c_<GPU>_fp32.txt, d_<GPU>_fp32.txt into
// `dir` (created if needed) from random finite FP8 codes, with d from ref_chain.hpp.
inline SetData write_set(const fs::path& dir, const SetSpec& s) {
  fs::create_directories(dir);
  SetData out;
  out.dir = dir;
  out.a = dir / ("a_" + s.gpu + "_" + s.fmt_a + ".txt");
  out.b = dir / ("b_" + s.gpu + "_" + s.fmt_b + ".txt");
  out.c = dir / ("c_" + s.gpu + "_fp32.txt");
  out.d = dir / ("d_" + s.gpu + "_fp32.txt");
  const reftest::Fmt& fa = ref_fmt(s.fmt_a);
  const reftest::Fmt& fb = ref_fmt(s.fmt_b);
  std::mt19937 rng(s.seed);
  auto random_code = [&](const reftest::Fmt& f) {
    for (;;) {
      const auto code = static_cast<std::uint8_t>(rng() & 0xFFu);
      if (finite_code(f, code))
        return code;
    }
  };
  std::vector<std::string> la, lb, lc, ld;
  const auto K = static_cast<std::size_t>(s.K);
  for (std::size_t i = 0; i < s.n; ++i) {
    std::vector<std::uint8_t> a(K), b(K);
    std::string sa, sb;
    for (std::size_t k = 0; k < K; ++k) {
      a[k] = random_code(fa);
      b[k] = random_code(fb);
      sa += (k ? " " : "") + hex8(fp8_to_binary32(fa, a[k]));
      sb += (k ? " " : "") + hex8(fp8_to_binary32(fb, b[k]));
    }
    const std::uint32_t c = random_c(rng);
    const std::uint32_t d =
        reftest::chain(fa, fb, a, b, s.params.chain_from_c ? c : 0u, s.params.p);
    out.a_codes.insert(out.a_codes.end(), a.begin(), a.end());
    out.b_codes.insert(out.b_codes.end(), b.begin(), b.end());
    out.c_bits.push_back(c);
    out.d_bits.push_back(d);
    la.push_back(sa);
    lb.push_back(sb);
    lc.push_back(binary32_string(c));
    ld.push_back(binary32_string(d));
  }
  write_lines(out.a, la);
  write_lines(out.b, lb);
  write_lines(out.c, lc);
  write_lines(out.d, ld);
  return out;
}

// Replaces line `line1` (1-based) of a text file.
inline void replace_line(const fs::path& p, std::size_t line1, const std::string& text) {
  auto lines = read_lines(p);
  lines.at(line1 - 1) = text;
  write_lines(p, lines);
}

} // namespace testsupport
