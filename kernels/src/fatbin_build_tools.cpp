// SPDX-License-Identifier: BSD-2-Clause
// The CUDA tools of the fatbin build: the nvcc to use (find_nvcc's order), its version
// (parse_nvcc_version), and a cuobjdump of at least 12.8 to list what it built.

#include <unistd.h>

#include <cstdlib>
#include <regex>

#include "fatbin_build_internal.hpp"
#include "mmaemu/support/process.hpp"

namespace mmaemu::kernels {

namespace {

namespace fs = std::filesystem;

} // namespace

namespace detail {

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

} // namespace detail

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

} // namespace mmaemu::kernels
