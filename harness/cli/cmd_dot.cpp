// SPDX-License-Identifier: BSD-2-Clause
// mmaemu dot --a HEX... --b HEX... [--c BITS] [--preset NAME] [--fmt-a e4m3] [--fmt-b e4m3]
//            [--json PATH]
// One chain on FP8 codes (2 hex digits each); prints the binary32 result bits, their fields
// and the decimal value they hold.

#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct DotArgs {
  std::vector<std::string> a, b;
  std::string c = "0x00000000";
  std::string preset = "hopper";
  std::string fmt_a = "e4m3", fmt_b = "e4m3";
  JsonOption json;
};

// The decimal value of binary32 bits, shortest form that reads back to the same bits (a
// display for people: every claim is on the bits): "0.9375", "-0", "inf", "NaN".
std::string decimal_of(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  if (f != f)
    return "NaN";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

std::vector<std::uint8_t> parse_codes(const std::vector<std::string>& toks, const char* name) {
  std::vector<std::uint8_t> out;
  for (const auto& t : toks) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(t, &used, 16);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || v > 0xFF) {
      throw ValueError(std::string("--") + name + ": '" + support::printable(t) +
                       "' is not an FP8 code (2 hex digits)");
    }
    out.push_back(static_cast<std::uint8_t>(v));
  }
  return out;
}

int run_dot(const DotArgs& args) {
  args.json.check();
  const auto fa = parse_format(args.fmt_a);
  const auto fb = parse_format(args.fmt_b);
  if (!fa || !is_fp8(*fa)) {
    throw ValueError("--fmt-a: '" + support::printable(args.fmt_a) + "' is not e4m3 or e5m2");
  }
  if (!fb || !is_fp8(*fb)) {
    throw ValueError("--fmt-b: '" + support::printable(args.fmt_b) + "' is not e4m3 or e5m2");
  }
  std::size_t used = 0;
  unsigned long c = 0;
  try {
    c = std::stoul(args.c, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != args.c.size() || c > 0xFFFFFFFFul) {
    throw ValueError("--c: '" + support::printable(args.c) +
                     "' is not a binary32 bit pattern in hex");
  }
  const auto a = parse_codes(args.a, "a");
  const auto b = parse_codes(args.b, "b");
  const std::uint32_t d =
      model::dot(a, b, static_cast<std::uint32_t>(c), get_preset(args.preset), {*fa, *fb});
  std::printf("%s = %s\n", decompose_bits(d, Format::fp32).c_str(), decimal_of(d).c_str());
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", d);
  args.json.write({{"bits", hex},
                   {"fields", decompose_bits(d, Format::fp32)},
                   {"value", decimal_of(d)},
                   {"preset", args.preset},
                   {"fmt_a", args.fmt_a},
                   {"fmt_b", args.fmt_b},
                   {"K", a.size()}});
  return kOk;
}

} // namespace

void add_dot(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DotArgs>();
  CLI::App* cmd = app.add_subcommand("dot", "One block-FMA chain on FP8 codes");
  cmd->add_option("--a", args->a, "Codes of a (hex)")->required();
  cmd->add_option("--b", args->b, "Codes of b (hex)")->required();
  cmd->add_option("--c", args->c, "Accumulator input, binary32 bits in hex")->capture_default_str();
  cmd->add_option("--preset", args->preset, "Preset name")->capture_default_str();
  cmd->add_option("--fmt-a", args->fmt_a, "e4m3 or e5m2")->capture_default_str();
  cmd->add_option("--fmt-b", args->fmt_b, "e4m3 or e5m2")->capture_default_str();
  args->json.add(*cmd, "write the result (bits, fields, decimal value)");
  cmd->callback([args, &exit_code] { exit_code = run_dot(*args); });
}

} // namespace mmaemu::cli
