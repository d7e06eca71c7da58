// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Ed25519 keys and signatures through OpenSSL 3 EVP (EVP_PKEY_ED25519, EVP_DigestSign with
// no digest). Keys are PEM files: PKCS#8 private keys, SubjectPublicKeyInfo public keys.

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

struct evp_pkey_st; // OpenSSL's EVP_PKEY

namespace mmaemu::reports {

// A key or signature that cannot be made, read or used; the message names the file.
class SigningError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::size_t kSignatureBytes = 64;

// An Ed25519 key, private or public only.
class Key {
public:
  Key() = default;
  explicit Key(std::shared_ptr<evp_pkey_st> pkey) : pkey_(std::move(pkey)) {}
  evp_pkey_st* get() const { return pkey_.get(); }
  explicit operator bool() const { return pkey_ != nullptr; }

private:
  std::shared_ptr<evp_pkey_st> pkey_;
};

// Where keygen put the two halves.
struct KeyFiles {
  std::filesystem::path private_key; // mode 0600
  std::filesystem::path public_key;  // <private without .pem>.pub
};

// The public key file beside a private key file: KEY.pem -> KEY.pub, KEY -> KEY.pub.
std::filesystem::path public_key_path(const std::filesystem::path& private_key);

// Makes a new key pair: the private key created with mode 0600, the public key 0644. Refuses
// (SigningError) a path ending in .pub (that name is for the public half) and to overwrite an
// existing private or public key file; writes each file whole or not at all.
KeyFiles generate_key(const std::filesystem::path& private_key);

// Read a key file (support::read_input_file, at most support::kMaxKeyBytes: a FIFO, a device
// or an oversized file is refused at once). Throw SigningError naming the file if it cannot be
// read, does not hold exactly one PEM block and nothing else (single_pem_block: two keys, or a
// key with trailing data, are refused, never signed with the first), is not an Ed25519 key, or
// (private keys) is encrypted (never prompts for a passphrase) or can be read or written by group
// or others (the message says `chmod 600`).
Key load_private_key(const std::filesystem::path& path);
Key load_public_key(const std::filesystem::path& path);

// The same from PEM text already in memory (no mode check); `where` names its origin in
// messages.
Key private_key_from_pem(std::string_view pem, std::string_view where);
Key public_key_from_pem(std::string_view pem, std::string_view where);

// Keys from their raw RFC 8032 encodings: the 32-byte secret key (seed) and the 32-byte public
// key. Throw SigningError if the size is not 32 or OpenSSL refuses the bytes.
Key private_key_from_raw(std::string_view secret);
Key public_key_from_raw(std::string_view public_bytes);

// The 32-byte raw public key of a key (private or public).
std::string raw_public_key(const Key& key);

// "sha256:<hex>" of the DER SubjectPublicKeyInfo of the key's public half.
std::string fingerprint(const Key& key);

// The PEM SubjectPublicKeyInfo of the key's public half.
std::string public_key_pem(const Key& key);

// A 64-byte Ed25519 signature of `message` (raw bytes).
std::string sign_bytes(const Key& private_key, std::string_view message);

// Whether `signature` (raw) is a valid signature of `message` by `public_key`.
bool verify_bytes(const Key& public_key, std::string_view message, std::string_view signature);

} // namespace mmaemu::reports
