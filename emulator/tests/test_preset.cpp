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
  EXPECT_EQ(list_presets(),
            (std::vector<std::string>{"ada", "hopper", "b200_mma_sync", "volta_fp16", "ampere_fp16",
                                      "ampere_bf16", "ampere_tf32", "ada_fp16", "ada_bf16",
                                      "ada_tf32", "hopper_fp16", "hopper_bf16", "hopper_tf32"}));
  for (const char* fp8 : {"ada", "hopper", "b200_mma_sync"}) {
    EXPECT_EQ(get_preset_quiet(fp8).inputs, PresetInputs::fp8) << fp8;
    EXPECT_EQ(get_preset_quiet(fp8).half_out, HalfOutput::none) << fp8;
  }
}

// The 16-bit and tf32 presets, typed from block-fma.md ("The same block for fp16, bf16 and
// tf32 inputs") and docs/semantics.md: nfma, frac = 23 + extra alignment bits, frac_out 23
// toward zero, min_exp, the fp16 accumulator.
TEST(Preset, HmmaPresetsAreTheTableOfBlockFma) {
  struct Want {
    const char* name;
    PresetInputs inputs;
    int nfma, frac, min_exp;
    HalfOutput half;
  };
  const HalfOutput none = HalfOutput::none, rne = HalfOutput::sum_to_nearest;
  for (const Want& w : {Want{"volta_fp16", PresetInputs::fp16, 4, 23, -160, rne},
                        Want{"ampere_fp16", PresetInputs::fp16, 8, 24, -160, rne},
                        Want{"ampere_bf16", PresetInputs::bf16, 8, 24, -160, none},
                        Want{"ampere_tf32", PresetInputs::tf32, 4, 24, -160, none},
                        Want{"ada_fp16", PresetInputs::fp16, 8, 24, -160, rne},
                        Want{"ada_bf16", PresetInputs::bf16, 8, 24, -160, none},
                        Want{"ada_tf32", PresetInputs::tf32, 4, 24, -160, none},
                        Want{"hopper_fp16", PresetInputs::fp16, 16, 25, -133, rne},
                        Want{"hopper_bf16", PresetInputs::bf16, 16, 25, -133, none},
                        Want{"hopper_tf32", PresetInputs::tf32, 8, 25, -133, none}}) {
    const Preset& p = get_preset(w.name); // validated: no warning
    EXPECT_EQ(p.name, w.name);
    EXPECT_EQ(p.inputs, w.inputs) << w.name;
    EXPECT_EQ(p.nfma, w.nfma) << w.name;
    EXPECT_EQ(p.frac, w.frac) << w.name;
    EXPECT_EQ(p.frac_out, 23) << w.name;
    EXPECT_EQ(p.rounding, BlockRounding::toward_zero) << w.name;
    EXPECT_EQ(p.min_exp, w.min_exp) << w.name;
    EXPECT_FALSE(p.late_c) << w.name;
    EXPECT_EQ(p.half_out, w.half) << w.name;
    EXPECT_FALSE(p.slow_chunk.has_value()) << w.name;
    EXPECT_EQ(p.maturity, Maturity::validated) << w.name;
    EXPECT_NO_THROW(validate_preset(p)) << w.name;
  }
}

TEST(Preset, EachPresetTakesOnlyItsOperandFormats) {
  EXPECT_TRUE(preset_takes(get_preset_quiet("ada"), Format::e4m3, Format::e5m2));
  EXPECT_FALSE(preset_takes(get_preset_quiet("ada"), Format::fp16, Format::fp16));
  EXPECT_TRUE(preset_takes(get_preset_quiet("ada_fp16"), Format::fp16, Format::fp16));
  EXPECT_FALSE(preset_takes(get_preset_quiet("ada_fp16"), Format::bf16, Format::bf16));
  EXPECT_FALSE(preset_takes(get_preset_quiet("ada_fp16"), Format::fp16, Format::bf16));
  EXPECT_FALSE(preset_takes(get_preset_quiet("ada_fp16"), Format::e4m3, Format::e4m3));
  EXPECT_TRUE(preset_takes(get_preset_quiet("hopper_tf32"), Format::tf32, Format::tf32));
  EXPECT_FALSE(preset_takes(get_preset_quiet("hopper_tf32"), Format::fp32, Format::fp32));
  try {
    check_preset_takes(get_preset_quiet("ampere_bf16"), Format::fp16, Format::fp16, "here");
    ADD_FAILURE() << "not refused";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "here: preset 'ampere_bf16' takes bf16 x bf16 operands, got fp16 x fp16");
  }
}

TEST(Preset, AnFp16AccumulatorNeedsFp16Inputs) {
  EXPECT_THROW(make_custom_preset("x", 8, 24, 23, BlockRounding::toward_zero, -160, false,
                                  std::nullopt, PresetInputs::bf16, HalfOutput::sum_to_nearest),
               ValueError);
  EXPECT_NO_THROW(make_custom_preset("x", 8, 24, 23, BlockRounding::toward_zero, -160, false,
                                     std::nullopt, PresetInputs::fp16,
                                     HalfOutput::block_then_nearest));
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
