// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/fatbin_build.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <span>
#include <stdexcept>

#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/process.hpp"
#include "mmaemu/support/text.hpp"

#ifndef MMAEMU_KERNEL_SOURCE_DIR_PATH
#define MMAEMU_KERNEL_SOURCE_DIR_PATH ""
#endif

namespace mmaemu::kernels {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint64_t kFatbinFlagCompressed = 0x2000u;     // LZ4 (CUDA 11-12)
constexpr std::uint64_t kFatbinFlagCompressedZstd = 0x8000u; // zstd (CUDA 12.8+)
constexpr std::uint64_t kMaxSourceBytes = 16ull << 20;

template <typename T> T load_le(std::string_view bytes, std::size_t off) {
  T v{};
  std::memcpy(&v, bytes.data() + off, sizeof(T)); // x86-64 and aarch64: little-endian hosts
  return v;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::string sm(int arch) {
  return "sm_" + std::to_string(arch);
}
std::string compute(int arch) {
  return "compute_" + std::to_string(arch);
}

bool contains_ci(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

// The flags every module is compiled with (the -gencode list is per module).
std::vector<std::string> common_flags(bool release) {
  std::vector<std::string> f{"-fatbin", "-O3", "--fmad=false"};
  if (!release)
    f.push_back("-lineinfo");
  f.push_back("-Xptxas");
  f.push_back("-v");
  return f;
}

// nvcc's -gencode arguments for a spec: SASS for each listed architecture, PTX for one.
std::vector<std::string> gencodes(const KernelSpec& s) {
  std::vector<std::string> g;
  for (int a : s.sass) {
    g.push_back("-gencode");
    g.push_back("arch=" + compute(a) + ",code=" + sm(a));
  }
  if (s.ptx != 0) { // v9 and tc3 ship SASS only (seed 000)
    g.push_back("-gencode");
    g.push_back("arch=" + compute(s.ptx) + ",code=" + compute(s.ptx));
  }
  return g;
}

std::string module_of(const KernelSpec& s) {
  std::string m(s.source);
  const auto dot = m.rfind('.');
  return dot == std::string::npos ? m : m.substr(0, dot);
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? sep : "") + v[i];
  return out;
}

// A temporary folder beside `out` (same file system, so rename moves files into place).
fs::path make_temp_dir_beside(const fs::path& out) {
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent);
  std::string templ = (parent / ("." + out.filename().string() + ".fatbin-build-XXXXXX")).string();
  if (!::mkdtemp(templ.data()))
    throw std::runtime_error("--out: cannot create a temporary folder beside " +
                             support::printable(out.string(), 200) + ": " + std::strerror(errno));
  return templ;
}

struct Cuobjdump {
  fs::path path;
  std::string version;
};

// A cuobjdump of at least 12.8 next to nvcc or in PATH (older ones cannot read sm_100/120).
std::optional<Cuobjdump> find_cuobjdump(const fs::path& nvcc) {
  std::vector<fs::path> cands;
  cands.push_back(nvcc.parent_path() / "cuobjdump");
  if (auto p = support::find_program("cuobjdump"))
    cands.push_back(*p);
  for (const auto& c : cands) {
    std::error_code ec;
    if (!fs::is_regular_file(c, ec))
      continue;
    auto r =
        support::run_process({c.string(), "--version"}, support::ProcessOptions::with_timeout(60));
    if (r.exit_code != 0)
      continue;
    auto v = parse_nvcc_version(r.output);
    if (v && v->at_least(kMinNvccMajor, kMinNvccMinor))
      return Cuobjdump{c, v->full};
  }
  return std::nullopt;
}

} // namespace

std::optional<NvccVersion> parse_nvcc_version(std::string_view text) {
  static const std::regex release(R"(release (\d+)\.(\d+))");
  static const std::regex full(R"(\bV(\d+\.\d+(?:\.\d+)?))");
  const std::string t(text);
  std::smatch m;
  if (!std::regex_search(t, m, release))
    return std::nullopt;
  NvccVersion v;
  try {
    v.major = std::stoi(m[1]);
    v.minor = std::stoi(m[2]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  v.full = std::to_string(v.major) + "." + std::to_string(v.minor);
  std::smatch f;
  if (std::regex_search(t, f, full))
    v.full = f[1];
  return v;
}

std::optional<fs::path> find_nvcc(const std::string& explicit_path) {
  auto usable = [](const fs::path& p) -> std::optional<fs::path> {
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0)
      return p;
    return std::nullopt;
  };
  if (!explicit_path.empty()) {
    if (explicit_path.find('/') == std::string::npos)
      return support::find_program(explicit_path);
    return usable(explicit_path);
  }
  if (const char* e = std::getenv("NVCC"); e && *e)
    return std::string(e).find('/') == std::string::npos ? support::find_program(e)
                                                         : usable(fs::path(e));
  if (const char* h = std::getenv("CUDA_HOME"); h && *h) {
    if (auto p = usable(fs::path(h) / "bin" / "nvcc"))
      return p;
  }
  if (auto p = support::find_program("nvcc"))
    return p;
  return usable("/usr/local/cuda/bin/nvcc");
}

PtxasReport parse_ptxas_report(std::string_view output) {
  static const std::regex entry(R"(Compiling entry function '([^']+)' for 'sm_(\d+)[a-z]?')");
  static const std::regex props(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex bars(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  PtxasReport rep;
  PtxasArch* cur = nullptr;
  for (const auto& line : split_lines(output)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      PtxasArch a;
      a.function = m[1];
      a.arch = std::stoi(m[2]);
      rep.archs.push_back(a);
      cur = &rep.archs.back();
      continue;
    }
    if (contains_ci(line, "warning")) {
      if (cur)
        cur->warnings.push_back(line);
      else
        rep.warnings.push_back(line);
      continue;
    }
    if (!cur)
      continue;
    if (std::regex_search(line, m, props)) {
      cur->stack_frame = std::stoll(m[1]);
      cur->spill_stores = std::stoll(m[2]);
      cur->spill_loads = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, regs))
      cur->registers = std::stoi(m[1]);
    if (std::regex_search(line, m, bars))
      cur->barriers = std::stoi(m[1]);
    if (line.find("Used ") != std::string::npos && std::regex_search(line, m, smem))
      cur->smem = std::stoll(m[1]);
    if (line.find("Compile time") != std::string::npos)
      cur = nullptr; // this ptxas run is over; what follows belongs to the next or to nvcc
  }
  return rep;
}

std::vector<FatbinImageEntry> list_fatbin(std::string_view bytes) {
  std::vector<FatbinImageEntry> entries;
  std::size_t off = 0;
  auto fail = [](std::size_t at, const std::string& what) {
    throw std::runtime_error("not a fatbin: " + what + " at offset " + std::to_string(at));
  };
  while (off < bytes.size()) {
    // Zero padding after the last container ends the file.
    if (std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(off), bytes.end(),
                    [](char c) { return c == 0; }))
      break;
    if (bytes.size() - off < 16)
      fail(off, "truncated container header");
    if (load_le<std::uint32_t>(bytes, off) != kFatbinMagic)
      fail(off, "bad magic");
    const auto header = load_le<std::uint16_t>(bytes, off + 6);
    const auto body = load_le<std::uint64_t>(bytes, off + 8);
    if (header < 16 || body > bytes.size() - off - header)
      fail(off, "container size past the end of the file");
    std::size_t e = off + header;
    const std::size_t end = off + header + body;
    while (e < end) {
      if (end - e < 64)
        fail(e, "truncated entry header");
      const auto kind = load_le<std::uint16_t>(bytes, e);
      const auto ehs = load_le<std::uint32_t>(bytes, e + 4);
      const auto size = load_le<std::uint64_t>(bytes, e + 8);
      const auto arch = load_le<std::uint32_t>(bytes, e + 28);
      const auto flags = load_le<std::uint64_t>(bytes, e + 40);
      if (ehs < 64 || ehs > end - e || size > end - e - ehs)
        fail(e, "entry past the end of its container");
      if (kind != 1 && kind != 2)
        fail(e, "unknown entry kind " + std::to_string(kind));
      FatbinImageEntry fe;
      fe.kind = kind == 1 ? FatbinImageEntry::Kind::ptx : FatbinImageEntry::Kind::elf;
      fe.arch = static_cast<int>(arch);
      fe.size = size;
      fe.compressed = (flags & (kFatbinFlagCompressed | kFatbinFlagCompressedZstd)) != 0;
      entries.push_back(fe);
      e += ehs + size;
    }
    off = end;
  }
  if (entries.empty())
    throw std::runtime_error("not a fatbin: no entries");
  return entries;
}

std::string format_fatbin_listing(std::string_view module,
                                  const std::vector<FatbinImageEntry>& entries) {
  std::string out;
  char buf[256];
  int n = 0;
  for (const auto& e : entries) {
    if (e.kind != FatbinImageEntry::Kind::elf)
      continue;
    ++n;
    std::snprintf(buf, sizeof buf, "ELF file %4d: %.*s.%d.sm_%d.cubin\n", n,
                  static_cast<int>(module.size()), module.data(), n, e.arch);
    out += buf;
  }
  n = 0;
  for (const auto& e : entries) {
    if (e.kind != FatbinImageEntry::Kind::ptx)
      continue;
    ++n;
    std::snprintf(buf, sizeof buf, "PTX file %4d: %.*s.%d.sm_%d.ptx\n", n,
                  static_cast<int>(module.size()), module.data(), n, e.arch);
    out += buf;
  }
  return out;
}

std::vector<FatbinImageEntry> parse_cuobjdump_listing(std::string_view text) {
  static const std::regex line_re(
      R"(^(ELF|PTX) file\s+\d+:\s*\S*?\.sm_(\d+)[a-z]?\.(cubin|ptx)\s*$)");
  std::vector<FatbinImageEntry> out;
  for (const auto& line : split_lines(text)) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re))
      continue;
    FatbinImageEntry e;
    e.kind = m[1] == "ELF" ? FatbinImageEntry::Kind::elf : FatbinImageEntry::Kind::ptx;
    e.arch = std::stoi(m[2]);
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> compare_listing(const std::vector<FatbinImageEntry>& listed,
                                         const std::vector<int>& sass, int ptx) {
  std::vector<std::string> problems;
  std::map<int, int> elf_count, ptx_count;
  for (const auto& e : listed)
    ++(e.kind == FatbinImageEntry::Kind::elf ? elf_count : ptx_count)[e.arch];
  for (int a : sass) {
    if (elf_count.count(a) == 0)
      problems.push_back("missing SASS " + sm(a));
  }
  if (ptx != 0 && ptx_count.count(ptx) == 0)
    problems.push_back("missing PTX " + compute(ptx));
  for (const auto& [a, n] : elf_count) {
    if (std::find(sass.begin(), sass.end(), a) == sass.end())
      problems.push_back("unexpected SASS " + sm(a));
    else if (n > 1)
      problems.push_back("SASS " + sm(a) + " listed " + std::to_string(n) + " times");
  }
  for (const auto& [a, n] : ptx_count) {
    if (a != ptx)
      problems.push_back("unexpected PTX " + compute(a));
    else if (n > 1)
      problems.push_back("PTX " + compute(a) + " listed " + std::to_string(n) + " times");
  }
  return problems;
}

std::vector<std::string> forbidden_ptx_lines(std::string_view ptx) {
  // fma.rz.bf16 is also the prefix of fma.rz.bf16x2; "fma.rz.ftz.bf16" does not exist.
  std::vector<std::string> hits;
  std::size_t n = 0;
  for (const auto& line : split_lines(ptx)) {
    ++n;
    if (line.find("fma.rz.bf16") != std::string::npos) {
      std::string t = line;
      t.erase(0, t.find_first_not_of(" \t"));
      hits.push_back("line " + std::to_string(n) + ": " + support::printable(t, 120));
    }
  }
  return hits;
}

SourceDir read_source_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw support::FileError(support::printable(dir.string(), 200) + ": not a folder");
  SourceDir sd;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto ext = e.path().extension().string();
    if ((ext == ".cu" || ext == ".cuh") && e.is_regular_file())
      sd.names.push_back(e.path().filename().string());
  }
  std::sort(sd.names.begin(), sd.names.end());
  for (const auto& n : sd.names)
    sd.contents.push_back(support::read_input_file(dir / n, kMaxSourceBytes, "kernel source"));
  return sd;
}

std::string sources_sha256_of_dir(const fs::path& dir) {
  const SourceDir sd = read_source_dir(dir);
  std::vector<SourceFile> files;
  for (std::size_t i = 0; i < sd.names.size(); ++i)
    files.push_back({sd.names[i], sd.contents[i]});
  return sources_sha256_of(files);
}

fs::path default_kernel_source_dir() {
  return fs::path(MMAEMU_KERNEL_SOURCE_DIR_PATH);
}

namespace {

struct ModuleBuild {
  const KernelSpec* spec = nullptr;
  std::string module;
  json report;
  std::vector<std::string> problems;
};

void progress(const FatbinBuildOptions& o, const std::string& line) {
  if (o.progress)
    o.progress("fatbin: " + line);
}

// Compiles one module into `tmp`; fills mb.report and mb.problems.
void build_module(const FatbinBuildOptions& o, const fs::path& nvcc, const fs::path& src,
                  const fs::path& tmp, ModuleBuild& mb) {
  const KernelSpec& s = *mb.spec;
  const std::string file = mb.module + ".fatbin";
  std::vector<std::string> args = common_flags(o.release);
  for (const auto& g : gencodes(s))
    args.push_back(g);
  std::vector<std::string> argv{nvcc.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("-o");
  argv.push_back((tmp / file).string());
  argv.push_back(std::string(s.source));
  std::vector<std::string> shown{"nvcc"};
  shown.insert(shown.end(), args.begin(), args.end());
  shown.push_back("-o");
  shown.push_back(file);
  shown.push_back(std::string(s.source));
  mb.report["command"] = shown;
  progress(o, mb.module + ": nvcc " + std::string(s.source) + " (" + std::to_string(s.sass.size()) +
                  (s.ptx != 0 ? " SASS + PTX " + compute(s.ptx) : " SASS, no PTX") + ")");
  auto popt = support::ProcessOptions::in_dir(src);
  popt.timeout_s = o.timeout_s;
  const auto r = support::run_process(argv, popt);
  if (r.exit_code != 0 || r.timed_out) {
    std::string why = r.timed_out ? "timed out after " + std::to_string(int(o.timeout_s)) + " s"
                      : !r.error.empty() ? r.error
                                         : "exit status " + std::to_string(r.exit_code);
    mb.problems.push_back(mb.module + ": nvcc failed (" + why + ")");
    // The compiler's own words, a few lines, so that the failure is readable on stderr.
    const auto lines = split_lines(r.output);
    std::vector<std::string> said;
    for (const auto& line : lines) {
      if ((contains_ci(line, "error") || contains_ci(line, "fatal")) && said.size() < 8)
        said.push_back(line);
    }
    if (said.empty()) {
      for (std::size_t i = lines.size() > 5 ? lines.size() - 5 : 0; i < lines.size(); ++i)
        said.push_back(lines[i]);
    }
    for (const auto& line : said)
      mb.problems.push_back(mb.module + ": " + support::printable(line, 300));
    mb.report["nvcc_output"] = support::printable(r.output, 20000);
    return;
  }
  const PtxasReport pr = parse_ptxas_report(r.output);
  json archs = json::array();
  std::set<int> seen;
  for (const auto& a : pr.archs) {
    seen.insert(a.arch);
    archs.push_back({{"arch", sm(a.arch)},
                     {"function", a.function},
                     {"registers", a.registers},
                     {"barriers", a.barriers},
                     {"stack_frame", a.stack_frame},
                     {"spill_stores", a.spill_stores},
                     {"spill_loads", a.spill_loads},
                     {"smem", a.smem},
                     {"warnings", a.warnings}});
    if (a.spills()) {
      const std::string what = mb.module + ": " + sm(a.arch) + " " + a.function + " spills (" +
                               std::to_string(a.spill_stores) + " bytes stores, " +
                               std::to_string(a.spill_loads) + " bytes loads)";
      if (o.allow_spills)
        progress(o, what + ", allowed by --allow-spills");
      else
        mb.problems.push_back(what + "; --allow-spills accepts it");
    }
  }
  for (int a : s.sass) {
    if (seen.count(a) == 0)
      mb.problems.push_back(mb.module + ": ptxas printed no report for " + sm(a));
  }
  mb.report["ptxas"] = archs;
  mb.report["warnings"] = pr.warnings;
  int warn_count = static_cast<int>(pr.warnings.size());
  for (const auto& a : pr.archs)
    warn_count += static_cast<int>(a.warnings.size());
  int rmin = 1 << 30, rmax = 0;
  for (const auto& a : pr.archs) {
    rmin = std::min(rmin, a.registers);
    rmax = std::max(rmax, a.registers);
  }
  progress(o, mb.module + ": " + std::to_string(pr.archs.size()) + " SASS, registers " +
                  std::to_string(pr.archs.empty() ? 0 : rmin) + ".." + std::to_string(rmax) + ", " +
                  std::to_string(warn_count) + " warning(s)");

  // The PTX of every architecture (SASS ones included: ptxas compiles each from its own
  // compute_XY PTX, which the fatbin does not keep), grepped for the miscompiled instruction.
  std::set<int> ptx_archs(s.sass.begin(), s.sass.end());
  if (s.ptx != 0)
    ptx_archs.insert(s.ptx);
  json grep = json::object();
  std::size_t forbidden = 0;
  for (int a : ptx_archs) {
    const fs::path ptx_file = tmp / (mb.module + "." + compute(a) + ".ptx");
    std::vector<std::string> pargv{nvcc.string(), "-ptx", "-O3", "--fmad=false",
                                   "-arch=" + compute(a)};
    if (!o.release)
      pargv.push_back("-lineinfo");
    pargv.push_back("-o");
    pargv.push_back(ptx_file.string());
    pargv.push_back(std::string(s.source));
    const auto pr2 = support::run_process(pargv, popt);
    if (pr2.exit_code != 0 || pr2.timed_out) {
      mb.problems.push_back(mb.module + ": nvcc -ptx for " + compute(a) + " failed (exit " +
                            std::to_string(pr2.exit_code) + ")");
      continue;
    }
    std::string text;
    try {
      text = support::read_input_file(ptx_file, 256ull << 20, "PTX");
    } catch (const std::exception& e) {
      mb.problems.push_back(mb.module + ": " + e.what());
      continue;
    }
    const auto hits = forbidden_ptx_lines(text);
    grep[compute(a)] = hits;
    forbidden += hits.size();
    for (const auto& h : hits)
      mb.problems.push_back(mb.module + ": PTX " + compute(a) +
                            " uses fma.rz.bf16 (miscompiled by ptxas 12.0-13.3), " + h);
    std::error_code ec;
    fs::remove(ptx_file, ec);
  }
  mb.report["forbidden_ptx"] = grep;
  progress(o, mb.module + ": PTX grep over " + std::to_string(ptx_archs.size()) +
                  " architectures: " +
                  (forbidden == 0 ? std::string("clean")
                                  : std::to_string(forbidden) + " fma.rz.bf16 line(s)"));
}

// The listing of one fatbin: cuobjdump's when there is one, else the built-in parser's.
// Returns the text and the (kind, arch) pairs it names.
std::pair<std::string, std::vector<FatbinImageEntry>>
listing_of(const fs::path& fatbin, const std::string& module,
           const std::optional<Cuobjdump>& cuobjdump) {
  if (cuobjdump) {
    const auto r = support::run_process(
        {cuobjdump->path.string(), "--list-elf", "--list-ptx", fatbin.filename().string()}, [&] {
          auto o = support::ProcessOptions::in_dir(fatbin.parent_path());
          o.timeout_s = 120;
          return o;
        }());
    if (r.exit_code != 0)
      throw std::runtime_error(module + ": cuobjdump --list-elf --list-ptx failed (exit " +
                               std::to_string(r.exit_code) + ")");
    return {r.output, parse_cuobjdump_listing(r.output)};
  }
  const std::string bytes = support::read_input_file(fatbin, kMaxFatbinBytes, "fatbin");
  auto entries = list_fatbin(bytes);
  return {format_fatbin_listing(module, entries), entries};
}

std::vector<int> to_vec(std::span<const int> s) {
  return {s.begin(), s.end()};
}

} // namespace

FatbinBuildResult build_fatbins(const FatbinBuildOptions& options) {
  // nvcc runs in the source folder: every path handed to it must be absolute.
  FatbinBuildOptions o = options;
  if (!o.out.empty())
    o.out = fs::absolute(o.out).lexically_normal();
  FatbinBuildResult res;
  res.status = 2;
  auto usage = [&](const std::string& line) {
    res.problems.push_back(line);
    return res;
  };

  // Which modules.
  std::vector<const KernelSpec*> wanted;
  if (o.modules.empty()) {
    for (const auto& s : kernel_specs())
      wanted.push_back(&s);
  } else {
    for (const auto& m : o.modules) {
      const KernelSpec* s = find_kernel_spec(m);
      if (!s) {
        std::string known;
        for (const auto& k : kernel_specs())
          known += (known.empty() ? "" : ",") + std::string(k.name);
        return usage("--modules: '" + support::printable(m) + "' is not a kernel (" + known + ")");
      }
      if (std::find(wanted.begin(), wanted.end(), s) == wanted.end())
        wanted.push_back(s);
    }
  }
  std::sort(wanted.begin(), wanted.end(),
            [](const KernelSpec* a, const KernelSpec* b) { return a->name < b->name; });
  if (o.out.empty())
    return usage("--out: no folder given");

  // Sources.
  const fs::path src = o.sources.empty() ? default_kernel_source_dir() : o.sources;
  std::error_code ec;
  if (src.empty() || !fs::is_directory(src, ec))
    return usage("--sources: '" + support::printable(src.string(), 200) +
                 "' is not a folder of kernel sources");
  for (const auto* s : wanted) {
    if (!fs::is_regular_file(src / s->source, ec))
      return usage("--sources: " + support::printable((src / s->source).string(), 200) +
                   " does not exist");
  }
  try {
    res.source_sha256 = sources_sha256_of_dir(src);
  } catch (const std::exception& e) {
    return usage(std::string("--sources: ") + e.what());
  }

  // nvcc.
  const auto nvcc = find_nvcc(o.nvcc);
  if (!nvcc)
    return usage(o.nvcc.empty() ? "--nvcc: no nvcc found ($NVCC, $CUDA_HOME/bin, PATH, "
                                  "/usr/local/cuda/bin)"
                                : "--nvcc: '" + support::printable(o.nvcc, 200) +
                                      "' is not an executable file");
  const auto vr = support::run_process({nvcc->string(), "--version"},
                                       support::ProcessOptions::with_timeout(60));
  const auto ver = parse_nvcc_version(vr.output);
  if (vr.exit_code != 0 || !ver)
    return usage("--nvcc: '" + support::printable(nvcc->string(), 200) +
                 "' --version printed no release number");
  res.nvcc_version = ver->full;
  if (!ver->at_least(kMinNvccMajor, kMinNvccMinor))
    return usage("--nvcc: " + support::printable(nvcc->string(), 200) + " is release " + ver->full +
                 "; the fatbins need nvcc 12.8 or later (sm_100, sm_120)");
  if (res.source_sha256 != sources_sha256())
    progress(o, "note: the sources in " + src.string() +
                    " differ from the ones built into this mmaemu; `mmaemu fatbin check` calls "
                    "the result stale until mmaemu is rebuilt");
  progress(o, "nvcc " + ver->full + " (" + nvcc->string() + "), " +
                  (o.release ? "release" : "development") + " flags, sources " + src.string());

  // What is kept from an existing manifest (a subset rebuild).
  const fs::path manifest_path = o.out / std::string(kManifestName);
  const std::vector<std::string> flags = common_flags(o.release);
  json old_report = json::object();
  std::vector<FatbinEntry> kept;
  if (!o.modules.empty() && fs::exists(manifest_path, ec)) {
    FatbinManifest old;
    try {
      old = read_manifest(manifest_path);
    } catch (const std::exception& e) {
      return usage("--modules: " + std::string(e.what()) + "; rebuild every module");
    }
    if (old.nvcc != ver->full || old.flags != flags)
      return usage("--modules: " + support::printable(manifest_path.string(), 200) +
                   " was built with nvcc " + support::printable(old.nvcc) + " and flags " +
                   support::printable(join(old.flags, " "), 200) + ", this build is nvcc " +
                   ver->full + " with " + join(flags, " ") + "; rebuild every module");
    for (const auto& m : old.modules) {
      bool rebuilt = false;
      for (const auto* s : wanted)
        rebuilt = rebuilt || module_of(*s) == m.module;
      if (!rebuilt)
        kept.push_back(m);
    }
    try {
      old_report = json::parse(
          support::read_input_file(o.out / "build_report.json", kMaxManifestBytes, "build report"));
    } catch (const std::exception&) {
      old_report = json::object(); // the report is informative; the manifest decides
    }
  }

  res.status = 1;
  fs::path tmp;
  try {
    tmp = make_temp_dir_beside(o.out);
  } catch (const std::exception& e) {
    res.problems.push_back(e.what());
    return res;
  }
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code e;
      if (!p.empty())
        fs::remove_all(p, e);
    }
  } cleanup{tmp};

  const auto cuobjdump = find_cuobjdump(*nvcc);
  progress(o, cuobjdump ? "listing with cuobjdump " + cuobjdump->version + " (" +
                              cuobjdump->path.string() + ")"
                        : std::string("no cuobjdump >= 12.8 next to nvcc or in PATH: listing "
                                      "with the built-in fatbin parser"));

  json report;
  report["format"] = "mmaemu-fatbin-report/1";
  report["nvcc"] = ver->full;
  report["release"] = o.release;
  report["allow_spills"] = o.allow_spills;
  report["flags"] = flags;
  report["source_sha256"] = res.source_sha256;
  report["lister"] = cuobjdump ? "cuobjdump " + cuobjdump->version : "built-in";
  report["modules"] = json::object();

  std::vector<FatbinEntry> manifest_modules;
  std::map<std::string, std::string> listings;
  for (const auto* s : wanted) {
    ModuleBuild mb;
    mb.spec = s;
    mb.module = module_of(*s);
    build_module(o, *nvcc, src, tmp, mb);
    const fs::path fatbin = tmp / (mb.module + ".fatbin");
    if (mb.problems.empty() || fs::exists(fatbin, ec)) {
      try {
        auto [text, entries] = listing_of(fatbin, mb.module, cuobjdump);
        listings[mb.module] = text;
        for (const auto& p : compare_listing(entries, to_vec(s->sass), s->ptx))
          mb.problems.push_back(mb.module + ": listing: " + p);
        const std::string sha = support::sha256_file(fatbin);
        mb.report["sha256"] = sha;
        mb.report["bytes"] = fs::file_size(fatbin);
        manifest_modules.push_back({mb.module, mb.module + ".fatbin", sha, to_vec(s->sass),
                                    s->ptx != 0 ? std::optional<int>(s->ptx) : std::nullopt});
      } catch (const std::exception& e) {
        mb.problems.push_back(mb.module + ": " + e.what());
      }
    }
    mb.report["problems"] = mb.problems;
    report["modules"][mb.module] = mb.report;
    for (const auto& p : mb.problems)
      res.problems.push_back(p);
    res.built.push_back(mb.module);
  }

  // Kept modules: their files must still be the ones the manifest names.
  for (const auto& m : kept) {
    const fs::path f = o.out / m.file;
    try {
      if (support::sha256_file(f, kMaxFatbinBytes) != m.sha256)
        throw std::runtime_error("does not match its manifest entry");
      auto [text, entries] = listing_of(f, m.module, cuobjdump);
      listings[m.module] = text;
      for (const auto& p : compare_listing(entries, m.sass, m.ptx.value_or(0)))
        res.problems.push_back(m.module + " (kept): listing: " + p);
      manifest_modules.push_back(m);
      if (old_report.contains("modules") && old_report["modules"].is_object() &&
          old_report["modules"].contains(m.module))
        report["modules"][m.module] = old_report["modules"][m.module];
      else
        report["modules"][m.module] = {{"kept", true}};
    } catch (const std::exception& e) {
      res.problems.push_back(m.module + " (kept): " + support::printable(f.string(), 200) + ": " +
                             e.what() + "; rebuild it too");
    }
  }
  std::sort(manifest_modules.begin(), manifest_modules.end(),
            [](const FatbinEntry& a, const FatbinEntry& b) { return a.module < b.module; });

  report["ok"] = res.problems.empty();
  report["problems"] = res.problems;
  res.report_json = report.dump(2) + "\n";
  if (!res.problems.empty())
    return res;

  FatbinManifest manifest;
  manifest.source_sha256 = res.source_sha256;
  manifest.nvcc = ver->full;
  manifest.flags = flags;
  manifest.modules = manifest_modules;

  std::string listing_text = "# mmaemu fatbin listing: cuobjdump --list-elf --list-ptx of each "
                             "fatbin\n# lister: " +
                             std::string(cuobjdump ? "cuobjdump " + cuobjdump->version
                                                   : "built-in fatbin container parser (no "
                                                     "cuobjdump >= 12.8 found)") +
                             "\n";
  for (const auto& [name, text] : listings)
    listing_text += "== " + name + ".fatbin\n" + text;

  try {
    support::write_file_atomic(tmp / "build_report.json", res.report_json);
    support::write_file_atomic(tmp / "cuobjdump.txt", listing_text);
    write_manifest(tmp / "manifest.json", manifest);
    fs::create_directories(o.out);
    // Fatbins first, the manifest last: a reader that sees the new manifest sees its files.
    for (const auto& mod : res.built)
      fs::rename(tmp / (mod + ".fatbin"), o.out / (mod + ".fatbin"));
    for (const char* f : {"build_report.json", "cuobjdump.txt", "manifest.json"})
      fs::rename(tmp / f, o.out / f);
  } catch (const std::exception& e) {
    res.problems.push_back(std::string("--out: ") + e.what());
    return res;
  }
  progress(o, "wrote " + join(res.built, ", ") + " to " + o.out.string());
  res.status = 0;
  return res;
}

FatbinCheckResult check_fatbin_dir(const fs::path& dir, const fs::path& sources) {
  FatbinCheckResult r;
  FatbinManifest m;
  try {
    m = read_manifest(dir / std::string(kManifestName));
  } catch (const std::exception& e) {
    r.status = 2;
    r.problems.push_back(e.what());
    return r;
  }
  auto problem = [&](const std::string& p) {
    r.problems.push_back(p);
    r.status = std::max(r.status, 1);
  };

  // The sources.
  if (sources.empty()) {
    if (m.source_sha256 != sources_sha256())
      problem("stale: manifest source_sha256 " + m.source_sha256 +
              " differs from the embedded kernel sources' " + sources_sha256() +
              " (rebuild: make fatbins)");
  } else {
    SourceDir sd;
    try {
      sd = read_source_dir(sources);
    } catch (const std::exception& e) {
      r.status = 2;
      r.problems.push_back(std::string("--sources: ") + e.what());
      return r;
    }
    std::vector<SourceFile> files;
    for (std::size_t i = 0; i < sd.names.size(); ++i)
      files.push_back({sd.names[i], sd.contents[i]});
    const std::string got = sources_sha256_of(files);
    if (got != m.source_sha256) {
      const std::string where = support::printable(sources.string(), 200);
      problem("stale: manifest source_sha256 " + m.source_sha256 + " differs from " + where +
              "'s " + got + " (rebuild: make fatbins)");
      // Which files: only knowable when the embedded copy is what the manifest was built from.
      if (m.source_sha256 == sources_sha256()) {
        for (const auto& f : kernel_source_files()) {
          const auto it = std::find(sd.names.begin(), sd.names.end(), f.name);
          if (it == sd.names.end())
            problem("stale: " + std::string(f.name) + " is missing from " + where);
          else if (sd.contents[static_cast<std::size_t>(it - sd.names.begin())] != f.content)
            problem("stale: " + std::string(f.name) + " in " + where +
                    " differs from the source the fatbins were built from");
        }
        for (const auto& n : sd.names) {
          bool known = false;
          for (const auto& f : kernel_source_files())
            known = known || f.name == n;
          if (!known)
            problem("stale: " + support::printable(n) + " in " + where +
                    " is not among the sources the fatbins were built from");
        }
      }
    }
  }

  // The modules.
  for (const KernelSpec& spec : kernel_specs()) {
    const std::string module = module_of(spec);
    const FatbinEntry* e = m.find(module);
    if (!e) {
      problem("manifest.json: module " + module + " has no entry");
      continue;
    }
    if (e->sass != to_vec(spec.sass) || e->ptx.value_or(0) != spec.ptx)
      problem("manifest.json: module " + module +
              ": architectures differ from its KernelSpec's (rebuild: make fatbins)");
  }
  for (const FatbinEntry& e : m.modules) {
    if (!find_kernel_spec(e.module) &&
        std::none_of(kernel_specs().begin(), kernel_specs().end(),
                     [&](const KernelSpec& s) { return module_of(s) == e.module; }))
      problem("manifest.json: module " + support::printable(e.module) + " is not a kernel");
    const fs::path file = dir / e.file;
    const std::string shown = support::printable(file.string(), 200);
    try {
      const std::string bytes = support::read_input_file(file, kMaxFatbinBytes, "fatbin");
      const std::string got = support::sha256_hex(bytes);
      if (got != e.sha256) {
        problem(shown + ": sha256 " + got + ", the manifest says " + e.sha256);
        continue;
      }
      for (const auto& p : compare_listing(list_fatbin(bytes), e.sass, e.ptx.value_or(0)))
        problem(shown + ": " + p);
    } catch (const std::exception& ex) {
      problem(shown + ": " + ex.what());
    }
  }
  return r;
}

} // namespace mmaemu::kernels
