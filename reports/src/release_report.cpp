// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/release_report.hpp"

#include <algorithm>

#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

ReleaseReport build_release_report(const fs::path& log_root, const std::string& date,
                                   const std::vector<ReleaseTier>& tiers, const TrustedKeys& keys) {
  ReleaseReport r;
  r.date = date;
  r.generated_utc = utc_timestamp();
  r.keys_dir = keys.dir;
  const fs::path dir = log_root / date;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error("--date: no validation logs for " + date + " (" + dir.string() +
                             " does not exist)");
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ".json" && name[0] != '.') {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    ReleaseLog l;
    l.file = f;
    try {
      l.log = read_json_file(f);
    } catch (const std::exception&) {
      l.log = nullptr;
    }
    l.verification = verify_log(f, keys);
    r.logs.push_back(std::move(l));
  }

  for (const auto& t : tiers) {
    ReleaseRow row{t.name, t.title, t.required, "MISSING", std::nullopt};
    std::string best_finished;
    for (std::size_t i = 0; i < r.logs.size(); ++i) {
      const auto& j = r.logs[i].log;
      if (!j.is_object() || j.value("tier", "") != t.name)
        continue;
      if (j.contains("shard") && !j["shard"].is_null())
        continue; // merge shards first
      const std::string fin =
          j.value("durations", nlohmann::json::object()).value("finished_utc", "");
      if (!row.log || fin >= best_finished) {
        row.log = i;
        best_finished = fin;
      }
    }
    if (row.log)
      row.status = r.logs[*row.log].log.value("verdict", "?");
    r.rows.push_back(row);
  }

  for (const auto& row : r.rows) {
    if (!row.required)
      continue;
    if (!row.log) {
      r.reasons.push_back(row.tier + " (required): no whole-run log for " + date);
    } else if (row.status != "PASS") {
      const auto& j = r.logs[*row.log].log;
      const std::string why = j.value("reason", "");
      r.reasons.push_back(row.tier + " (required): " + row.status +
                          (why.empty() ? "" : ": " + why));
    }
  }
  for (const auto& l : r.logs) {
    if (!l.verification.ok) {
      r.reasons.push_back(l.file.filename().string() +
                          ": does not verify: " + l.verification.reason);
    }
  }
  if (r.logs.empty())
    r.reasons.push_back(dir.string() + ": holds no validation log");
  r.verdict = r.reasons.empty() ? "PASS" : "FAIL";
  return r;
}

} // namespace mmaemu::reports
