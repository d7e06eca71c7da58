// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// SHA-256 and base64, both from OpenSSL, in one place.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::support {

// The SHA-256 digest of `bytes`, 32 raw bytes.
std::string sha256_raw(std::string_view bytes);

// The SHA-256 digest as lower-case hex.
std::string sha256_hex(std::string_view bytes);
std::string sha256_hex(const void* data, std::size_t size);

// The SHA-256 of a regular file (check_input_file rules, `max_bytes`), streamed. Throws
// FileError naming the file.
std::string sha256_file(const std::filesystem::path& path,
                        std::uint64_t max_bytes = std::uint64_t{1} << 40);

// A whole input file (read_input_file's rules, `max_bytes`, `what` naming its role), read once
// with the SHA-256 of its bytes computed while they are read. Throws FileError.
struct HashedFile {
  std::string bytes;
  std::string sha256; // lower-case hex
};
HashedFile read_input_file_hashed(const std::filesystem::path& path, std::uint64_t max_bytes,
                                  std::string_view what);

// Standard base64 (RFC 4648 section 4, '=' padding).
std::string base64_encode(std::string_view bytes);

// Nothing unless `text` is canonical padded base64: length a multiple of 4, the standard
// alphabet, padding only at the end, zero pad bits.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace mmaemu::support
