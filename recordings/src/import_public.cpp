// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/recordings/import_public.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <string_view>
#include <utility>
#include <vector>

#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::recordings {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A file's text split into lines: '\n' ends a line, trailing '\r', spaces and tabs are
// dropped, and so are blank lines at the end.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    lines.push_back(line);
    pos = end + 1;
  }
  while (!lines.empty() && lines.back().empty())
    lines.pop_back();
  return lines;
}

std::string name_of(const fs::path& p) {
  return support::printable(p.string(), 256);
}

std::string where(const fs::path& p, std::size_t line) {
  return name_of(p) + ":" + std::to_string(line + 1);
}

bool parse_hex32(std::string_view tok, std::uint32_t& out) {
  if (tok.size() != 8)
    return false;
  std::uint32_t v = 0;
  for (char ch : tok) {
    int d;
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F')
      d = ch - 'A' + 10;
    else
      return false;
    v = (v << 4) | static_cast<std::uint32_t>(d);
  }
  out = v;
  return true;
}

bool is_blank(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

// One operand file: n lines of K binary32 hex tokens that must be exact values of `fmt`.
std::vector<std::uint8_t> read_operands(const fs::path& p, std::string_view text, Format fmt,
                                        std::uint32_t K, std::size_t& lines_out) {
  const auto lines = split_lines(text);
  std::vector<std::uint8_t> codes;
  codes.reserve(std::min<std::size_t>(lines.size(), text.size() / 9 + 1) * K);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    std::uint32_t count = 0;
    std::size_t pos = 0;
    for (;;) {
      while (pos < line.size() && is_blank(line[pos]))
        ++pos;
      if (pos == line.size())
        break;
      std::size_t end = pos;
      while (end < line.size() && !is_blank(line[end]))
        ++end;
      const std::string_view tok = line.substr(pos, end - pos);
      pos = end;
      std::uint32_t bits;
      if (!parse_hex32(tok, bits)) {
        throw ImportError(where(p, i) + ": token " + std::to_string(count + 1) + " '" +
                          support::printable(tok) +
                          "' is not 8 hex digits (a binary32 bit pattern)");
      }
      if (count == K) {
        throw ImportError(where(p, i) + ": more than K = " + std::to_string(K) + " values");
      }
      const std::uint32_t code = encode_binary32_bits(fmt, bits, Overflow::infinity);
      const bool is_nan = ((bits >> 23) & 0xFFu) == 0xFFu && (bits & 0x7FFFFFu) != 0;
      // The code must give back the very same binary32 bits (NaN: any NaN is taken).
      const Exact x = decode_bits(fmt, code);
      std::uint32_t round_trip = 0;
      if (x.cls != ValueClass::nan) {
        round_trip = encode_exact_bits(Format::fp32, x, Overflow::infinity);
      }
      if (!is_nan && (x.cls == ValueClass::nan || round_trip != bits)) {
        throw ImportError(where(p, i) + ": token " + std::to_string(count + 1) + " '" +
                          support::printable(tok) + "' is not a " + spec(fmt).torch_name +
                          " value");
      }
      codes.push_back(static_cast<std::uint8_t>(code));
      ++count;
    }
    if (count != K) {
      throw ImportError(where(p, i) + ": " + std::to_string(count) +
                        " values, expected K = " + std::to_string(K));
    }
  }
  lines_out = lines.size();
  return codes;
}

// One binary32 file: a line of 32 '0'/'1' characters per dot product.
std::vector<std::uint32_t> read_binary_strings(const fs::path& p, std::string_view text) {
  const auto lines = split_lines(text);
  std::vector<std::uint32_t> out;
  out.reserve(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view s = lines[i];
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
      s.remove_prefix(1);
    if (s.size() != 32 || s.find_first_not_of("01") != std::string_view::npos) {
      throw ImportError(where(p, i) +
                        ": expected 32 '0'/'1' characters (a binary32 bit pattern), got '" +
                        support::printable(s, 40) + "'");
    }
    std::uint32_t v = 0;
    for (char ch : s)
      v = (v << 1) | static_cast<std::uint32_t>(ch - '0');
    out.push_back(v);
  }
  return out;
}

std::string read_text(const fs::path& p) {
  try {
    return support::read_input_file(p, support::kMaxTextBytes, "set file");
  } catch (const support::FileError& e) {
    throw ImportError(e.what());
  }
}

struct SetFiles {
  std::string gpu;
  Format fmt_a, fmt_b;
  fs::path a, b, c, d;
};

SetFiles find_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ImportError(name_of(dir) + ": no such folder");
  static const std::regex op_re(R"(^([ab])_(.+)_(E4M3|E5M2)\.txt$)", std::regex::icase);
  SetFiles s;
  bool have_a = false, have_b = false;
  std::string gpu_b;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, op_re))
      continue;
    const auto fmt = parse_format(m[3].str());
    const bool is_a = lower(m[1].str()) == "a";
    if ((is_a && have_a) || (!is_a && have_b)) {
      throw ImportError(name_of(dir) + ": more than one " + m[1].str() + "_<GPU>_<FMT>.txt file");
    }
    if (is_a) {
      have_a = true;
      s.a = entry.path();
      s.gpu = m[2].str();
      s.fmt_a = *fmt;
    } else {
      have_b = true;
      s.b = entry.path();
      gpu_b = m[2].str();
      s.fmt_b = *fmt;
    }
  }
  if (ec)
    throw ImportError(name_of(dir) + ": cannot be listed (" + ec.message() + ")");
  if (!have_a) {
    throw ImportError(name_of(dir) + ": no a_<GPU>_<FMT>.txt file (FMT: E4M3 or E5M2)");
  }
  if (!have_b) {
    throw ImportError(name_of(dir) + ": no b_<GPU>_<FMT>.txt file (FMT: E4M3 or E5M2)");
  }
  if (gpu_b != s.gpu) {
    throw ImportError(name_of(dir) + ": a file names GPU '" + support::printable(s.gpu) +
                      "' but b file names '" + support::printable(gpu_b) + "'");
  }
  s.c = dir / ("c_" + s.gpu + "_fp32.txt");
  s.d = dir / ("d_" + s.gpu + "_fp32.txt");
  for (const auto& p : {s.c, s.d}) {
    if (!fs::exists(fs::symlink_status(p, ec)))
      throw ImportError(name_of(p) + ": no such file");
  }
  return s;
}

GpuMapping mapping_for(const PublicSetTexts& set, const ImportOptions& opt) {
  if (opt.preset) {
    get_preset_quiet(*opt.preset); // throws ValueError for unknown names
    const auto guess = map_gpu(set.gpu);
    GpuMapping map = guess ? *guess : GpuMapping{*opt.preset, "from_file", "given by --preset"};
    map.preset = *opt.preset;
    return map;
  }
  const auto m = map_gpu(set.gpu);
  if (!m) {
    throw ImportError(name_of(set.a_path) + ": unknown GPU '" + support::printable(set.gpu) +
                      "' (known: H100, H200, GH200 -> hopper; Ada, L40S, RTX4060 and other "
                      "Ada parts -> ada; B200 -> b200_mma_sync); give --preset to import it");
  }
  return *m;
}

} // namespace

std::optional<GpuMapping> map_gpu(const std::string& gpu) {
  const std::string g = lower(gpu);
  static const GpuMapping hopper{"hopper", "zero",
                                 "wgmma with the accumulator zeroed (c file unused)"};
  static const GpuMapping ada{"ada", "from_file", "mma.sync m16n8k32 from c"};
  static const GpuMapping b200{"b200_mma_sync", "from_file", "mma.sync.m16n8k32 from c"};
  if (g == "h100" || g == "h200" || g == "gh200" || g == "h800" || g == "h20")
    return hopper;
  if (g == "b200")
    return b200;
  static const std::regex ada_re(R"(^(ada|l40s|l40|l4|l20|rtx40\d\d.*)$|ada)");
  if (std::regex_search(g, ada_re))
    return ada;
  return std::nullopt;
}

std::vector<fs::path> public_set_files(const fs::path& set_dir) {
  const SetFiles f = find_files(set_dir);
  return {f.a, f.b, f.c, f.d};
}

Recording import_public_set(const fs::path& set_dir, const ImportOptions& opt) {
  const SetFiles f = find_files(set_dir);
  PublicSetTexts set;
  set.gpu = f.gpu;
  set.fmt_a = f.fmt_a;
  set.fmt_b = f.fmt_b;
  set.a_path = f.a;
  set.b_path = f.b;
  set.c_path = f.c;
  set.d_path = f.d;
  mapping_for(set, opt); // an unknown GPU is reported before any file is read
  set.a = read_text(f.a);
  set.b = read_text(f.b);
  set.c = read_text(f.c);
  set.d = read_text(f.d);
  return import_public_texts(set, opt);
}

Recording import_public_texts(const PublicSetTexts& f, const ImportOptions& opt) {
  // The GPU name becomes the set name and the prefix of every case ID (logs, reports).
  const bool plain_name = !f.gpu.empty() && std::all_of(f.gpu.begin(), f.gpu.end(), [](char ch) {
    return static_cast<unsigned char>(ch) > 0x20 && static_cast<unsigned char>(ch) < 0x7F &&
           ch != '/';
  });
  if (!plain_name) {
    throw ImportError(name_of(f.a_path) + ": GPU name '" + support::printable(f.gpu) +
                      "' is not printable ASCII without spaces or '/'");
  }
  const GpuMapping map = mapping_for(f, opt);
  std::size_t na = 0, nb = 0;
  MmaBatch b;
  b.a = read_operands(f.a_path, f.a, f.fmt_a, opt.K, na);
  b.b = read_operands(f.b_path, f.b, f.fmt_b, opt.K, nb);
  const auto c = read_binary_strings(f.c_path, f.c);
  const auto d = read_binary_strings(f.d_path, f.d);
  if (nb != na || c.size() != na || d.size() != na) {
    fs::path dir = f.a_path.parent_path();
    throw ImportError(name_of(dir.empty() ? fs::path(".") : dir) + ": line counts differ: " +
                      name_of(f.a_path.filename()) + " " + std::to_string(na) + ", " +
                      name_of(f.b_path.filename()) + " " + std::to_string(nb) + ", " +
                      name_of(f.c_path.filename()) + " " + std::to_string(c.size()) + ", " +
                      name_of(f.d_path.filename()) + " " + std::to_string(d.size()));
  }
  if (na == 0)
    throw ImportError(name_of(f.a_path) + ": no dot products");

  auto upper_name = [](Format fmt) {
    std::string u = spec(fmt).name;
    std::transform(u.begin(), u.end(), u.begin(), ::toupper);
    return u;
  };
  const std::string upper =
      f.fmt_a == f.fmt_b ? upper_name(f.fmt_a) : upper_name(f.fmt_a) + "x" + upper_name(f.fmt_b);
  b.name = f.gpu + "_" + upper;
  b.fmt_a = f.fmt_a;
  b.fmt_b = f.fmt_b;
  b.preset = map.preset;
  b.K = opt.K;
  b.c_policy = map.c_policy;
  b.expect = d;
  b.c = map.c_policy == "zero" ? std::vector<std::uint32_t>(na, 0u) : c;
  char buf[32];
  for (std::size_t i = 0; i < na; ++i) {
    std::snprintf(buf, sizeof buf, "%05zu", i + 1);
    b.ids.push_back(b.name + "/" + buf);
  }
  b.attrs["source"] = opt.source + f.gpu + "/" + upper;
  b.attrs["licence"] = opt.licence;
  b.attrs["gpu"] = f.gpu;
  b.attrs["instruction"] = map.instruction;
  b.attrs["c_file_values"] = map.c_policy == "zero" ? "ignored: the hardware zeroed the accumulator"
                                                    : "used as the chain's input";
  const std::pair<const fs::path*, const std::string*> files[] = {
      {&f.a_path, &f.a}, {&f.b_path, &f.b}, {&f.c_path, &f.c}, {&f.d_path, &f.d}};
  for (const auto& [path, text] : files) {
    b.attrs["sha256:" + path->filename().string()] = support::sha256_hex(*text);
  }

  Recording rec;
  rec.attrs["created_by"] = "mmaemu recordings import-public";
  rec.attrs["source"] = b.attrs["source"];
  rec.attrs["licence"] = opt.licence;
  rec.attrs["gpu"] = f.gpu;
  rec.mma.push_back(std::move(b));
  return rec;
}

} // namespace mmaemu::recordings
