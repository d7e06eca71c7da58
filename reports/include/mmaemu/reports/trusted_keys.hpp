// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The trusted-keys folder (docs/validation_logs/keys/): one PEM public key per *.pub file.

#include <filesystem>
#include <map>
#include <string>

#include "mmaemu/reports/ed25519.hpp"

namespace mmaemu::reports {

struct TrustedKey {
  std::filesystem::path file;
  Key key;
};

struct TrustedKeys {
  std::filesystem::path dir;
  std::map<std::string, TrustedKey> by_fingerprint; // "sha256:<hex>" -> key
};

// Reads every *.pub in `dir` (other files are ignored; a *.pub that is a FIFO or a device is
// refused, not skipped). Throws SigningError if `dir` is not a readable folder or a .pub file
// is not an Ed25519 public key, naming the file.
TrustedKeys load_trusted_keys(const std::filesystem::path& dir);

} // namespace mmaemu::reports
