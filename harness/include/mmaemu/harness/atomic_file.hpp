// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Writing a whole file or nothing: a temporary name beside the target, then rename.

#include <filesystem>
#include <string>

namespace mmaemu::harness {

// Writes `content` to `path` atomically. Throws std::runtime_error naming the path.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

}  // namespace mmaemu::harness
