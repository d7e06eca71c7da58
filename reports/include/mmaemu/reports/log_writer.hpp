// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Publishing a validation log: docs/validation_logs/<YYYY-MM-DD>/<stem>.json, canonical JSON,
// signed when a key is given, under a name no other run has taken, and never half-written.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "mmaemu/reports/ed25519.hpp"

namespace mmaemu::reports {

inline constexpr const char* kLogFormat = "mmaemu-validation-log/1";

// A log folder or file that cannot be written; the message names it and says why.
class LogWriteError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct PublishedLog {
  std::filesystem::path log;
  std::filesystem::path signature; // empty when unsigned
  std::string fingerprint;         // empty when unsigned
};

// Creates <root>/<date>/ if needed and checks that a file can be created there, so that a run
// fails before it starts instead of after. Returns the folder. Throws LogWriteError.
std::filesystem::path prepare_log_dir(const std::filesystem::path& root, const std::string& date);

// Sets "signed" (false, or true with "signing": {"algorithm": "Ed25519", "key_fingerprint"})
// and publishes canonical_dump(log) as <dir>/<stem>.json, or <stem>-2.json, <stem>-3.json, ...
// when the name is taken (also by a concurrent run). The detached signature <log>.sig
// (signature_file_text) appears before the log; each file is complete when it appears
// (support::write_file_exclusive: a temporary file, then a hard link that fails if the name
// exists). Throws LogWriteError.
PublishedLog publish_log(nlohmann::json log, const std::filesystem::path& dir,
                         const std::string& stem, const Key* signing_key = nullptr);

// A log that is already written and signed (its bytes and the text of its .sig file), copied
// as it is into <dir>/<stem>.json (or <stem>-2.json, ... when the name is taken) with its
// signature beside it, in the same order and with the same guarantees as publish_log: what
// `mmaemu report publish` puts into the committed folder. Throws LogWriteError.
PublishedLog publish_signed_copy(const std::string& log_bytes, const std::string& signature_text,
                                 const std::filesystem::path& dir, const std::string& stem);

// The detached signature file of a log: "<log file name>.sig" beside it.
std::filesystem::path signature_path(const std::filesystem::path& log);

// The text of a .sig file: base64 of the 64 raw signature bytes and a newline.
std::string signature_file_text(const std::string& raw_signature);

// Writes `content` to `path`, replacing it whole (support::write_file_atomic: temporary file,
// then rename; refuses to replace a FIFO, a device or a folder). Throws LogWriteError naming
// the path.
void write_file_replacing(const std::filesystem::path& path, const std::string& content);

} // namespace mmaemu::reports
