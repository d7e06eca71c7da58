// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/fatbin_manifest.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "lower_hex.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/json_input.hpp"
#include "mmaemu/support/text.hpp"

#ifndef MMAEMU_SOURCE_FATBIN_DIR
#define MMAEMU_SOURCE_FATBIN_DIR "kernels/bin"
#endif

namespace mmaemu::kernels {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string shown(std::string_view s) {
  return support::printable(s, 128);
}

bool plain_word(std::string_view s) {
  if (s.empty() || s.size() > 64)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool plain_file_name(std::string_view s) {
  if (s.empty() || s.size() > 255 || s.front() == '.')
    return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '/' || c == '\\' || c == '\0' || static_cast<unsigned char>(c) < 0x20;
  });
}

bool arch_ok(int a) {
  return a >= 30 && a <= 199;
}

// A manifest nests 4 levels (modules[i].sass); deeper input is refused while it is parsed.
constexpr support::JsonLimits kManifestJsonLimits{kMaxManifestBytes, 16};
constexpr const char* kModuleSchema = "a mmaemu-fatbin/1 module";

// An architecture: an integer JSON number (never 75.0 or "75") in range.
int arch_value(const json& v, const support::JsonLocation& at) {
  return static_cast<int>(support::json_integer(v, at, 30, 199));
}

// Unknown keys are errors at every level (no_other_keys): a misspelt key ("PTX", "sha_256")
// must not be ignored in silence, and nothing rides along unchecked in a file the loader
// trusts. Strings may be empty here: validate_manifest names what an empty one breaks.
FatbinManifest from_json(const json& j, const std::string& origin) {
  if (!j.is_object())
    throw ManifestError(origin + ": not a JSON object");
  support::JsonObjectReader top(j, support::JsonLocation(origin), std::string(kFatbinFormat));
  FatbinManifest m;
  m.format = top.string("format", true);
  if (m.format != kFatbinFormat) {
    throw ManifestError(origin + ": format is '" + shown(m.format) + "', not " +
                        std::string(kFatbinFormat));
  }
  m.source_sha256 = top.string("source_sha256", true);
  m.nvcc = top.optional_string("nvcc", true).value_or(m.nvcc);
  m.flags = top.optional_strings("flags");
  const json& mods = top.array("modules");
  for (std::size_t i = 0; i < mods.size(); ++i) {
    support::JsonObjectReader entry(mods[i], top.at("modules").index(i), kModuleSchema);
    FatbinEntry fe;
    fe.module = entry.string("module", true);
    fe.file = entry.string("file", true);
    fe.sha256 = entry.string("sha256", true);
    const json& sass = entry.array("sass");
    for (std::size_t k = 0; k < sass.size(); ++k)
      fe.sass.push_back(arch_value(sass[k], entry.at("sass").index(k)));
    const json* ptx = entry.find("ptx");
    if (ptx && !ptx->is_null())
      fe.ptx = arch_value(*ptx, entry.at("ptx"));
    entry.no_other_keys();
    m.modules.push_back(std::move(fe));
  }
  top.no_other_keys();
  return m;
}

nlohmann::ordered_json to_json(const FatbinManifest& m) {
  using ojson = nlohmann::ordered_json;
  ojson mods = ojson::array();
  for (const FatbinEntry& e : m.modules) {
    ojson o = ojson::object();
    o["module"] = e.module;
    o["file"] = e.file;
    o["sha256"] = e.sha256;
    o["sass"] = e.sass;
    o["ptx"] = e.ptx ? ojson(*e.ptx) : ojson(nullptr);
    mods.push_back(std::move(o));
  }
  ojson j = ojson::object();
  j["format"] = m.format;
  j["source_sha256"] = m.source_sha256;
  j["nvcc"] = m.nvcc;
  j["flags"] = m.flags;
  j["modules"] = std::move(mods);
  return j;
}

// The folder of the running executable, if /proc says.
std::optional<fs::path> exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return std::nullopt;
  return exe.parent_path();
}

std::string stem_of(std::string_view source) {
  const auto dot = source.rfind('.');
  return std::string(dot == std::string_view::npos ? source : source.substr(0, dot));
}

std::string arch_list(const std::vector<int>& v) {
  std::string s;
  for (int a : v)
    s += (s.empty() ? "" : ",") + std::to_string(a);
  return "[" + s + "]";
}

} // namespace

const FatbinEntry* FatbinManifest::find(std::string_view module) const {
  for (const FatbinEntry& e : modules) {
    if (e.module == module)
      return &e;
  }
  return nullptr;
}

void validate_manifest(const FatbinManifest& m) {
  if (m.format != kFatbinFormat) {
    throw ManifestError("manifest: format is '" + shown(m.format) + "', not " +
                        std::string(kFatbinFormat));
  }
  if (!detail::is_lower_hex(m.source_sha256, 64)) {
    throw ManifestError("manifest: source_sha256 '" + shown(m.source_sha256) +
                        "' is not 64 lower-case hex digits");
  }
  std::set<std::string> seen;
  for (const FatbinEntry& e : m.modules) {
    if (!plain_word(e.module))
      throw ManifestError("manifest: module name '" + shown(e.module) + "' is not a plain word");
    if (!seen.insert(e.module).second)
      throw ManifestError("manifest: module '" + shown(e.module) + "' is listed twice");
    if (!plain_file_name(e.file)) {
      throw ManifestError("manifest: module " + e.module + ": file '" + shown(e.file) +
                          "' is not a plain file name (no '/', no leading '.')");
    }
    if (!detail::is_lower_hex(e.sha256, 64)) {
      throw ManifestError("manifest: module " + e.module + ": sha256 '" + shown(e.sha256) +
                          "' is not 64 lower-case hex digits");
    }
    for (int a : e.sass) {
      if (!arch_ok(a)) {
        throw ManifestError("manifest: module " + e.module + ": SASS architecture " +
                            std::to_string(a) + " is out of range");
      }
    }
    if (e.ptx && !arch_ok(*e.ptx)) {
      throw ManifestError("manifest: module " + e.module + ": PTX architecture " +
                          std::to_string(*e.ptx) + " is out of range");
    }
    if (e.sass.empty() && !e.ptx)
      throw ManifestError("manifest: module " + e.module + " has neither SASS nor PTX");
  }
}

FatbinManifest parse_manifest(std::string_view text, std::string_view origin) {
  const std::string where = support::printable(origin, 256);
  FatbinManifest m;
  try {
    m = from_json(support::parse_json_input(text, where, kManifestJsonLimits), where);
  } catch (const support::JsonInputError& e) {
    throw ManifestError(e.what());
  } catch (const ManifestError&) {
    throw;
  } catch (const std::exception& e) {
    throw ManifestError(where + ": " + support::printable(e.what(), 200));
  }
  try {
    validate_manifest(m);
  } catch (const ManifestError& e) {
    // "manifest: ..." -> "<origin>: ..."
    std::string msg = e.what();
    if (msg.rfind("manifest: ", 0) == 0)
      msg = msg.substr(10);
    throw ManifestError(where + ": " + msg);
  }
  return m;
}

FatbinManifest read_manifest(const fs::path& path) {
  std::string text;
  try {
    text = support::read_input_file(path, kMaxManifestBytes, "fatbin manifest");
  } catch (const support::FileError& e) {
    throw ManifestError(e.what());
  }
  return parse_manifest(text, path.string());
}

std::string manifest_to_json(const FatbinManifest& m) {
  validate_manifest(m);
  return to_json(m).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_manifest(const fs::path& path, const FatbinManifest& m) {
  support::write_file_atomic(path, manifest_to_json(m), 0644);
}

fs::path fatbin_dir() {
  const char* forced = std::getenv("MMAEMU_FATBIN_DIR");
  if (forced && *forced)
    return fs::path(forced);
  std::vector<fs::path> candidates;
  if (auto dir = exe_dir()) {
    candidates.push_back(*dir / "kernels" / "bin");
    candidates.push_back(*dir / ".." / "share" / "mmaemu" / "kernels" / "bin");
  }
  const fs::path source_tree = MMAEMU_SOURCE_FATBIN_DIR;
  candidates.push_back(source_tree);
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c, ec))
      return c.lexically_normal();
  }
  return source_tree;
}

bool sass_runs_on(int sass, int cc) {
  return sass / 10 == cc / 10 && cc % 10 >= sass % 10;
}

bool ptx_runs_on(int ptx, int cc) {
  return cc >= ptx;
}

bool can_run(const FatbinEntry& entry, int cc) {
  for (int s : entry.sass) {
    if (sass_runs_on(s, cc))
      return true;
  }
  return entry.ptx && ptx_runs_on(*entry.ptx, cc);
}

std::vector<std::string> check_fatbins(const fs::path& dir) {
  std::vector<std::string> problems;
  FatbinManifest m;
  try {
    m = read_manifest(dir / kManifestName);
  } catch (const ManifestError& e) {
    problems.push_back(e.what());
    return problems;
  }
  if (m.source_sha256 != sources_sha256()) {
    problems.push_back("stale: manifest source_sha256 " + m.source_sha256 +
                       " differs from the kernel sources' " + sources_sha256());
  }
  for (const KernelSpec& spec : kernel_specs()) {
    const std::string module = stem_of(spec.source);
    const FatbinEntry* e = m.find(module);
    if (!e) {
      problems.push_back("module " + module + " (cuda:" + std::string(spec.name) +
                         ") has no manifest entry");
      continue;
    }
    const std::vector<int> want_sass(spec.sass.begin(), spec.sass.end());
    if (e->sass != want_sass || e->ptx.value_or(0) != spec.ptx) {
      problems.push_back("module " + module + ": architectures sass " + arch_list(e->sass) +
                         " ptx " + (e->ptx ? std::to_string(*e->ptx) : "none") +
                         " differ from its KernelSpec's sass " + arch_list(want_sass) + " ptx " +
                         (spec.ptx != 0 ? std::to_string(spec.ptx) : "none"));
    }
  }
  for (const FatbinEntry& e : m.modules) {
    const fs::path file = dir / e.file;
    try {
      const std::string got = support::sha256_file(file, kMaxFatbinBytes);
      if (got != e.sha256) {
        problems.push_back("module " + e.module + ": " + support::printable(file.string(), 256) +
                           " has sha256 " + got + ", the manifest says " + e.sha256);
      }
    } catch (const support::FileError& err) {
      problems.push_back("module " + e.module + ": " + err.what());
    }
  }
  return problems;
}

} // namespace mmaemu::kernels
