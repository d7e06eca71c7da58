// SPDX-License-Identifier: BSD-2-Clause
// The CUDA sources cannot include the CPU code's constants (NVRTC compiles them alone), so
// kernels/cuda/mmaemu_chain.cuh writes its own copies: each is read here from the embedded
// source text and checked against emulator/include/mmaemu/emulator/specialize.hpp and the ada
// preset, the chain every kernel computes. A constant renamed or removed in the header fails
// here too, so the check cannot go quiet.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <regex>
#include <string>

#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/specialize.hpp"
#include "mmaemu/kernels/host/intrinsics.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"

namespace {

namespace spec = mmaemu::specialize;

std::string chain_header() {
  for (const auto& f : mmaemu::kernels::kernel_source_files())
    if (std::string(f.name) == "mmaemu_chain.cuh")
      return std::string(f.content);
  return {};
}

// The value of one integer literal as CUDA writes it: decimal or 0x hex, with an optional u.
std::int64_t literal(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == 'u' || t.back() == 'U'))
    t.pop_back();
  return std::stoll(t, nullptr, t.rfind("0x", 0) == 0 || t.rfind("0X", 0) == 0 ? 16 : 10);
}

// `constexpr <int|unsigned> kName = <literal> [- <literal>];` at namespace level of the header.
std::map<std::string, std::int64_t> header_constants(const std::string& text) {
  static const std::regex line(
      R"(constexpr\s+(?:unsigned|int)\s+(k\w+)\s*=\s*(0[xX][0-9a-fA-F]+[uU]?|\d+[uU]?)(?:\s*([-+])\s*(0[xX][0-9a-fA-F]+[uU]?|\d+[uU]?))?\s*;)");
  std::map<std::string, std::int64_t> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    std::int64_t v = literal(m[2].str());
    if (m[3].matched)
      v = m[3].str() == "-" ? v - literal(m[4].str()) : v + literal(m[4].str());
    out[m[1].str()] = v;
  }
  return out;
}

TEST(ChainConstants, TheHeaderParserReadsHexDecimalAndDifferences) {
  const auto c = header_constants("constexpr unsigned kA = 0x7Fu;\nconstexpr int kB = 127 - 10;\n"
                                  "constexpr int kC = 13; // note\n");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c.at("kA"), 127);
  EXPECT_EQ(c.at("kB"), 117);
  EXPECT_EQ(c.at("kC"), 13);
}

TEST(ChainConstants, TheCudaChainHeaderAgreesWithTheOneHomeOfTheConstants) {
  const std::string text = chain_header();
  ASSERT_FALSE(text.empty()) << "mmaemu_chain.cuh is not among the embedded kernel sources";
  const auto c = header_constants(text);
  auto at = [&](const char* name) {
    const auto it = c.find(name);
    EXPECT_NE(it, c.end()) << name << " is no longer a constant of mmaemu_chain.cuh";
    return it == c.end() ? std::int64_t{-1} : it->second;
  };
  EXPECT_EQ(at("kCanonicalNaN"), spec::kF32CanonicalNaN);
  EXPECT_EQ(at("kSignBit"), spec::kF32SignBit);
  EXPECT_EQ(at("kAbsMask"), spec::kF32AbsMask);
  EXPECT_EQ(at("kFrac"), spec::kFp8Frac);
}

TEST(ChainConstants, TheKernelsChainIsTheAdaPresetsChain) {
  // The kernels compute the ada preset: its frac and frac_out are the header's kFrac (one
  // constant for both: terms and block results keep the same 13 bits there).
  const auto& ada = mmaemu::get_preset("ada");
  EXPECT_EQ(ada.frac, spec::kFp8Frac);
  EXPECT_EQ(ada.frac_out, spec::kFp8FracOut);
  EXPECT_EQ(header_constants(chain_header()).at("kFrac"), ada.frac_out);
}

TEST(ChainConstants, TheHostShimWritesTheSameCanonicalNaN) {
  EXPECT_EQ(mmaemu::kernels::host::detail::kCanonicalNaN, spec::kF32CanonicalNaN);
  EXPECT_EQ(mmaemu::kernels::host::detail::kInfBits, spec::kF32PosInf);
}

} // namespace
