// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/verify_log.hpp"

#include <algorithm>

#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

namespace {

LogVerification fail(LogVerification v, std::string why) {
  v.ok = false;
  v.reason = std::move(why);
  return v;
}

LogVerification error(LogVerification v, std::string why) {
  v.error = true;
  return fail(std::move(v), std::move(why));
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

LogVerification check(std::string_view log_bytes, const std::optional<std::string>& sig_file_text,
                      const TrustedKeys& keys, const fs::path& log) {
  LogVerification v;
  v.file = log;
  const std::string bytes(log_bytes);
  nlohmann::json j;
  try {
    j = parse_json_text(bytes, log.string());
  } catch (const std::runtime_error& e) {
    return error(v, e.what());
  }
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (!j.is_object() || format == j.end() || !format->is_string() ||
      format->get_ref<const std::string&>() != kLogFormat) {
    return error(v, "not a validation log (format is not " + std::string(kLogFormat) + ")");
  }
  // Canonical form first: a changed byte that keeps the JSON valid is caught here even
  // before the signature is looked at, and the message says so.
  if (canonical_dump(j) != bytes)
    return fail(v, "not in canonical form (edited after writing?)");
  const auto is_signed = j.find("signed");
  if (is_signed == j.end() || !is_signed->is_boolean())
    return fail(v, "no \"signed\" field");
  if (!is_signed->get<bool>())
    return fail(v, "unsigned (\"signed\": false)");
  const auto s = j.find("signing");
  if (s == j.end() || !s->is_object() || !s->contains("key_fingerprint") ||
      !(*s)["key_fingerprint"].is_string()) {
    return fail(v, "says \"signed\": true but names no signing.key_fingerprint");
  }
  v.fingerprint = (*s)["key_fingerprint"].get<std::string>();
  const fs::path sig_file = signature_path(log);
  if (!sig_file_text)
    return fail(v, "signature file " + support::shown_path(sig_file) + " is missing");
  const auto sig = support::base64_decode(trim(*sig_file_text));
  if (!sig)
    return fail(v,
                "signature file " + support::shown_path(sig_file) + " is not base64 (truncated?)");
  if (sig->size() != kSignatureBytes) {
    return fail(v, "signature file " + support::shown_path(sig_file) + " holds " +
                       std::to_string(sig->size()) + " bytes, not " +
                       std::to_string(kSignatureBytes) + " (truncated?)");
  }
  const auto it = keys.by_fingerprint.find(v.fingerprint);
  if (it == keys.by_fingerprint.end()) {
    return fail(v, "signed by key " + support::printable(v.fingerprint, 80) +
                       ", which is not among the trusted keys in " + support::shown_path(keys.dir));
  }
  if (!verify_bytes(it->second.key, bytes, *sig)) {
    return fail(v, "signature does not match the log (tampered, or signed by another key)");
  }
  v.ok = true;
  v.reason = "signed by " + support::shown_path(it->second.file.filename());
  return v;
}

} // namespace

LogVerification verify_log_bytes(std::string_view log_bytes,
                                 const std::optional<std::string>& signature_text,
                                 const TrustedKeys& keys, const fs::path& log) {
  try {
    return check(log_bytes, signature_text, keys, log);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    // Not expected (every check above is total); kept so that a verifier bug is a failed
    // log, never a crash of `report verify`.
    LogVerification v;
    v.file = log;
    return error(v, std::string("internal error while verifying: ") + e.what());
  }
}

LogVerification verify_log(const fs::path& log, const TrustedKeys& keys) {
  LogVerification v;
  v.file = log;
  std::string bytes;
  try {
    bytes = support::read_input_file(log, support::kMaxTextBytes, "log");
  } catch (const support::FileError& e) {
    // The message starts with the path, which the caller's line already names.
    std::string why = e.what();
    if (const std::string prefix = support::shown_path(log) + ": "; why.rfind(prefix, 0) == 0)
      why.erase(0, prefix.size());
    return error(v, why);
  }
  std::optional<std::string> sig_text;
  const fs::path sig_file = signature_path(log);
  std::error_code ec;
  if (fs::symlink_status(sig_file, ec).type() != fs::file_type::not_found) {
    try {
      sig_text = support::read_input_file(sig_file, support::kMaxKeyBytes, "signature");
    } catch (const support::FileError& e) {
      return fail(v, e.what());
    }
  }
  return verify_log_bytes(bytes, sig_text, keys, log);
}

std::vector<fs::path> collect_logs(const std::vector<fs::path>& paths) {
  std::vector<fs::path> out;
  for (const auto& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (st.type() == fs::file_type::not_found || st.type() == fs::file_type::none) {
      throw std::runtime_error("'" + support::shown_path(p) + "' does not exist");
    }
    if (st.type() != fs::file_type::directory) {
      out.push_back(p); // a regular file, or something verify_log refuses with its kind
      continue;
    }
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(p, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code type_ec;
      if (it->is_directory(type_ec)) {
        if (name == "keys" || (name.size() > 4 && name.ends_with(".out"))) {
          it.disable_recursion_pending();
        }
        continue;
      }
      // Not only regular files: a FIFO, a device or a dangling link named *.json in a log
      // folder is listed, and verify_log reports it as an ERROR instead of it going unseen.
      if (it->path().extension() == ".json" && name[0] != '.')
        found.push_back(it->path());
    }
    if (ec) {
      // A folder that cannot be listed would hide its logs: say so rather than verify less.
      throw std::runtime_error("'" + support::shown_path(p) + "': cannot be searched for logs (" +
                               ec.message() + ")");
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

} // namespace mmaemu::reports
