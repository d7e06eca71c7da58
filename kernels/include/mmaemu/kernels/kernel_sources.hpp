// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The kernel sources of kernels/cuda/ (every *.cu and *.cuh), embedded in the library at
// configure time: NVRTC compiles them at run time, and their hash decides whether a release
// fatbin is stale.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu::kernels {

// One source file: its name in kernels/cuda/ ("v1.cu") and its exact bytes.
struct SourceFile {
  std::string_view name;
  std::string_view content;
};

// Every embedded file, sorted by name (byte order).
std::span<const SourceFile> kernel_source_files();

// The content of `name` ("v1.cu", "mmaemu_chain.cuh"). Throws ValueError naming it when it
// is not embedded.
std::string_view kernel_source(std::string_view name);

// The *.cuh files, sorted by name: NVRTC's in-memory headers.
std::vector<SourceFile> kernel_headers();

// sources_sha256_of(kernel_source_files()): the manifest's source_sha256.
const std::string& sources_sha256();

// The definition, for any set of files (the fatbin tool hashes the files on disk with it):
// lower-case hex SHA-256 over, for each file in byte order of its name, the name, one NUL
// byte, the content, one NUL byte. `files` need not be sorted; names must be unique
// (ValueError naming a duplicate).
std::string sources_sha256_of(std::span<const SourceFile> files);

} // namespace mmaemu::kernels
