// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/preset.hpp"

#include <utility>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace mmaemu {

namespace {

// The 16-bit and tf32 presets (block-fma.md, "The same block for fp16, bf16 and tf32
// inputs"): one block of nfma exact products and c, truncated to frac = 23 + extra alignment
// bits below the largest exponent, summed exactly and truncated to a binary32 (frac_out = 23).
// Each is checked bit for bit against its public wmma set (docs/semantics.md says which
// field a set pins and which it cannot see).
// The fields they share; each preset sets nfma and frac (and half_out) on lines of its own.
Preset hmma_preset(std::string name, PresetInputs inputs, int min_exp, std::string scope,
                   std::string evidence) {
  Preset p;
  p.name = std::move(name);
  p.inputs = inputs;
  p.frac_out = 23;
  p.rounding = BlockRounding::toward_zero;
  p.min_exp = min_exp;
  p.slow_chunk = std::nullopt; // no GEMM level is characterised for these inputs
  p.maturity = Maturity::validated;
  p.validated_scope = std::move(scope);
  p.evidence = std::move(evidence);
  return p;
}

std::vector<Preset> make_shipped() {
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

  // min_exp of the 16-bit and tf32 presets is not seen by the public sets (their block
  // exponents are -4 and above): -160 (the lowest a preset holds: no bound in the upstream
  // Volta/Ampere/Ada models) and -133 for Hopper (the upstream H100 model's limit).
  Preset volta_fp16 = hmma_preset(
      "volta_fp16", PresetInputs::fp16, -160,
      "wmma m16n16k16 fp16 (4 products) from c, fp32 and fp16 accumulators, sm_70 (V100)",
      "truth-public V100 fp16: 5000/5000 fp32 and 5000/5000 fp16 outputs bit-exact");
  volta_fp16.nfma = 4;
  volta_fp16.frac = 23;
  volta_fp16.half_out = HalfOutput::sum_to_nearest;

  Preset ampere_fp16 = hmma_preset(
      "ampere_fp16", PresetInputs::fp16, -160,
      "wmma m16n16k16 fp16 (8 products) from c, fp32 and fp16 accumulators, sm_80 (A100)",
      "truth-public A100 fp16: 5000/5000 fp32 and 5000/5000 fp16 outputs bit-exact");
  ampere_fp16.nfma = 8;
  ampere_fp16.frac = 24;
  ampere_fp16.half_out = HalfOutput::sum_to_nearest;

  Preset ampere_bf16 =
      hmma_preset("ampere_bf16", PresetInputs::bf16, -160,
                  "wmma m16n16k16 bf16 (8 products) from c, fp32 accumulators, sm_80 (A100)",
                  "truth-public A100 bf16: 5000/5000 bit-exact");
  ampere_bf16.nfma = 8;
  ampere_bf16.frac = 24;

  Preset ampere_tf32 =
      hmma_preset("ampere_tf32", PresetInputs::tf32, -160,
                  "wmma m16n16k8 tf32 (4 products) from c, fp32 accumulators, sm_80 (A100)",
                  "truth-public A100 tf32: 5000/5000 bit-exact");
  ampere_tf32.nfma = 4;
  ampere_tf32.frac = 24;

  Preset ada_fp16 = hmma_preset("ada_fp16", PresetInputs::fp16, -160,
                                "wmma m16n16k16 fp16 (8 products) from c, fp32 and fp16 "
                                "accumulators, sm_89 (RTX 1000 Ada)",
                                "truth-public Ada fp16: 5000/5000 fp32 and 5000/5000 fp16 "
                                "outputs bit-exact");
  ada_fp16.nfma = 8;
  ada_fp16.frac = 24;
  ada_fp16.half_out = HalfOutput::sum_to_nearest;

  Preset ada_bf16 = hmma_preset(
      "ada_bf16", PresetInputs::bf16, -160,
      "wmma m16n16k16 bf16 (8 products) from c, fp32 accumulators, sm_89 (RTX 1000 Ada)",
      "truth-public Ada bf16: 5000/5000 bit-exact");
  ada_bf16.nfma = 8;
  ada_bf16.frac = 24;

  Preset ada_tf32 =
      hmma_preset("ada_tf32", PresetInputs::tf32, -160,
                  "wmma m16n16k8 tf32 (4 products) from c, fp32 accumulators, sm_89 (RTX 1000 Ada)",
                  "truth-public Ada tf32: 5000/5000 bit-exact");
  ada_tf32.nfma = 4;
  ada_tf32.frac = 24;

  Preset hopper_fp16 = hmma_preset(
      "hopper_fp16", PresetInputs::fp16, -133,
      "wmma m16n16k16 fp16 (16 products) from c, fp32 and fp16 accumulators, sm_90 (H100; "
      "the legacy mma.sync path, not wgmma)",
      "truth-public H100 fp16: 5000/5000 fp32 and 5000/5000 fp16 outputs bit-exact");
  hopper_fp16.nfma = 16;
  hopper_fp16.frac = 25;
  hopper_fp16.half_out = HalfOutput::sum_to_nearest;

  Preset hopper_bf16 =
      hmma_preset("hopper_bf16", PresetInputs::bf16, -133,
                  "wmma m16n16k16 bf16 (16 products) from c, fp32 accumulators, sm_90 (H100; "
                  "the legacy mma.sync path, not wgmma)",
                  "truth-public H100 bf16: 5000/5000 bit-exact");
  hopper_bf16.nfma = 16;
  hopper_bf16.frac = 25;

  // nfma 8 is the upstream H100 model's; the 4-product lines show only nfma >= 4.
  Preset hopper_tf32 =
      hmma_preset("hopper_tf32", PresetInputs::tf32, -133,
                  "wmma m16n16k8 tf32 (4 products) from c, fp32 accumulators, sm_90 (H100; "
                  "the legacy mma.sync path, not wgmma)",
                  "truth-public H100 tf32: 5000/5000 bit-exact (a block of 4 products: "
                  "nfma = 8 is the upstream model's)");
  hopper_tf32.nfma = 8;
  hopper_tf32.frac = 25;

  return {ada,      hopper,   b200,     volta_fp16,  ampere_fp16, ampere_bf16, ampere_tf32,
          ada_fp16, ada_bf16, ada_tf32, hopper_fp16, hopper_bf16, hopper_tf32};
}

const std::vector<Preset>& shipped() {
  static const std::vector<Preset> s = make_shipped();
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

const char* preset_inputs_name(PresetInputs i) {
  switch (i) {
  case PresetInputs::fp8:
    return "fp8";
  case PresetInputs::fp16:
    return "fp16";
  case PresetInputs::bf16:
    return "bf16";
  case PresetInputs::tf32:
    return "tf32";
  }
  return "?";
}

const char* half_output_name(HalfOutput h) {
  switch (h) {
  case HalfOutput::none:
    return "none";
  case HalfOutput::block_then_nearest:
    return "block_then_nearest";
  case HalfOutput::sum_to_nearest:
    return "sum_to_nearest";
  }
  return "?";
}

bool preset_takes(const Preset& p, Format a, Format b) {
  switch (p.inputs) {
  case PresetInputs::fp8:
    return is_fp8(a) && is_fp8(b);
  case PresetInputs::fp16:
    return a == Format::fp16 && b == Format::fp16;
  case PresetInputs::bf16:
    return a == Format::bf16 && b == Format::bf16;
  case PresetInputs::tf32:
    return a == Format::tf32 && b == Format::tf32;
  }
  return false;
}

void check_preset_takes(const Preset& p, Format a, Format b, const std::string& who) {
  if (preset_takes(p, a, b))
    return;
  const std::string takes = p.inputs == PresetInputs::fp8
                                ? std::string("e4m3 or e5m2 operands")
                                : std::string(preset_inputs_name(p.inputs)) + " x " +
                                      preset_inputs_name(p.inputs) + " operands";
  throw ValueError(who + ": preset '" + p.name + "' takes " + takes + ", got " + format_name(a) +
                   " x " + format_name(b));
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
  if (p.half_out != HalfOutput::none && p.inputs != PresetInputs::fp16) {
    throw ValueError("preset '" + p.name + "': half_out = " + half_output_name(p.half_out) +
                     " needs fp16 inputs (inputs = " + preset_inputs_name(p.inputs) + ")");
  }
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
                          std::optional<int> slow_chunk, PresetInputs inputs, HalfOutput half_out) {
  Preset p;
  p.name = std::move(name);
  p.nfma = nfma;
  p.frac = frac;
  p.frac_out = frac_out;
  p.rounding = rounding;
  p.min_exp = min_exp;
  p.late_c = late_c;
  p.slow_chunk = slow_chunk;
  p.inputs = inputs;
  p.half_out = half_out;
  p.maturity = Maturity::custom;
  p.validated_scope = "none (custom)";
  p.evidence = "built by the user";
  validate_preset(p);
  return p;
}

} // namespace mmaemu
