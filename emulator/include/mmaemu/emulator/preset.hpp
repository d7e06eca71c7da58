// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A Preset is the tensor-core arithmetic of one instruction family, as data
// (block-fma.md). Shipped: the FP8 presets ada, hopper (validated), b200_mma_sync
// (experimental), and the 16-bit and tf32 presets <arch>_<fmt> (block-fma.md, "The same block
// for fp16, bf16 and tf32 inputs"; docs/semantics.md): volta_fp16, ampere_{fp16,bf16,tf32},
// ada_{fp16,bf16,tf32}, hopper_{fp16,bf16,tf32} (validated on the public wmma sets).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/specialize.hpp"

namespace mmaemu {

// How a block result is rounded to frac_out fraction bits.
enum class BlockRounding { toward_zero, nearest_even };

enum class Maturity { validated, experimental, custom };

// The operand formats of an instruction family: FP8 (e4m3 and e5m2, mixed pairs too), or one
// 16-bit or tf32 format for both operands (the HMMA-class instructions).
enum class PresetInputs : std::uint8_t { fp8, fp16, bf16, tf32 };

// What an fp16 accumulator (mma ... .f16 C and D) does with a block. `none`: the family has
// only fp32 accumulators. Otherwise c is an fp16 value that enters the block like an fp32 c,
// the block is aligned and summed as for an fp32 accumulator, and its result is rounded to
// nearest even into fp16 (overflow to Inf):
//   block_then_nearest: from the binary32 block result (frac_out bits, the preset's rounding);
//   sum_to_nearest:     from the exact block sum, once.
// The public sets cannot tell the two apart (docs/semantics.md).
enum class HalfOutput : std::uint8_t { none, block_then_nearest, sum_to_nearest };

const char* maturity_name(Maturity m);
const char* block_rounding_name(BlockRounding r);
const char* preset_inputs_name(PresetInputs i);
const char* half_output_name(HalfOutput h);

struct Preset {
  std::string name;
  int nfma = 16;                          // terms per block
  int frac = specialize::kFp8Frac;        // fraction bits kept for terms (alignment), <= kMaxFrac
  int frac_out = specialize::kFp8FracOut; // fraction bits of a block result, <= 23
  BlockRounding rounding = BlockRounding::toward_zero;
  int min_exp = -132;            // lower bound of the block's alignment exponent E
  bool late_c = false;           // c added after the product sum instead of inside the alignment
  std::optional<int> slow_chunk; // slow accumulation chunk (elements); none: raises
  PresetInputs inputs = PresetInputs::fp8;
  HalfOutput half_out = HalfOutput::none;
  Maturity maturity = Maturity::custom;
  std::string validated_scope;
  std::string evidence;

  static constexpr int kMaxFrac = specialize::kMaxFrac; // the integer core's exact range
  static constexpr int kMaxNfma = specialize::kMaxNfma;
};

// Throws ValueError naming the first field out of range (half_out needs fp16 inputs).
void validate_preset(const Preset& p);

// Whether the preset takes operands of formats a and b: e4m3/e5m2 for an FP8 preset, else both
// of the preset's one format.
bool preset_takes(const Preset& p, Format a, Format b);

// Throws ValueError naming `who`, the preset and the formats when preset_takes is false.
void check_preset_takes(const Preset& p, Format a, Format b, const std::string& who);

// A shipped preset by name ("ada", "hopper", "b200_mma_sync" or its alias "blackwell", or a
// 16-bit / tf32 one such as "ada_bf16").
// Warns (ExperimentalPresetWarning) once per process for an experimental preset, and every
// time for the alias. Refuses "sm_120" and "rtx_blackwell" and unknown names (ValueError).
const Preset& get_preset(std::string_view name);

// The same without any warning (listing, documentation).
const Preset& get_preset_quiet(std::string_view name);

// The names of the shipped presets (aliases excluded).
std::vector<std::string> list_presets();

// A user-built preset: the given fields, maturity custom; validated.
Preset make_custom_preset(std::string name, int nfma, int frac, int frac_out,
                          BlockRounding rounding, int min_exp, bool late_c = false,
                          std::optional<int> slow_chunk = std::nullopt,
                          PresetInputs inputs = PresetInputs::fp8,
                          HalfOutput half_out = HalfOutput::none);

} // namespace mmaemu
