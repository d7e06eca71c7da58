// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// SHA-256 digests (OpenSSL EVP) as lower-case hex.

#include <cstddef>
#include <filesystem>
#include <string>

namespace mmaemu::recordings {

std::string sha256_hex(const void* data, std::size_t size);

// Throws std::runtime_error naming the file if it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace mmaemu::recordings
