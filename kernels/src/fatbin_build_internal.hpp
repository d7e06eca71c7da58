// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Internal to the fatbin build (kernels/src/fatbin_build*.cpp): what its files share.
// fatbin_build.cpp builds the modules with nvcc and moves them into place; fatbin_build_tools.cpp
// finds nvcc and cuobjdump and reads their versions; fatbin_build_ptx.cpp reads what ptxas
// printed and greps the PTX; fatbin_build_listing.cpp lists a fatbin container and compares
// listings; fatbin_build_sources.cpp reads a folder of kernel sources; fatbin_build_check.cpp
// checks a fatbin folder against its manifest (`mmaemu fatbin check`).

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmaemu/kernels/fatbin_build.hpp"

namespace mmaemu::kernels::detail {

// The lines of `text`, without their '\n' or "\r\n".
inline std::vector<std::string> split_lines(std::string_view text) {
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

// "sm_90" and "compute_90" for arch 90.
inline std::string sm(int arch) {
  return "sm_" + std::to_string(arch);
}
inline std::string compute(int arch) {
  return "compute_" + std::to_string(arch);
}

// Whether `hay` contains `needle`, ignoring ASCII case.
inline bool contains_ci(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

// An architecture list of a KernelSpec as the manifest holds it.
inline std::vector<int> to_vec(std::span<const int> s) {
  return {s.begin(), s.end()};
}

struct Cuobjdump {
  std::filesystem::path path;
  std::string version;
};

// A cuobjdump of at least 12.8 next to nvcc or in PATH (older ones cannot read sm_100/120).
std::optional<Cuobjdump> find_cuobjdump(const std::filesystem::path& nvcc);

} // namespace mmaemu::kernels::detail
