// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/verify_log.hpp"

#include <algorithm>

#include "mmaemu/support/digest.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/log_writer.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

namespace {

LogVerification fail(LogVerification v, std::string why) {
  v.ok = false;
  v.reason = std::move(why);
  return v;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

} // namespace

LogVerification verify_log(const fs::path& log, const TrustedKeys& keys) {
  LogVerification v;
  v.file = log;
  std::string bytes;
  try {
    bytes = read_file_bytes(log);
  } catch (const std::exception& e) {
    return fail(v, e.what());
  }
  nlohmann::json j;
  try {
    j = parse_json_text(bytes, log.string());
  } catch (const std::exception& e) {
    return fail(v, e.what());
  }
  if (!j.is_object() || j.value("format", "") != kLogFormat) {
    return fail(v, "not a validation log (format is not " + std::string(kLogFormat) + ")");
  }
  // Canonical form first: a changed byte that keeps the JSON valid is caught here even
  // before the signature is looked at, and the message says so.
  if (canonical_dump(j) != bytes)
    return fail(v, "not in canonical form (edited after writing?)");
  if (!j.contains("signed") || !j["signed"].is_boolean())
    return fail(v, "no \"signed\" field");
  if (!j["signed"].get<bool>())
    return fail(v, "unsigned (\"signed\": false)");
  const auto& s = j.value("signing", nlohmann::json::object());
  if (!s.is_object() || !s.contains("key_fingerprint") || !s["key_fingerprint"].is_string()) {
    return fail(v, "says \"signed\": true but names no signing.key_fingerprint");
  }
  v.fingerprint = s["key_fingerprint"].get<std::string>();
  const fs::path sig_file = signature_path(log);
  std::error_code ec;
  if (!fs::exists(sig_file, ec))
    return fail(v, "signature file " + sig_file.string() + " is missing");
  std::string sig_text;
  try {
    sig_text = trim(read_file_bytes(sig_file));
  } catch (const std::exception& e) {
    return fail(v, e.what());
  }
  const auto sig = support::base64_decode(sig_text);
  if (!sig)
    return fail(v, "signature file " + sig_file.string() + " is not base64 (truncated?)");
  if (sig->size() != kSignatureBytes) {
    return fail(v, "signature file " + sig_file.string() + " holds " + std::to_string(sig->size()) +
                       " bytes, not " + std::to_string(kSignatureBytes) + " (truncated?)");
  }
  const auto it = keys.by_fingerprint.find(v.fingerprint);
  if (it == keys.by_fingerprint.end()) {
    return fail(v, "signed by key " + v.fingerprint + ", which is not among the trusted keys in " +
                       keys.dir.string());
  }
  if (!verify_bytes(it->second.key, bytes, *sig)) {
    return fail(v, "signature does not match the log (tampered, or signed by another key)");
  }
  v.ok = true;
  v.reason = "signed by " + it->second.file.filename().string();
  return v;
}

std::vector<fs::path> collect_logs(const std::vector<fs::path>& paths) {
  std::vector<fs::path> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      out.push_back(p);
      continue;
    }
    if (!fs::is_directory(p, ec))
      throw std::runtime_error("'" + p.string() + "' does not exist");
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(p); it != fs::recursive_directory_iterator();
         ++it) {
      const std::string name = it->path().filename().string();
      if (it->is_directory()) {
        if (name == "keys" || (name.size() > 4 && name.ends_with(".out"))) {
          it.disable_recursion_pending();
        }
        continue;
      }
      if (it->is_regular_file() && it->path().extension() == ".json" && name[0] != '.') {
        found.push_back(it->path());
      }
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

} // namespace mmaemu::reports
