// SPDX-License-Identifier: BSD-2-Clause
// Presets as data: the shipped values (block-fma.md), the experimental warning rules, the
// refused names, and the field checks of custom presets.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace {

using namespace mmaemu;

struct Capture {
  std::vector<Warning> seen;
  WarningSink previous;
  Capture() {
    reset_warnings_once();
    previous = set_warning_sink([this](const Warning& w) { seen.push_back(w); });
  }
  ~Capture() { set_warning_sink(previous); }
};

TEST(Preset, ShippedValuesAreTheTableOfBlockFma) {
  const Preset& ada = get_preset("ada");
  EXPECT_EQ(ada.nfma, 16);
  EXPECT_EQ(ada.frac, 13);
  EXPECT_EQ(ada.frac_out, 13);
  EXPECT_EQ(ada.rounding, BlockRounding::toward_zero);
  EXPECT_EQ(ada.min_exp, -132);
  EXPECT_FALSE(ada.late_c);
  EXPECT_EQ(ada.maturity, Maturity::validated);
  const Preset& hopper = get_preset("hopper");
  EXPECT_EQ(hopper.nfma, 32);
  EXPECT_EQ(hopper.min_exp, -133);
  EXPECT_EQ(hopper.slow_chunk.value_or(0), 128);
  const Preset& b200 = get_preset_quiet("b200_mma_sync");
  EXPECT_EQ(b200.frac_out, 23);
  EXPECT_GE(b200.frac, 31);
  EXPECT_EQ(b200.rounding, BlockRounding::nearest_even);
  EXPECT_EQ(b200.maturity, Maturity::experimental);
  EXPECT_FALSE(b200.slow_chunk.has_value());
  EXPECT_EQ(list_presets(), (std::vector<std::string>{"ada", "hopper", "b200_mma_sync"}));
}

TEST(Preset, ExperimentalPresetWarnsOncePerProcessAndTheAliasEveryTime) {
  Capture cap;
  get_preset("b200_mma_sync");
  get_preset("b200_mma_sync");
  ASSERT_EQ(cap.seen.size(), 1u);
  EXPECT_EQ(cap.seen[0].cls, WarningClass::experimental_preset);
  EXPECT_STREQ(warning_class_name(cap.seen[0].cls), "ExperimentalPresetWarning");
  const Preset& alias = get_preset("blackwell");
  get_preset("blackwell");
  EXPECT_EQ(alias.name, "b200_mma_sync");
  EXPECT_EQ(cap.seen.size(), 3u);
  get_preset("ada");
  get_preset_quiet("b200_mma_sync");
  EXPECT_EQ(cap.seen.size(), 3u); // validated presets and quiet lookups never warn
}

TEST(Preset, RefusedAndUnknownNamesRaiseValueErrorNamingThem) {
  for (const char* name : {"sm_120", "rtx_blackwell", "volta", ""}) {
    try {
      get_preset(name);
      ADD_FAILURE() << name;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + name + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Preset, CustomPresetChecksEveryFieldAndIsMaturityCustom) {
  const Preset p = make_custom_preset("mine", 8, 20, 23, BlockRounding::nearest_even, -140);
  EXPECT_EQ(p.maturity, Maturity::custom);
  struct Bad {
    int nfma, frac, frac_out, min_exp;
    const char* field;
  };
  for (const Bad& b :
       {Bad{0, 13, 13, -133, "nfma"}, Bad{257, 13, 13, -133, "nfma"}, Bad{16, -1, 13, -133, "frac"},
        Bad{16, 49, 13, -133, "frac"}, Bad{16, 13, 24, -133, "frac_out"},
        Bad{16, 13, 13, -161, "min_exp"}, Bad{16, 13, 13, 128, "min_exp"}}) {
    try {
      make_custom_preset("bad", b.nfma, b.frac, b.frac_out, BlockRounding::toward_zero, b.min_exp);
      ADD_FAILURE() << b.field;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(b.field), std::string::npos) << e.what();
    }
  }
  // The boundaries themselves are accepted.
  EXPECT_NO_THROW(make_custom_preset("edge", 256, 48, 0, BlockRounding::toward_zero, -160));
  EXPECT_NO_THROW(make_custom_preset("edge", 1, 0, 23, BlockRounding::toward_zero, 127));
}

} // namespace
