// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu fatbin check` (check_fatbin_dir): hashes only, no nvcc. A fatbin folder's manifest
// against its files and the KernelSpecs, and its source_sha256 against the embedded sources or
// a folder of them.

#include <algorithm>

#include "fatbin_build_internal.hpp"
#include "kernel_module.hpp"
#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

using detail::module_of;
using detail::to_vec;

namespace {

namespace fs = std::filesystem;

} // namespace

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
