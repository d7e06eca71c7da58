// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/ed25519.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "mmaemu/reports/pem_block.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

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

BioPtr memory_bio(std::string_view bytes) {
  // kMaxKeyBytes keeps every key far below INT_MAX; a larger view is cut, and then fails to
  // parse, rather than overflowing the length.
  const int n = bytes.size() > (1u << 30) ? (1 << 30) : static_cast<int>(bytes.size());
  return BioPtr(BIO_new_mem_buf(bytes.data(), n));
}

// OpenSSL's password callback. Without one, PEM_read_bio_PrivateKey asks for a passphrase
// on the terminal and a tier run blocks; this one records that a passphrase was wanted and
// refuses.
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* asked) {
  if (asked)
    *static_cast<bool*>(asked) = true;
  return -1;
}

std::string read_key_file(const fs::path& path, const char* what) {
  try {
    return support::read_input_file(path, support::kMaxKeyBytes, what);
  } catch (const support::FileError& e) {
    throw SigningError(e.what());
  }
}

Key require_ed25519(EVP_PKEY* raw, std::string_view where) {
  Key key(own(raw));
  if (EVP_PKEY_get_base_id(raw) != EVP_PKEY_ED25519) {
    throw SigningError(std::string(where) + ": not an Ed25519 key");
  }
  return key;
}

bool ends_with_pub(const fs::path& p) {
  std::string ext = p.extension().string();
  for (char& c : ext)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".pub";
}

// Creates `path` with `mode`, never replacing an existing file.
void write_key_file(const fs::path& path, const std::string& content, unsigned mode) {
  bool created = false;
  try {
    created = support::write_file_exclusive(path, content, mode);
  } catch (const support::FileError& e) {
    throw SigningError(e.what());
  }
  if (!created)
    throw SigningError(support::shown_path(path) + ": exists; refusing to overwrite a key file");
}

} // namespace

fs::path public_key_path(const fs::path& private_key) {
  fs::path p = private_key;
  if (p.extension() == ".pem")
    return p.replace_extension(".pub");
  return fs::path(p.string() + ".pub");
}

KeyFiles generate_key(const fs::path& private_key) {
  if (private_key.filename().empty() || private_key.filename() == "." ||
      private_key.filename() == "..") {
    throw SigningError(support::shown_path(private_key) +
                       ": names a folder, not a private key file");
  }
  if (ends_with_pub(private_key)) {
    throw SigningError(support::shown_path(private_key) +
                       ": a .pub name is for the public key; give the private key's name "
                       "(KEY.pem), and KEY.pub is written beside it");
  }
  KeyFiles files{private_key, public_key_path(private_key)};
  std::error_code ec;
  for (const auto& f : {files.private_key, files.public_key}) {
    if (fs::symlink_status(f, ec).type() != fs::file_type::not_found) {
      throw SigningError(support::shown_path(f) + ": exists; refusing to overwrite a key file");
    }
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
  write_key_file(files.private_key, bio_text(priv.get()), 0600);
  try {
    write_key_file(files.public_key, public_key_pem(key), 0644);
  } catch (...) {
    ::unlink(files.private_key.c_str()); // a private key without its public half is useless
    throw;
  }
  return files;
}

Key load_private_key(const fs::path& path) {
  const std::string pem = read_key_file(path, "private key");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 0077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw SigningError(
        support::shown_path(path) + ": private key can be read or written by group or others " +
        "(mode " + mode + "); refusing to sign with it: chmod 600 " + support::shown_path(path));
  }
  return private_key_from_pem(pem, support::shown_path(path));
}

Key private_key_from_pem(std::string_view pem, std::string_view where) {
  // Exactly one key and nothing else: OpenSSL alone would take the first of two.
  const PemBlock block = single_pem_block(pem, where);
  if (block.label != "PRIVATE KEY" && block.label != "ENCRYPTED PRIVATE KEY") {
    throw SigningError(std::string(where) + ": not a PEM private key (its block is " + block.label +
                       ", not PRIVATE KEY)");
  }
  BioPtr bio = memory_bio(pem);
  bool asked = false;
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, &asked);
  if (!raw) {
    ERR_clear_error();
    if (asked) {
      throw SigningError(std::string(where) +
                         ": private key is encrypted; mmaemu never asks for a passphrase: "
                         "use an unencrypted PKCS#8 key with mode 0600 (mmaemu report keygen)");
    }
    throw SigningError(std::string(where) + ": not a PEM private key");
  }
  return require_ed25519(raw, where);
}

Key public_key_from_pem(std::string_view pem, std::string_view where) {
  const PemBlock block = single_pem_block(pem, where);
  if (block.label != "PUBLIC KEY") {
    throw SigningError(std::string(where) + ": not a PEM public key (its block is " + block.label +
                       ", not PUBLIC KEY)");
  }
  BioPtr bio = memory_bio(pem);
  bool asked = false;
  EVP_PKEY* raw = bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, &asked) : nullptr;
  if (!raw) {
    ERR_clear_error();
    throw SigningError(std::string(where) + ": not a PEM public key");
  }
  return require_ed25519(raw, where);
}

Key load_public_key(const fs::path& path) {
  return public_key_from_pem(read_key_file(path, "public key"), support::shown_path(path));
}

Key private_key_from_raw(std::string_view secret) {
  if (secret.size() != 32) {
    throw SigningError("an Ed25519 secret key is 32 bytes, not " + std::to_string(secret.size()));
  }
  EVP_PKEY* raw = EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(secret.data()), 32);
  if (!raw)
    throw SigningError("OpenSSL refused the Ed25519 secret key: " + openssl_error());
  return Key(own(raw));
}

Key public_key_from_raw(std::string_view public_bytes) {
  if (public_bytes.size() != 32) {
    throw SigningError("an Ed25519 public key is 32 bytes, not " +
                       std::to_string(public_bytes.size()));
  }
  EVP_PKEY* raw = EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(public_bytes.data()), 32);
  if (!raw)
    throw SigningError("OpenSSL refused the Ed25519 public key: " + openssl_error());
  return Key(own(raw));
}

std::string raw_public_key(const Key& key) {
  std::string out(32, '\0');
  std::size_t len = out.size();
  if (!key ||
      EVP_PKEY_get_raw_public_key(key.get(), reinterpret_cast<unsigned char*>(out.data()), &len) !=
          1 ||
      len != 32) {
    throw SigningError("cannot encode the public key: " + openssl_error());
  }
  return out;
}

std::string fingerprint(const Key& key) {
  unsigned char* der = nullptr;
  const int n = key ? i2d_PUBKEY(key.get(), &der) : 0;
  if (n <= 0)
    throw SigningError("cannot encode the public key: " + openssl_error());
  const std::string hex = support::sha256_hex(der, static_cast<std::size_t>(n));
  OPENSSL_free(der);
  return "sha256:" + hex;
}

std::string public_key_pem(const Key& key) {
  BioPtr pub(BIO_new(BIO_s_mem()));
  if (!pub || !key || PEM_write_bio_PUBKEY(pub.get(), key.get()) != 1) {
    throw SigningError("cannot encode the public key: " + openssl_error());
  }
  return bio_text(pub.get());
}

std::string sign_bytes(const Key& private_key, std::string_view message) {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || !private_key ||
      EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, private_key.get()) != 1) {
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
  if (signature.size() != kSignatureBytes || !public_key)
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
