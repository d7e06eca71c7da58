// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/ed25519.hpp"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mmaemu::reports {

namespace fs = std::filesystem;

namespace {

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0)
    return "no OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

std::shared_ptr<EVP_PKEY> own(EVP_PKEY* p) {
  return {p, EVP_PKEY_free};
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::string bio_text(BIO* b) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

std::string read_small_file(const fs::path& path, const char* what) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw SigningError(path.string() + ": " + what + " cannot be read");
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    s.append(buf, n);
  std::fclose(f);
  return s;
}

// Creates `path` with `mode` (failing if it exists), writing it under a temporary name first.
void write_new_file(const fs::path& path, const std::string& content, mode_t mode) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const fs::path tmp = dir / ("." + path.filename().string() + ".tmp." +
                              std::to_string(::getpid()) + "." + std::to_string(counter++));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    throw SigningError(path.string() + ": cannot be written (" + std::strerror(errno) + ")");
  const char* p = content.data();
  std::size_t left = content.size();
  bool ok = true;
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w <= 0) {
      ok = false;
      break;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  // link() fails if the target exists, so an existing key is never replaced.
  if (ok && ::link(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw SigningError(path.string() + ": " +
                       (err == EEXIST
                            ? std::string("exists; refusing to overwrite a key file")
                            : "cannot be written (" + std::string(std::strerror(err)) + ")"));
  }
  ::unlink(tmp.c_str());
  if (!ok)
    throw SigningError(path.string() + ": write failed");
}

} // namespace

fs::path public_key_path(const fs::path& private_key) {
  fs::path p = private_key;
  if (p.extension() == ".pem")
    return p.replace_extension(".pub");
  return fs::path(p.string() + ".pub");
}

KeyFiles generate_key(const fs::path& private_key) {
  KeyFiles files{private_key, public_key_path(private_key)};
  if (files.public_key == files.private_key) {
    throw SigningError(private_key.string() + ": a private key must not end in .pub");
  }
  std::error_code ec;
  if (fs::exists(files.private_key, ec) || fs::exists(files.public_key, ec)) {
    throw SigningError(
        (fs::exists(files.private_key, ec) ? files.private_key : files.public_key).string() +
        ": exists; refusing to overwrite a key file");
  }
  EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (!raw)
    throw SigningError("Ed25519 key generation failed: " + openssl_error());
  const Key key(own(raw));

  BioPtr priv(BIO_new(BIO_s_mem()));
  if (!priv ||
      PEM_write_bio_PrivateKey(priv.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw SigningError("cannot encode the private key: " + openssl_error());
  }
  write_new_file(files.private_key, bio_text(priv.get()), 0600);
  try {
    write_new_file(files.public_key, public_key_pem(key), 0644);
  } catch (...) {
    ::unlink(files.private_key.c_str()); // a private key without its public half is useless
    throw;
  }
  return files;
}

Key load_private_key(const fs::path& path) {
  const std::string pem = read_small_file(path, "private key");
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (!raw) {
    ERR_clear_error();
    throw SigningError(path.string() + ": not a PEM private key");
  }
  Key key(own(raw));
  if (EVP_PKEY_get_base_id(raw) != EVP_PKEY_ED25519) {
    throw SigningError(path.string() + ": not an Ed25519 key");
  }
  return key;
}

Key load_public_key(const fs::path& path) {
  const std::string pem = read_small_file(path, "public key");
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EVP_PKEY* raw = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (!raw) {
    ERR_clear_error();
    throw SigningError(path.string() + ": not a PEM public key");
  }
  Key key(own(raw));
  if (EVP_PKEY_get_base_id(raw) != EVP_PKEY_ED25519) {
    throw SigningError(path.string() + ": not an Ed25519 key");
  }
  return key;
}

std::string fingerprint(const Key& key) {
  unsigned char* der = nullptr;
  const int n = i2d_PUBKEY(key.get(), &der);
  if (n <= 0)
    throw SigningError("cannot encode the public key: " + openssl_error());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  const int ok = EVP_Digest(der, static_cast<std::size_t>(n), md, &md_len, EVP_sha256(), nullptr);
  OPENSSL_free(der);
  if (ok != 1)
    throw SigningError("sha256 failed: " + openssl_error());
  static const char* hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned i = 0; i < md_len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

std::string public_key_pem(const Key& key) {
  BioPtr pub(BIO_new(BIO_s_mem()));
  if (!pub || PEM_write_bio_PUBKEY(pub.get(), key.get()) != 1) {
    throw SigningError("cannot encode the public key: " + openssl_error());
  }
  return bio_text(pub.get());
}

std::string sign_bytes(const Key& private_key, std::string_view message) {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, private_key.get()) != 1) {
    throw SigningError("cannot start signing: " + openssl_error());
  }
  std::size_t len = kSignatureBytes;
  std::string sig(kSignatureBytes, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      len != kSignatureBytes) {
    throw SigningError("signing failed: " + openssl_error());
  }
  return sig;
}

bool verify_bytes(const Key& public_key, std::string_view message, std::string_view signature) {
  if (signature.size() != kSignatureBytes)
    return false;
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, public_key.get()) != 1) {
    ERR_clear_error();
    return false;
  }
  const int r = EVP_DigestVerify(
      ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
      reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();
  return r == 1;
}

} // namespace mmaemu::reports
