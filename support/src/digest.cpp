// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/digest.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::support {

namespace {

struct Sha256 {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Sha256() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
      throw std::runtime_error("sha256: OpenSSL digest initialisation failed");
    }
  }
  void update(const void* p, std::size_t n) {
    if (EVP_DigestUpdate(ctx.get(), p, n) != 1)
      throw std::runtime_error("sha256: update failed");
  }
  std::string raw() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), md.data(), &len) != 1) {
      throw std::runtime_error("sha256: final failed");
    }
    return std::string(reinterpret_cast<const char*>(md.data()), len);
  }
};

std::string hex(std::string_view raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

} // namespace

std::string sha256_raw(std::string_view bytes) {
  Sha256 d;
  d.update(bytes.data(), bytes.size());
  return d.raw();
}

std::string sha256_hex(std::string_view bytes) {
  return hex(sha256_raw(bytes));
}

std::string sha256_hex(const void* data, std::size_t size) {
  return sha256_hex(std::string_view(static_cast<const char*>(data), size));
}

std::string sha256_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  check_input_file(path, max_bytes, "file");
  note_whole_file_read();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    throw FileError(printable(path.string(), 256) + ": cannot be read (" + std::strerror(errno) +
                    ")");
  }
  Sha256 d;
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw FileError(printable(path.string(), 256) + ": read error (" + why + ")");
    }
    if (n == 0)
      break;
    d.update(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return hex(d.raw());
}

HashedFile read_input_file_hashed(const std::filesystem::path& path, std::uint64_t max_bytes,
                                  std::string_view what) {
  Sha256 d;
  HashedFile f;
  f.bytes = read_input_file(path, max_bytes, what,
                            [&](std::string_view piece) { d.update(piece.data(), piece.size()); });
  f.sha256 = hex(d.raw());
  return f;
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > (std::size_t{1} << 30))
    return std::nullopt;
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/' || c == '=';
    if (!ok)
      return std::nullopt; // EVP_DecodeBlock would skip whitespace
  }
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0)
    return std::nullopt;
  // EVP_DecodeBlock counts padding as zero bytes: drop them.
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=')
    ++pad;
  if (text.size() >= 2 && text[text.size() - 2] == '=')
    ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  // Canonical only: padding at the end alone, zero pad bits (re-encoding gives the text).
  if (base64_encode(out) != text)
    return std::nullopt;
  return out;
}

} // namespace mmaemu::support
