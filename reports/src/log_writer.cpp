// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/log_writer.hpp"

#include <unistd.h>

#include <atomic>

#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/stale_temps.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

namespace {

// support::write_file_exclusive with this library's error type: false if `path` exists.
bool create_new(const fs::path& path, const std::string& content) {
  try {
    return support::write_file_exclusive(path, content, 0644);
  } catch (const support::FileError& e) {
    throw LogWriteError(e.what());
  }
}

// <dir>/<stem>.json, or -2, -3, ... : the signature (when there is one) first, then the log.
PublishedLog write_under_free_name(const std::string& bytes, const std::string& sig_text,
                                   const fs::path& dir, const std::string& stem) {
  PublishedLog out;
  const bool signing_key = !sig_text.empty();
  for (int n = 1; n < 10000; ++n) {
    const std::string name = stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".json";
    const fs::path target = dir / name;
    const fs::path sig_target = signature_path(target);
    if (signing_key) {
      // The signature first: a log never appears without it. A stale .sig of a name whose
      // log is missing belongs to another run (or a crash): skip that name too.
      if (!create_new(sig_target, sig_text))
        continue;
      if (!create_new(target, bytes)) {
        ::unlink(sig_target.c_str());
        continue;
      }
      out.signature = sig_target;
    } else {
      std::error_code ec;
      if (fs::symlink_status(sig_target, ec).type() != fs::file_type::not_found)
        continue;
      if (!create_new(target, bytes))
        continue;
    }
    out.log = target;
    return out;
  }
  throw LogWriteError(support::shown_path(dir) + ": no free name for " + support::printable(stem) +
                      ".json");
}

} // namespace

fs::path prepare_log_dir(const fs::path& root, const std::string& date) {
  const fs::path dir = root / date;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw LogWriteError("log folder '" + support::shown_path(dir) + "' cannot be created (" +
                        (ec ? ec.message() : "not a folder") + ")");
  }
  // Probe: can a file be created there? Checking permission bits is not enough (read-only
  // mounts, root squash, ACLs).
  // Probes of killed runs are removed by the next one (stale_temps.hpp).
  support::remove_stale_temps(dir, ".probe.");
  const fs::path probe = dir / support::temp_file_name(".probe.");
  try {
    create_new(probe, "");
  } catch (const LogWriteError& e) {
    throw LogWriteError("log folder '" + support::shown_path(dir) + "' is not writable (" +
                        e.what() + ")");
  }
  ::unlink(probe.c_str());
  return dir;
}

fs::path signature_path(const fs::path& log) {
  return fs::path(log.string() + ".sig");
}

std::string signature_file_text(const std::string& raw_signature) {
  return support::base64_encode(raw_signature) + "\n";
}

PublishedLog publish_log(nlohmann::json log, const fs::path& dir, const std::string& stem,
                         const Key* signing_key) {
  PublishedLog out;
  if (signing_key) {
    out.fingerprint = fingerprint(*signing_key);
    log["signed"] = true;
    log["signing"] = {{"algorithm", "Ed25519"},
                      {"key_fingerprint", out.fingerprint},
                      {"signature_file", "<log file name>.sig: base64 of the 64-byte signature"}};
  } else {
    log["signed"] = false;
    log.erase("signing");
  }
  const std::string bytes = canonical_dump(log);
  const std::string sig_text =
      signing_key ? signature_file_text(sign_bytes(*signing_key, bytes)) : std::string();
  PublishedLog written = write_under_free_name(bytes, sig_text, dir, stem);
  written.fingerprint = out.fingerprint;
  return written;
}

PublishedLog publish_signed_copy(const std::string& log_bytes, const std::string& signature_text,
                                 const fs::path& dir, const std::string& stem) {
  if (signature_text.empty())
    throw LogWriteError(support::printable(stem) + ": an unsigned log is never copied");
  return write_under_free_name(log_bytes, signature_text, dir, stem);
}

void write_file_replacing(const fs::path& path, const std::string& content) {
  try {
    support::write_file_atomic(path, content, 0644);
  } catch (const support::FileError& e) {
    throw LogWriteError(e.what());
  }
}

} // namespace mmaemu::reports
