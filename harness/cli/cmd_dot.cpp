// SPDX-License-Identifier: BSD-2-Clause
// mmaemu dot --a HEX... --b HEX... [--c BITS] [--preset NAME] [--fmt-a F] [--fmt-b F]
//            [--acc fp32|fp16]
// One chain on FP8 codes (2 hex digits each), fp16 / bf16 codes (4 hex digits) or tf32 values
// (the 8 hex digits of their binary32 pattern, low 13 bits zero); prints the result bits in
// the accumulator's format.

#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::cli {

namespace {

struct DotArgs {
  std::vector<std::string> a, b;
  std::string c = "0x00000000";
  std::string preset = "hopper";
  std::string fmt_a = "e4m3", fmt_b = "e4m3";
  std::string acc = "fp32";
};

// Codes of format f, one hex token each: FP8 up to FF, fp16 / bf16 up to FFFF, tf32 as the 8
// hex digits of its binary32 container (low 13 bits zero).
std::vector<std::uint32_t> parse_codes(const std::vector<std::string>& toks, const char* name,
                                       Format f) {
  std::vector<std::uint32_t> out;
  const bool tf32 = f == Format::tf32;
  const unsigned long max = tf32 ? 0xFFFFFFFFul : spec(f).code_mask();
  for (const auto& t : toks) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(t, &used, 16);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || v > max || (tf32 && (v & 0x1FFFu) != 0)) {
      const std::string what =
          tf32 ? "a tf32 value (8 hex digits of its binary32 pattern, the low 13 bits zero)"
               : std::string("an ") + format_name(f) + " code (" +
                     std::to_string(spec(f).width / 4) + " hex digits)";
      throw ValueError(std::string("--") + name + ": '" + support::printable(t) + "' is not " +
                       what);
    }
    out.push_back(tf32 ? tf32_code_of_container(static_cast<std::uint32_t>(v))
                       : static_cast<std::uint32_t>(v));
  }
  return out;
}

int run_dot(const DotArgs& args) {
  const auto fa = parse_format(args.fmt_a);
  const auto fb = parse_format(args.fmt_b);
  const char* known = "' is not e4m3, e5m2, fp16, bf16 or tf32";
  if (!fa || !(is_fp8(*fa) || is_hmma_input(*fa)))
    throw ValueError("--fmt-a: '" + support::printable(args.fmt_a) + known);
  if (!fb || !(is_fp8(*fb) || is_hmma_input(*fb)))
    throw ValueError("--fmt-b: '" + support::printable(args.fmt_b) + known);
  const auto acc = parse_format(args.acc);
  if (!acc || (*acc != Format::fp32 && *acc != Format::fp16))
    throw ValueError("--acc: '" + support::printable(args.acc) + "' is not fp32 or fp16");
  std::size_t used = 0;
  unsigned long c = 0;
  try {
    c = std::stoul(args.c, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != args.c.size() || c > spec(*acc).code_mask()) {
    throw ValueError("--c: '" + support::printable(args.c) + "' is not " +
                     (*acc == Format::fp16 ? "an fp16 code" : "a binary32 bit pattern") +
                     " in hex");
  }
  const Preset& preset = get_preset(args.preset);
  std::uint32_t d = 0;
  if (is_fp8(*fa) && is_fp8(*fb)) {
    if (*acc != Format::fp32)
      throw ValueError("--acc: FP8 chains have an fp32 accumulator here");
    const auto a32 = parse_codes(args.a, "a", *fa);
    const auto b32 = parse_codes(args.b, "b", *fb);
    const std::vector<std::uint8_t> a(a32.begin(), a32.end()), b(b32.begin(), b32.end());
    d = model::dot(a, b, static_cast<std::uint32_t>(c), preset, {*fa, *fb});
  } else {
    const auto a = parse_codes(args.a, "a", *fa);
    const auto b = parse_codes(args.b, "b", *fb);
    d = model::dot_codes(a, b, static_cast<std::uint32_t>(c), preset, {*fa, *fb}, *acc);
  }
  std::printf("%s\n", decompose_bits(d, *acc).c_str());
  return kOk;
}

} // namespace

void add_dot(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DotArgs>();
  CLI::App* cmd = app.add_subcommand("dot", "One block-FMA chain on FP8, fp16, bf16 or tf32 codes");
  cmd->add_option("--a", args->a, "Codes of a (hex; tf32: binary32 patterns)")->required();
  cmd->add_option("--b", args->b, "Codes of b (hex; tf32: binary32 patterns)")->required();
  cmd->add_option("--c", args->c, "Accumulator input in hex (binary32 bits, or an fp16 code)")
      ->capture_default_str();
  cmd->add_option("--preset", args->preset, "Preset name")->capture_default_str();
  cmd->add_option("--fmt-a", args->fmt_a, "e4m3, e5m2, fp16, bf16 or tf32")->capture_default_str();
  cmd->add_option("--fmt-b", args->fmt_b, "e4m3, e5m2, fp16, bf16 or tf32")->capture_default_str();
  cmd->add_option("--acc", args->acc, "Accumulator: fp32, or fp16 (fp16 presets)")
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_dot(*args); });
}

} // namespace mmaemu::cli
