// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu fatbin build` (build_fatbins): the modules compiled with nvcc into a temporary folder
// beside the output, each checked (ptxas spills, forbidden PTX, its listing against its
// KernelSpec), then the fatbins, build_report.json, cuobjdump.txt and manifest.json (last) moved
// into place; with a subset of modules, the other entries of an existing manifest are kept.

#include "mmaemu/kernels/fatbin_build.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "fatbin_build_internal.hpp"
#include "kernel_module.hpp"
#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/process.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

using detail::compute;
using detail::contains_ci;
using detail::Cuobjdump;
using detail::find_cuobjdump;
using detail::module_of;
using detail::sm;
using detail::split_lines;
using detail::to_vec;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

} // namespace mmaemu::kernels
