// SPDX-License-Identifier: BSD-2-Clause
// The independent derivation of the block-FMA chain (tests/support/ref_chain.hpp: binary64
// arithmetic on the codes' fields, no code shared with the emulator) reproduces every case of
// every committed hardware recording (recordings/data/public/*.h5) bit for bit (the 16-bit and
// tf32 ones through tests/support/ref_chain_wide.hpp). This checks
// the derivation that the unit tests take their expected bits from against the hardware
// itself, so that a wrong reference cannot make wrong emulator bits look right.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "ref_chain.hpp"
#include "ref_chain_wide.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::Mismatch;

fs::path public_recordings() {
  return fs::path(MMAEMU_SOURCE_DIR) / "recordings" / "data" / "public";
}

std::vector<fs::path> committed_recordings() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(public_recordings())) {
    if (e.is_regular_file() && e.path().extension() == ".h5")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The preset parameters as docs/block-fma.md states them ("Preset parameters"), written here
// rather than read from mmaemu::Preset, so that a changed shipped preset shows up as a
// mismatch against the hardware instead of moving the reference with it.
const std::map<std::string, reftest::Params>& documented_presets() {
  static const std::map<std::string, reftest::Params> p = {
      // nfma, frac, frac_out, rne, min_exp
      {"ada", {16, 13, 13, false, -132}},
      {"hopper", {32, 13, 13, false, -133}},
      {"b200_mma_sync", {32, 31, 23, true, -133}},
  };
  return p;
}

// The 16-bit and tf32 presets as docs/block-fma.md ("The same block for fp16, bf16 and tf32
// inputs") and docs/semantics.md state them, written here for the same reason.
const std::map<std::string, reftest::wide::Params>& documented_wide_presets() {
  using H = reftest::wide::Params::Half;
  static const std::map<std::string, reftest::wide::Params> p = {
      // nfma, frac, frac_out, rne, min_exp, fp16 accumulator
      {"volta_fp16", {4, 23, 23, false, -160, H::sum_to_nearest}},
      {"ampere_fp16", {8, 24, 23, false, -160, H::sum_to_nearest}},
      {"ampere_bf16", {8, 24, 23, false, -160}},
      {"ampere_tf32", {4, 24, 23, false, -160}},
      {"ada_fp16", {8, 24, 23, false, -160, H::sum_to_nearest}},
      {"ada_bf16", {8, 24, 23, false, -160}},
      {"ada_tf32", {4, 24, 23, false, -160}},
      {"hopper_fp16", {16, 25, 23, false, -133, H::sum_to_nearest}},
      {"hopper_bf16", {16, 25, 23, false, -133}},
      {"hopper_tf32", {8, 25, 23, false, -133}},
  };
  return p;
}

const reftest::wide::Fmt* wide_fmt(Format f) {
  if (f == Format::fp16)
    return &reftest::wide::kFP16;
  if (f == Format::bf16)
    return &reftest::wide::kBF16;
  if (f == Format::tf32)
    return &reftest::wide::kTF32;
  return nullptr;
}

// The cases of a batch of fp16, bf16 or tf32 operands that the derivation does not reproduce.
std::size_t wide_mismatches(const mmaemu::recordings::MmaBatch& b) {
  const auto params = documented_wide_presets().find(b.preset);
  EXPECT_NE(params, documented_wide_presets().end()) << "preset " << b.preset;
  const reftest::wide::Fmt* f = wide_fmt(b.fmt_a);
  EXPECT_TRUE(f != nullptr && b.fmt_b == b.fmt_a);
  if (params == documented_wide_presets().end() || f == nullptr)
    return b.size();
  const bool half = b.acc == Format::fp16;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto at = [&](const std::vector<std::uint32_t>& v) {
      return std::vector<std::uint32_t>(v.begin() + static_cast<std::ptrdiff_t>(i * b.K),
                                        v.begin() + static_cast<std::ptrdiff_t>((i + 1) * b.K));
    };
    // An fp16 accumulator's c and expect are binary32 patterns of fp16 values.
    const std::uint32_t c =
        half ? reftest::wide::fp16_code_of_exact(reftest::wide::from_bits(b.c[i])) : b.c[i];
    std::uint32_t want =
        reftest::wide::chain(*f, at(b.a_wide), at(b.b_wide), c, half, params->second);
    if (half) {
      want = reftest::wide::to_bits(
          static_cast<float>(reftest::wide::fp16_value(static_cast<std::uint16_t>(want))));
    }
    if (mmaemu::compare_bits(b.expect[i], want, Format::fp32) != Mismatch::none) {
      if (bad++ < 10) {
        ADD_FAILURE() << b.ids[i] << ": hardware "
                      << mmaemu::decompose_bits(b.expect[i], Format::fp32) << ", reference "
                      << mmaemu::decompose_bits(want, Format::fp32);
      }
    }
  }
  return bad;
}

const reftest::Fmt* ref_fmt(Format f) {
  if (f == Format::e4m3)
    return &reftest::kE4M3;
  if (f == Format::e5m2)
    return &reftest::kE5M2;
  return nullptr;
}

bool finite_code(const reftest::Fmt& f, std::uint8_t code) {
  bool fin = true;
  reftest::value(f, code, &fin);
  return fin;
}

bool finite_binary32(std::uint32_t bits) {
  return ((bits >> 23) & 0xFFu) != 0xFFu;
}

} // namespace

TEST(HwRefChain, TheCommittedRecordingsAreThere) {
  const auto files = committed_recordings();
  std::vector<std::string> names;
  for (const auto& f : files)
    names.push_back(f.filename().string());
  // The fourteen public sets (docs/recordings.md); more may be added, none may go missing.
  for (const char* want :
       {"Ada_E4M3.h5", "Ada_E5M2.h5", "H100_E4M3.h5", "H100_E5M2.h5", "V100_fp16.h5",
        "A100_fp16.h5", "A100_bf16.h5", "A100_tf32.h5", "Ada_fp16.h5", "Ada_bf16.h5", "Ada_tf32.h5",
        "H100_fp16.h5", "H100_bf16.h5", "H100_tf32.h5"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

TEST(HwRefChain, EveryRecordedCaseEqualsTheIndependentDerivation) {
  std::size_t checked = 0;
  for (const auto& file : committed_recordings()) {
    SCOPED_TRACE(file.filename().string());
    const mmaemu::recordings::Recording rec = mmaemu::recordings::read_recording(file);
    EXPECT_FALSE(rec.mma.empty()) << "no instruction-level set";
    for (const auto& b : rec.mma) {
      SCOPED_TRACE(b.name);
      if (b.wide()) {
        EXPECT_EQ(wide_mismatches(b), 0u) << "cases where the hardware and the derivation differ";
        checked += b.size();
        continue;
      }
      const auto params = documented_presets().find(b.preset);
      ASSERT_NE(params, documented_presets().end()) << "preset " << b.preset << " not documented";
      const reftest::Fmt* fa = ref_fmt(b.fmt_a);
      const reftest::Fmt* fb = ref_fmt(b.fmt_b);
      ASSERT_TRUE(fa && fb) << "not an FP8 pair";
      ASSERT_TRUE(b.c_policy == "zero" || b.c_policy == "from_file") << b.c_policy;
      ASSERT_EQ(b.a.size(), b.size() * b.K);
      ASSERT_EQ(b.b.size(), b.size() * b.K);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < b.size(); ++i) {
        const std::vector<std::uint8_t> a(b.a.begin() + static_cast<std::ptrdiff_t>(i * b.K),
                                          b.a.begin() + static_cast<std::ptrdiff_t>((i + 1) * b.K));
        const std::vector<std::uint8_t> bb(b.b.begin() + static_cast<std::ptrdiff_t>(i * b.K),
                                           b.b.begin() +
                                               static_cast<std::ptrdiff_t>((i + 1) * b.K));
        // The derivation covers finite inputs only; the public vectors hold no NaN or Inf.
        for (std::size_t k = 0; k < b.K; ++k) {
          ASSERT_TRUE(finite_code(*fa, a[k]) && finite_code(*fb, bb[k]))
              << b.ids[i] << ": a non-finite code at k = " << k;
        }
        // "zero": the hardware zeroed the accumulator, whatever its c file held.
        const std::uint32_t c = b.c_policy == "zero" ? 0u : b.c[i];
        if (b.c_policy == "zero") {
          ASSERT_EQ(b.c[i], 0u) << b.ids[i] << ": c must be +0 under c_policy zero";
        }
        ASSERT_TRUE(finite_binary32(c)) << b.ids[i];
        const std::uint32_t want = reftest::chain(*fa, *fb, a, bb, c, params->second);
        if (mmaemu::compare_bits(b.expect[i], want, Format::fp32) != Mismatch::none) {
          if (bad++ < 10) {
            ADD_FAILURE() << b.ids[i] << ": hardware "
                          << mmaemu::decompose_bits(b.expect[i], Format::fp32) << ", reference "
                          << mmaemu::decompose_bits(want, Format::fp32);
          }
        }
        ++checked;
      }
      EXPECT_EQ(bad, 0u) << "cases where the hardware and the derivation differ";
    }
  }
  EXPECT_GE(checked, 90000u); // the 4 FP8 sets and the 10 16-bit / tf32 ones (70,000 cases)
}
