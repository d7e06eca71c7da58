// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Checking a validation log against the trusted keys.

#include <filesystem>
#include <string>
#include <vector>

#include "mmaemu/reports/trusted_keys.hpp"

namespace mmaemu::reports {

struct LogVerification {
  std::filesystem::path file;
  bool ok = false;
  std::string reason;      // why it failed, or "signed by <key file>"
  std::string fingerprint; // the key the log names, if any
};

// A log verifies when: it is a JSON object in canonical form (canonical_dump of itself) of
// format mmaemu-validation-log/1; it says "signed": true and names a key fingerprint; that
// key is among `keys`; <log>.sig holds exactly one base64 Ed25519 signature; and the
// signature is valid for the log's bytes under that key. Anything else fails, with the reason.
LogVerification verify_log(const std::filesystem::path& log, const TrustedKeys& keys);

// The logs named by `paths`: files as given; folders searched recursively for *.json, skipping
// folders named "keys" or ending in ".out" (tier artefacts), sorted. Throws
// std::runtime_error naming a path that does not exist.
std::vector<std::filesystem::path> collect_logs(const std::vector<std::filesystem::path>& paths);

} // namespace mmaemu::reports
