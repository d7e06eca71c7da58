// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/recordings/import_public.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
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

// One operand file: n lines of K binary32 hex tokens that must be exact values of `fmt`, as
// codes of fmt. K = 0 takes the first line's count (1..kMaxWideK) and holds every line to it.
std::vector<std::uint32_t> read_operands(const fs::path& p, std::string_view text, Format fmt,
                                         std::uint32_t& K, std::size_t& lines_out) {
  const auto lines = split_lines(text);
  std::vector<std::uint32_t> codes;
  codes.reserve(std::min<std::size_t>(lines.size(), text.size() / 9 + 1) * std::max(K, 1u));
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
      if (K != 0 && count == K) {
        throw ImportError(where(p, i) + ": more than K = " + std::to_string(K) + " values");
      }
      if (K == 0 && count == kMaxWideK) {
        throw ImportError(where(p, i) + ": more than " + std::to_string(kMaxWideK) +
                          " values (the products of one instruction)");
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
      codes.push_back(code);
      ++count;
    }
    if (K == 0 && i == 0 && count > 0)
      K = count; // the set's products per line
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
  // A set is the files of its folder: a symlink there could make the importer read (and an
  // error line quote) a file elsewhere, such as /etc/passwd.
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(p, ec)))
    throw ImportError(name_of(p) + ": set file is a symbolic link; a set's files must be regular "
                                   "files in its folder");
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
  fs::path d16; // d_<GPU>_fp16.txt of an fp16 set, when present (the fp16-accumulator run)
};

SetFiles find_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ImportError(name_of(dir) + ": no such folder");
  static const std::regex op_re(R"(^([ab])_(.+)_(E4M3|E5M2|fp16|bf16|tf32)\.txt$)",
                                std::regex::icase);
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
    throw ImportError(name_of(dir) +
                      ": no a_<GPU>_<FMT>.txt file (FMT: E4M3, E5M2, fp16, bf16 or tf32)");
  }
  if (!have_b) {
    throw ImportError(name_of(dir) +
                      ": no b_<GPU>_<FMT>.txt file (FMT: E4M3, E5M2, fp16, bf16 or tf32)");
  }
  if (gpu_b != s.gpu) {
    throw ImportError(name_of(dir) + ": a file names GPU '" + support::printable(s.gpu) +
                      "' but b file names '" + support::printable(gpu_b) + "'");
  }
  if (is_hmma_input(s.fmt_a) != is_hmma_input(s.fmt_b) ||
      (is_hmma_input(s.fmt_a) && s.fmt_a != s.fmt_b)) {
    throw ImportError(name_of(dir) + ": a file is " + format_name(s.fmt_a) + " but b file is " +
                      format_name(s.fmt_b) +
                      " (only FP8 sets may mix formats; fp16, bf16 and tf32 pair alike)");
  }
  s.c = dir / ("c_" + s.gpu + "_fp32.txt");
  s.d = dir / ("d_" + s.gpu + "_fp32.txt");
  for (const auto& p : {s.c, s.d}) {
    if (!fs::exists(fs::symlink_status(p, ec)))
      throw ImportError(name_of(p) + ": no such file");
  }
  if (s.fmt_a == Format::fp16) {
    const fs::path d16 = dir / ("d_" + s.gpu + "_fp16.txt");
    if (fs::exists(fs::symlink_status(d16, ec)))
      s.d16 = d16;
  }
  return s;
}

GpuMapping mapping_for(const PublicSetTexts& set, const ImportOptions& opt) {
  if (opt.preset) {
    const Preset& p = get_preset_quiet(*opt.preset); // throws ValueError for unknown names
    if (!preset_takes(p, set.fmt_a, set.fmt_b)) {
      throw ImportError(name_of(set.a_path) + ": --preset " + support::printable(*opt.preset) +
                        " takes " + preset_inputs_name(p.inputs) + " operands, not " +
                        format_name(set.fmt_a) + " x " + format_name(set.fmt_b));
    }
    const auto guess = map_gpu(set.gpu, set.fmt_a);
    GpuMapping map = guess ? *guess : GpuMapping{*opt.preset, "from_file", "given by --preset"};
    map.preset = *opt.preset;
    return map;
  }
  const auto m = map_gpu(set.gpu, set.fmt_a);
  if (!m) {
    if (is_hmma_input(set.fmt_a)) {
      throw ImportError(name_of(set.a_path) + ": no " + format_name(set.fmt_a) +
                        " preset for GPU '" + support::printable(set.gpu) +
                        "' (known: V100 -> volta_fp16 (fp16 only); A100, A2, A10, A30, A40 "
                        "and other Ampere parts -> ampere_<fmt>; Ada, L40S, RTX40xx -> "
                        "ada_<fmt>; H100, H200, GH200 -> hopper_<fmt>); give --preset to "
                        "import it");
    }
    throw ImportError(name_of(set.a_path) + ": unknown GPU '" + support::printable(set.gpu) +
                      "' (known: H100, H200, GH200 -> hopper; Ada, L40S, RTX4060 and other "
                      "Ada parts -> ada; B200 -> b200_mma_sync); give --preset to import it");
  }
  return *m;
}

} // namespace

namespace {

// The architecture of a GPU name of the public sets, for the 16-bit and tf32 presets.
std::optional<std::string> hmma_architecture(const std::string& g) {
  if (g == "v100" || g == "titanv")
    return "volta";
  if (g == "h100" || g == "h200" || g == "gh200" || g == "h800" || g == "h20")
    return "hopper";
  static const std::regex ampere_re(R"(^(a100|a800|a10|a10g|a16|a2|a30|a40|rtx30\d\d.*|rtxa\d+)$)");
  if (std::regex_match(g, ampere_re))
    return "ampere";
  static const std::regex ada_re(R"(^(ada|l40s|l40|l4|l20|rtx40\d\d.*)$|ada)");
  if (std::regex_search(g, ada_re))
    return "ada";
  return std::nullopt;
}

} // namespace

std::optional<GpuMapping> map_gpu(const std::string& gpu, Format fmt) {
  if (!is_hmma_input(fmt))
    return map_gpu(gpu);
  const auto arch = hmma_architecture(lower(gpu));
  if (!arch)
    return std::nullopt;
  const std::string preset = *arch + "_" + format_name(fmt);
  bool known = false;
  for (const auto& name : list_presets())
    known = known || name == preset;
  if (!known)
    return std::nullopt; // e.g. Volta has no bf16 or tf32 tensor cores
  const std::string shape = fmt == Format::tf32 ? "m16n16k8" : "m16n16k16";
  return GpuMapping{preset, "from_file",
                    "wmma " + shape + " " + format_name(fmt) + " from c (mma.sync class)"};
}

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
  std::vector<fs::path> out{f.a, f.b, f.c, f.d};
  if (!f.d16.empty())
    out.push_back(f.d16);
  return out;
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
  set.d16_path = f.d16;
  mapping_for(set, opt); // an unknown GPU is reported before any file is read
  set.a = read_text(f.a);
  set.b = read_text(f.b);
  set.c = read_text(f.c);
  set.d = read_text(f.d);
  if (!f.d16.empty())
    set.d16 = read_text(f.d16);
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
  const bool wide = is_hmma_input(f.fmt_a);
  // FP8 sets have the layout's K (32); the 16-bit and tf32 sets as many products per line as
  // their GPU's block (the first line says how many).
  std::uint32_t K = opt.K != 0 ? opt.K : (wide ? 0u : 32u);
  std::size_t na = 0, nb = 0;
  const auto a = read_operands(f.a_path, f.a, f.fmt_a, K, na);
  if (na == 0)
    throw ImportError(name_of(f.a_path) + ": no dot products");
  const auto bv = read_operands(f.b_path, f.b, f.fmt_b, K, nb);
  const auto c = read_binary_strings(f.c_path, f.c);
  const auto d = read_binary_strings(f.d_path, f.d);
  const bool has_d16 = !f.d16_path.empty();
  const auto d16 = has_d16 ? read_binary_strings(f.d16_path, f.d16) : std::vector<std::uint32_t>();
  if (nb != na || c.size() != na || d.size() != na || (has_d16 && d16.size() != na)) {
    fs::path dir = f.a_path.parent_path();
    throw ImportError(
        name_of(dir.empty() ? fs::path(".") : dir) +
        ": line counts differ: " + name_of(f.a_path.filename()) + " " + std::to_string(na) + ", " +
        name_of(f.b_path.filename()) + " " + std::to_string(nb) + ", " +
        name_of(f.c_path.filename()) + " " + std::to_string(c.size()) + ", " +
        name_of(f.d_path.filename()) + " " + std::to_string(d.size()) +
        (has_d16 ? ", " + name_of(f.d16_path.filename()) + " " + std::to_string(d16.size())
                 : std::string()));
  }

  auto upper_name = [](Format fmt) {
    std::string u = spec(fmt).name;
    std::transform(u.begin(), u.end(), u.begin(), ::toupper);
    return u;
  };
  const std::string upper =
      f.fmt_a == f.fmt_b ? upper_name(f.fmt_a) : upper_name(f.fmt_a) + "x" + upper_name(f.fmt_b);
  // The upstream folder: E4M3 / E5M2, and fp16 / bf16 / tf32 in lower case.
  const std::string folder = wide ? std::string(format_name(f.fmt_a)) : upper;
  MmaBatch b;
  b.name = f.gpu + "_" + upper;
  b.fmt_a = f.fmt_a;
  b.fmt_b = f.fmt_b;
  if (wide) {
    b.a_wide = a;
    b.b_wide = bv;
  } else {
    b.a.assign(a.begin(), a.end()); // FP8 codes: < 256
    b.b.assign(bv.begin(), bv.end());
  }
  b.preset = map.preset;
  b.K = K;
  b.c_policy = map.c_policy;
  b.expect = d;
  b.c = map.c_policy == "zero" ? std::vector<std::uint32_t>(na, 0u) : c;
  char buf[32];
  for (std::size_t i = 0; i < na; ++i) {
    std::snprintf(buf, sizeof buf, "%05zu", i + 1);
    b.ids.push_back(b.name + "/" + buf);
  }
  b.attrs["source"] = opt.source + f.gpu + "/" + folder;
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

  if (has_d16) {
    // The same products with an fp16 accumulator: the recorder rounded c to fp16
    // (__float2half, round to nearest even) and stored the fp16 result widened to binary32.
    MmaBatch h = b;
    h.name = b.name + "_FP16ACC";
    h.acc = Format::fp16;
    h.ids.clear();
    for (std::size_t i = 0; i < na; ++i) {
      std::snprintf(buf, sizeof buf, "%05zu", i + 1);
      h.ids.push_back(h.name + "/" + buf);
    }
    for (std::size_t i = 0; i < na; ++i) {
      const std::uint32_t c16 = encode_binary32_bits(Format::fp16, c[i], Overflow::infinity);
      h.c[i] = encode_exact_bits(Format::fp32, decode_bits(Format::fp16, c16), Overflow::infinity);
      const std::uint32_t e16 = encode_binary32_bits(Format::fp16, d16[i], Overflow::infinity);
      const std::uint32_t back =
          encode_exact_bits(Format::fp32, decode_bits(Format::fp16, e16), Overflow::infinity);
      const bool nan = ((d16[i] >> 23) & 0xFFu) == 0xFFu && (d16[i] & 0x7FFFFFu) != 0;
      if (!nan && back != d16[i]) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%08x", d16[i]);
        throw ImportError(where(f.d16_path, i) + ": " + hex +
                          " is not the binary32 pattern of an fp16 value");
      }
    }
    h.expect = d16;
    h.attrs["c_file_values"] =
        "rounded to fp16 (to nearest even, as the recorder's __float2half did) and used as the "
        "chain's input";
    h.attrs["accumulator"] = "fp16 (c and expect: binary32 patterns of fp16 values)";
    h.attrs.erase("sha256:" + f.d_path.filename().string());
    h.attrs["sha256:" + f.d16_path.filename().string()] = support::sha256_hex(f.d16);
    rec.mma.push_back(std::move(b));
    rec.mma.push_back(std::move(h));
    return rec;
  }
  rec.mma.push_back(std::move(b));
  return rec;
}

} // namespace mmaemu::recordings
