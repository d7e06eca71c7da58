// SPDX-License-Identifier: BSD-2-Clause
// mmaemu fatbin build [--release] [--out DIR] [--nvcc PATH] [--modules v1,h4] [--sources DIR]
//                    [--allow-spills] [--json PATH]
// mmaemu fatbin check [--dir DIR] [--sources DIR] [--json PATH]
//
// build: exit 0 when every module was built, checked and moved into place; 1 when nvcc or a
// check failed (the old files are left as they were); 2 for bad arguments (unknown module, no
// nvcc, nvcc older than 12.8, no sources).
// check: no nvcc, hashes only; exit 0 consistent, 1 stale or mismatched (each problem on its
// own line naming the file), 2 damaged manifest or bad arguments.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mmaemu/kernels/fatbin_build.hpp"
#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct BuildArgs {
  bool release = false;
  std::string out;
  std::string nvcc;
  std::vector<std::string> modules;
  std::string sources;
  bool allow_spills = false;
  JsonOption json;
};

struct CheckArgs {
  std::string dir;
  std::string sources;
  JsonOption json;
};

int run_build(const BuildArgs& a) {
  try {
    a.json.check();
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  kernels::FatbinBuildOptions o;
  o.release = a.release;
  o.out = a.out.empty() ? std::filesystem::path("build/fatbin") : std::filesystem::path(a.out);
  o.nvcc = a.nvcc;
  o.modules = a.modules;
  o.sources = a.sources;
  o.allow_spills = a.allow_spills;
  o.progress = [](const std::string& line) { std::cerr << line << '\n' << std::flush; };
  const kernels::FatbinBuildResult r = kernels::build_fatbins(o);
  if (a.json.given()) {
    nlohmann::json j;
    j["format"] = "mmaemu-fatbin-build/1";
    j["status"] = r.status;
    j["out"] = o.out.string();
    j["nvcc"] = r.nvcc_version;
    j["source_sha256"] = r.source_sha256;
    j["built"] = r.built;
    j["problems"] = r.problems;
    if (!r.report_json.empty())
      j["report"] = nlohmann::json::parse(r.report_json, nullptr, false);
    try {
      a.json.write(j);
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  for (const auto& p : r.problems)
    error_line("fatbin build: " + p);
  if (r.status == 0)
    std::printf("fatbin build: %zu module(s) in %s (nvcc %s)\n", r.built.size(),
                o.out.string().c_str(), r.nvcc_version.c_str());
  else if (r.status == 1)
    error_line("fatbin build: failed; " + o.out.string() + " was left as it was");
  return r.status == 0 ? kOk : r.status == 1 ? kFailed : kUsage;
}

int run_check(const CheckArgs& a) {
  try {
    a.json.check();
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  const std::filesystem::path dir =
      a.dir.empty() ? kernels::fatbin_dir() : std::filesystem::path(a.dir);
  const kernels::FatbinCheckResult r = kernels::check_fatbin_dir(dir, a.sources);
  if (a.json.given()) {
    nlohmann::json j;
    j["format"] = "mmaemu-fatbin-check/1";
    j["dir"] = dir.string();
    j["sources"] = a.sources.empty() ? std::string("embedded") : a.sources;
    j["status"] = r.status;
    j["consistent"] = r.status == 0;
    j["problems"] = r.problems;
    try {
      a.json.write(j);
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  for (const auto& p : r.problems)
    error_line("fatbin check: " + p);
  if (r.status == 0)
    std::printf("fatbin check: %s is consistent with the %s sources\n", dir.string().c_str(),
                a.sources.empty() ? "embedded" : a.sources.c_str());
  return r.status == 0 ? kOk : r.status == 1 ? kFailed : kUsage;
}

} // namespace

void add_fatbin(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("fatbin", "Build or check the release fatbins (nvcc)");
  cmd->require_subcommand(1);

  auto b = std::make_shared<BuildArgs>();
  CLI::App* build = cmd->add_subcommand(
      "build", "Compile kernels/cuda with nvcc >= 12.8 into fatbins + manifest.json");
  build->add_flag("--release", b->release, "Release flags (-O3 --fmad=false, no -lineinfo)");
  build->add_option("--out", b->out, "Output folder (default build/fatbin)");
  build->add_option("--nvcc", b->nvcc, "nvcc to use (default $NVCC, $CUDA_HOME/bin, PATH)");
  build->add_option("--modules", b->modules, "Modules to rebuild (others stay in the manifest)")
      ->delimiter(',');
  build->add_option("--sources", b->sources,
                    "Kernel source folder (default: the kernels/cuda this mmaemu was built from)");
  build->add_flag("--allow-spills", b->allow_spills, "Accept ptxas register spills");
  b->json.add(*build, "Also write the result and build report");
  build->callback([b, &exit_code] { exit_code = run_build(*b); });

  auto c = std::make_shared<CheckArgs>();
  CLI::App* check =
      cmd->add_subcommand("check", "Hash-only staleness check of fatbins and manifest (no nvcc)");
  check->add_option("--dir", c->dir, "Fatbin folder (default: where mmaemu loads them from)");
  check->add_option("--sources", c->sources,
                    "Compare with this kernel source folder instead of the embedded sources");
  c->json.add(*check, "Also write the result");
  check->callback([c, &exit_code] { exit_code = run_check(*c); });
}

} // namespace mmaemu::cli
