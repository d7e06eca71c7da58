// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A Preset is the tensor-core arithmetic of one instruction family, as data
// (block-fma.md). Shipped: ada, hopper (validated), b200_mma_sync (experimental).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu {

// How a block result is rounded to frac_out fraction bits.
enum class BlockRounding { toward_zero, nearest_even };

enum class Maturity { validated, experimental, custom };

const char* maturity_name(Maturity m);
const char* block_rounding_name(BlockRounding r);

struct Preset {
  std::string name;
  int nfma = 16;     // terms per block
  int frac = 13;     // fraction bits kept for terms (alignment truncation), <= kMaxFrac
  int frac_out = 13; // fraction bits of a block result, <= 23
  BlockRounding rounding = BlockRounding::toward_zero;
  int min_exp = -132;            // lower bound of the block's alignment exponent E
  bool late_c = false;           // c added after the product sum instead of inside the alignment
  std::optional<int> slow_chunk; // slow accumulation chunk (elements); none: raises
  Maturity maturity = Maturity::custom;
  std::string validated_scope;
  std::string evidence;

  static constexpr int kMaxFrac = 48; // the integer core's exact range
  static constexpr int kMaxNfma = 256;
};

// Throws ValueError naming the first field out of range.
void validate_preset(const Preset& p);

// A shipped preset by name ("ada", "hopper", "b200_mma_sync" or its alias "blackwell").
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
                          std::optional<int> slow_chunk = std::nullopt);

} // namespace mmaemu
