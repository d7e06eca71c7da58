// SPDX-License-Identifier: BSD-2-Clause
// mmaemu dot --a HEX... --b HEX... [--c BITS] [--preset NAME] [--fmt-a F] [--fmt-b F]
//            [--acc fp32|fp16] [--json PATH]
// One chain on FP8 codes (2 hex digits each), fp16 / bf16 codes (4 hex digits) or tf32 values
// (the 8 hex digits of their binary32 pattern, low 13 bits zero); prints the result bits in
// the accumulator's format, their fields and the decimal value they hold.

#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "strict_numbers.hpp"

namespace mmaemu::cli {

namespace {

struct DotArgs {
  std::vector<std::string> a, b;
  std::string c = "0x00000000";
  std::string preset = "hopper";
  std::string fmt_a = "e4m3", fmt_b = "e4m3";
  std::string acc = "fp32";
  JsonOption json;
};

// The decimal value of result bits in format `f` (binary32 or fp16), the shortest form that
// reads back to the same value (a display for people: every claim is on the bits): "0.9375",
// "-0", "inf", "NaN".
std::string decimal_of(std::uint32_t bits, Format f) {
  if (f == Format::fp16 && (bits & 0x7C00u) == 0x7C00u) // Inf and NaN: no finite value
    return (bits & 0x03FFu) ? "NaN" : (bits & 0x8000u) ? "-inf" : "inf";
  // A finite fp16 value is a binary32 value: widened exactly.
  const std::uint32_t b32 =
      f == Format::fp32 ? bits
                        : encode_exact_bits(Format::fp32, decode_bits(f, bits), Overflow::infinity);
  float v;
  std::memcpy(&v, &b32, sizeof v);
  if (v != v)
    return "NaN";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Codes of format f, one hex token each: FP8 up to FF, fp16 / bf16 up to FFFF, tf32 as the 8
// hex digits of its binary32 container (low 13 bits zero).
std::vector<std::uint32_t> parse_codes(const std::vector<std::string>& toks, const char* name,
                                       Format f) {
  std::vector<std::uint32_t> out;
  const bool tf32 = f == Format::tf32;
  const unsigned long max = tf32 ? 0xFFFFFFFFul : spec(f).code_mask();
  for (const auto& t : toks) {
    // Strictly hex: std::stoul took '' as 0, and " +1f" and "-1" (wrapped) too.
    const auto parsed = parse_hex_strict(t, 8);
    const std::uint64_t v = parsed ? *parsed : 0;
    if (!parsed || v > max || (tf32 && (v & 0x1FFFu) != 0)) {
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
  args.json.check();
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
  const auto c_parsed = parse_hex_strict(args.c, 8);
  const std::uint64_t c = c_parsed ? *c_parsed : 0;
  if (!c_parsed || c > spec(*acc).code_mask()) {
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
  std::printf("%s = %s\n", decompose_bits(d, *acc).c_str(), decimal_of(d, *acc).c_str());
  char hex[16];
  std::snprintf(hex, sizeof hex, *acc == Format::fp32 ? "0x%08x" : "0x%04x", d);
  args.json.write({{"bits", hex},
                   {"fields", decompose_bits(d, *acc)},
                   {"value", decimal_of(d, *acc)},
                   {"preset", args.preset},
                   {"fmt_a", args.fmt_a},
                   {"fmt_b", args.fmt_b},
                   {"acc", args.acc},
                   {"K", args.a.size()}});
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
  args->json.add(*cmd, "write the result (bits, fields, decimal value)");
  cmd->callback([args, &exit_code] { exit_code = run_dot(*args); });
}

} // namespace mmaemu::cli
