// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/log_at_path.hpp"

#include <unistd.h>

#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

PublishedLog write_log_at(nlohmann::json log, const fs::path& path, const Key* signing_key,
                          const std::vector<fs::path>& inputs) {
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
  const fs::path sig = signature_path(path);
  try {
    // Both names are checked before either is written: a refused .sig leaves the log alone.
    support::check_output_path(path, inputs);
    support::check_output_path(sig, inputs);
    if (signing_key) {
      support::write_file_atomic(sig, signature_file_text(sign_bytes(*signing_key, bytes)), 0644,
                                 inputs);
      out.signature = sig;
    } else {
      std::error_code ec;
      if (fs::is_regular_file(fs::symlink_status(sig, ec)))
        ::unlink(sig.c_str());
    }
    support::write_file_atomic(path, bytes, 0644, inputs);
  } catch (const support::FileError& e) {
    throw LogWriteError(e.what());
  }
  out.log = path;
  return out;
}

} // namespace mmaemu::reports
