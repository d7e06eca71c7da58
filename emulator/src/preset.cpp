// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/preset.hpp"

#include <array>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace mmaemu {

namespace {

std::array<Preset, 3> make_shipped() {
  Preset ada;
  ada.name = "ada";
  ada.nfma = 16;
  ada.frac = 13;
  ada.frac_out = 13;
  ada.rounding = BlockRounding::toward_zero;
  ada.min_exp = -132;
  ada.slow_chunk = 128;
  ada.maturity = Maturity::validated;
  ada.validated_scope = "mma.sync m16n8k32 FP8 (E4M3, E5M2, mixed), sm_89";
  ada.evidence =
      "truth-public Ada E4M3 and E5M2 (RTX 1000 Ada), 5000/5000 bit-exact each; block-fma.md";

  Preset hopper;
  hopper.name = "hopper";
  hopper.nfma = 32;
  hopper.frac = 13;
  hopper.frac_out = 13;
  hopper.rounding = BlockRounding::toward_zero;
  hopper.min_exp = -133;
  hopper.slow_chunk = 128;
  hopper.maturity = Maturity::validated;
  hopper.validated_scope = "wgmma FP8 (E4M3, E5M2, mixed), sm_90";
  hopper.evidence = "truth-public H100 E4M3 and E5M2, 5000/5000 bit-exact each; block-fma.md";

  Preset b200;
  b200.name = "b200_mma_sync";
  b200.nfma = 32;
  b200.frac = 31; // >= 31 reproduces the public data; 31 is the least such value
  b200.frac_out = 23;
  b200.rounding = BlockRounding::nearest_even;
  b200.min_exp = -133;
  b200.slow_chunk = std::nullopt; // no characterised GEMM level
  b200.maturity = Maturity::experimental;
  b200.validated_scope = "none (experimental)";
  b200.evidence =
      "public B200 mma.sync.m16n8k32 vectors: 9,999 of 10,000 reproduced, one E5M2 case "
      "unexplained (block-fma.md)";
  return {ada, hopper, b200};
}

const std::array<Preset, 3>& shipped() {
  static const std::array<Preset, 3> s = make_shipped();
  return s;
}

const Preset* find(std::string_view name, bool& alias) {
  alias = false;
  if (name == "blackwell") {
    alias = true;
    name = "b200_mma_sync";
  }
  for (const auto& p : shipped()) {
    if (p.name == name)
      return &p;
  }
  return nullptr;
}

const Preset& lookup(std::string_view name, bool& alias) {
  if (name == "sm_120" || name == "rtx_blackwell") {
    throw ValueError("preset '" + std::string(name) +
                     "' is refused: consumer Blackwell (sm_120) tensor cores are not "
                     "characterised; b200_mma_sync models B200 mma.sync only");
  }
  const Preset* p = find(name, alias);
  if (!p) {
    std::string known;
    for (const auto& s : shipped())
      known += (known.empty() ? "" : ", ") + s.name;
    throw ValueError("unknown preset '" + std::string(name) + "' (known: " + known +
                     ", alias blackwell)");
  }
  return *p;
}

} // namespace

const char* maturity_name(Maturity m) {
  switch (m) {
  case Maturity::validated:
    return "validated";
  case Maturity::experimental:
    return "experimental";
  case Maturity::custom:
    return "custom";
  }
  return "?";
}

const char* block_rounding_name(BlockRounding r) {
  return r == BlockRounding::toward_zero ? "toward_zero" : "nearest_even";
}

void validate_preset(const Preset& p) {
  auto bad = [&](const std::string& field, long v, const std::string& why) {
    throw ValueError("preset '" + p.name + "': " + field + " = " + std::to_string(v) + " " + why);
  };
  if (p.nfma < 1 || p.nfma > Preset::kMaxNfma)
    bad("nfma", p.nfma, "must be in [1, 256]");
  if (p.frac < 0 || p.frac > Preset::kMaxFrac)
    bad("frac", p.frac, "must be in [0, 48]");
  if (p.frac_out < 0 || p.frac_out > 23)
    bad("frac_out", p.frac_out, "must be in [0, 23]");
  if (p.min_exp < -160 || p.min_exp > 127)
    bad("min_exp", p.min_exp, "must be in [-160, 127]");
  if (p.slow_chunk && (*p.slow_chunk < 1))
    bad("slow_chunk", *p.slow_chunk, "must be >= 1");
}

const Preset& get_preset(std::string_view name) {
  bool alias = false;
  const Preset& p = lookup(name, alias);
  if (p.maturity == Maturity::experimental) {
    const std::string msg = "preset '" + p.name + "' is experimental: " + p.evidence;
    if (alias) {
      warn_always(WarningClass::experimental_preset, "preset:" + p.name,
                  "'blackwell' is an alias of " + msg);
    } else {
      warn_once(WarningClass::experimental_preset, "preset:" + p.name, msg);
    }
  }
  return p;
}

const Preset& get_preset_quiet(std::string_view name) {
  bool alias = false;
  return lookup(name, alias);
}

std::vector<std::string> list_presets() {
  std::vector<std::string> out;
  for (const auto& p : shipped())
    out.push_back(p.name);
  return out;
}

Preset make_custom_preset(std::string name, int nfma, int frac, int frac_out,
                          BlockRounding rounding, int min_exp, bool late_c,
                          std::optional<int> slow_chunk) {
  Preset p;
  p.name = std::move(name);
  p.nfma = nfma;
  p.frac = frac;
  p.frac_out = frac_out;
  p.rounding = rounding;
  p.min_exp = min_exp;
  p.late_c = late_c;
  p.slow_chunk = slow_chunk;
  p.maturity = Maturity::custom;
  p.validated_scope = "none (custom)";
  p.evidence = "built by the user";
  validate_preset(p);
  return p;
}

} // namespace mmaemu
