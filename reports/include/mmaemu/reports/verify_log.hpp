// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Checking a validation log against the trusted keys.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/reports/trusted_keys.hpp"

namespace mmaemu::reports {

struct LogVerification {
  std::filesystem::path file;
  bool ok = false;
  // Not a validation log at all (unreadable, a FIFO or device, over the size limit, not JSON,
  // not of the log format): an ERROR, where a log that does not verify is a FAIL.
  bool error = false;
  std::string reason;      // why it failed, or "signed by <key file>"; echoed text escaped
  std::string fingerprint; // the key the log names, if any (as written in the log)
};

// A log verifies when: it is a JSON object in canonical form (canonical_dump of itself) of
// format mmaemu-validation-log/1; it says "signed": true and names a key fingerprint; that
// key is among `keys`; <log>.sig holds exactly one base64 Ed25519 signature; and the
// signature is valid for the log's bytes under that key. Anything else fails, with the reason.
// The log and its signature are read with support::read_input_file (at most
// support::kMaxTextBytes and support::kMaxKeyBytes; FIFOs and devices refused at once).
// Throws nothing but std::bad_alloc: every problem is in the result.
LogVerification verify_log(const std::filesystem::path& log, const TrustedKeys& keys);

// The same checks on bytes in memory (the parse and verify behind verify_log; the fuzz
// target's entry point): `log_bytes` is the log, `signature_text` the content of its .sig
// file (nullopt: there is none). `log` only names the file in the result and in messages.
// Throws nothing but std::bad_alloc.
LogVerification verify_log_bytes(std::string_view log_bytes,
                                 const std::optional<std::string>& signature_text,
                                 const TrustedKeys& keys, const std::filesystem::path& log);

// The logs named by `paths`: files as given (also a path that is not a regular file, which
// verify_log then reports as an ERROR); folders searched recursively for *.json entries that
// are not folders (a FIFO or a dangling link is listed, and reported as an ERROR), skipping
// folders named "keys" or ending in ".out" (tier artefacts) and names that start with '.',
// sorted. Throws std::runtime_error naming a path that does not exist or a
// folder that cannot be read.
std::vector<std::filesystem::path> collect_logs(const std::vector<std::filesystem::path>& paths);

} // namespace mmaemu::reports
