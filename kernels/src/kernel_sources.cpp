// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/kernel_sources.hpp"

#include <algorithm>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

namespace embedded {
// kernel_sources_embedded.cpp, generated from kernel_sources.cpp.in.
extern const SourceFile kFiles[];
extern const std::size_t kFileCount;
} // namespace embedded

std::span<const SourceFile> kernel_source_files() {
  return {embedded::kFiles, embedded::kFileCount};
}

std::string_view kernel_source(std::string_view name) {
  for (const SourceFile& f : kernel_source_files()) {
    if (f.name == name)
      return f.content;
  }
  throw ValueError("kernel source '" + support::printable(name) +
                   "' is not embedded (kernels/cuda/ at configure time)");
}

std::vector<SourceFile> kernel_headers() {
  std::vector<SourceFile> out;
  for (const SourceFile& f : kernel_source_files()) {
    if (f.name.size() >= 4 && f.name.substr(f.name.size() - 4) == ".cuh")
      out.push_back(f);
  }
  return out;
}

std::string sources_sha256_of(std::span<const SourceFile> files) {
  std::vector<SourceFile> sorted(files.begin(), files.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const SourceFile& x, const SourceFile& y) { return x.name < y.name; });
  std::string bytes;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i].name == sorted[i - 1].name) {
      throw ValueError("kernel source '" + support::printable(sorted[i].name) +
                       "' is listed twice");
    }
    bytes.append(sorted[i].name);
    bytes.push_back('\0');
    bytes.append(sorted[i].content);
    bytes.push_back('\0');
  }
  return support::sha256_hex(bytes);
}

const std::string& sources_sha256() {
  static const std::string h = sources_sha256_of(kernel_source_files());
  return h;
}

} // namespace mmaemu::kernels
