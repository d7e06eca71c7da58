// SPDX-License-Identifier: BSD-2-Clause
// The kernel sources a fatbin build compiles: the *.cu and *.cuh files of a folder, their
// sources_sha256, and the kernels/cuda folder this binary was built from (compiled in: this file
// has its own compile definition, MMAEMU_KERNEL_SOURCE_DIR_PATH, kernels/CMakeLists.txt).

#include <algorithm>
#include <cstdint>

#include "fatbin_build_internal.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

#ifndef MMAEMU_KERNEL_SOURCE_DIR_PATH
#define MMAEMU_KERNEL_SOURCE_DIR_PATH ""
#endif

namespace mmaemu::kernels {

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxSourceBytes = 16ull << 20;

} // namespace

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

} // namespace mmaemu::kernels
