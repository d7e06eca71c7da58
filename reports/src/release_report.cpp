// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/release_report.hpp"

#include <algorithm>

#include "log_fields.hpp"
#include "mmaemu/outcome/outcome.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

namespace {

bool known_commit(const std::string& c) {
  return !c.empty() && c != "unknown";
}

// Why a log was not made at `commit` from a clean tree, or empty if it was.
std::string commit_mismatch(const nlohmann::json& log, const std::string& commit) {
  const nlohmann::json& git = detail::object_field(log, "git");
  const std::string at = detail::text_field(git, "commit", "unknown");
  if (at != commit)
    return "made at commit " + at + ", not " + commit;
  const bool clean =
      git.contains("dirty") && git["dirty"].is_boolean() && !git["dirty"].get<bool>();
  if (!clean) {
    const bool dirty = git.contains("dirty") && git["dirty"].is_boolean();
    return dirty ? "made at commit " + at + " from a dirty tree (tracked files differed from it)"
                 : "made at commit " + at + " from a tree not known to be clean";
  }
  return "";
}

// Cases that ran and were judged: a tier with none tested nothing.
long long cases_run(const nlohmann::json& log) {
  const auto& t = detail::object_field(log, "totals");
  long long n = 0;
  for (auto o : outcome::kAllOutcomes) {
    const long long k = detail::integer_field(t, outcome::outcome_name(o), 0);
    if (outcome::ran(o) && k > 0)
      n = detail::saturating_add(n, k); // crafted totals saturate, never overflow
  }
  return n;
}

} // namespace

ReleaseReport build_release_report(const fs::path& log_root, const std::string& date,
                                   const std::vector<ReleaseTier>& tiers, const TrustedKeys& keys,
                                   const ReleaseOptions& opt) {
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
  std::vector<ReleaseLog> logs;
  for (const auto& f : files) {
    ReleaseLog l;
    l.file = f;
    try {
      l.log = read_json_file(f);
    } catch (const std::exception&) {
      l.log = nullptr;
    }
    l.verification = verify_log(f, keys);
    logs.push_back(std::move(l));
  }
  return assemble_release_report(std::move(logs), dir, date, tiers, keys.dir, opt);
}

ReleaseReport assemble_release_report(std::vector<ReleaseLog> logs, const fs::path& dir,
                                      const std::string& date,
                                      const std::vector<ReleaseTier>& tiers,
                                      const fs::path& keys_dir, const ReleaseOptions& opt) {
  ReleaseReport r;
  r.date = date;
  r.commit = known_commit(opt.commit) ? opt.commit : "unknown";
  r.generated_utc = utc_timestamp();
  r.keys_dir = keys_dir;
  r.logs = std::move(logs);

  // One commit per release: a log of another commit or of a dirty tree is refused (an
  // unreadable log is already refused by its verification).
  const std::string flag = "--allow-other-commit";
  if (!known_commit(opt.commit)) {
    const std::string why =
        "the commit of the source tree is unknown" +
        (opt.commit_unknown_why.empty() ? "" : " (" + opt.commit_unknown_why + ")");
    if (!opt.allow_other_commit && !r.logs.empty()) {
      throw ReleaseRefused(why + ", so the logs of " + date + " cannot be checked against it; " +
                           flag + " reports them without that check");
    }
    if (!r.logs.empty())
      r.notes.push_back(why + ": no log was checked against a commit (" + flag + ")");
  } else {
    for (const auto& l : r.logs) {
      if (!l.log.is_object())
        continue;
      const std::string why = commit_mismatch(l.log, opt.commit);
      if (why.empty())
        continue;
      const std::string line = l.file.filename().string() + ": " + why;
      if (!opt.allow_other_commit) {
        throw ReleaseRefused(l.file.string() + ": " + why + " (the report is for HEAD " +
                             opt.commit +
                             " of the source tree); rerun the tier at that commit "
                             "from a clean tree, or give " +
                             flag + " to report it anyway");
      }
      r.notes.push_back(line + " (taken by " + flag + ")");
    }
  }

  for (const auto& t : tiers) {
    ReleaseRow row{t.name, t.title, t.required, "MISSING", std::nullopt};
    std::string best_finished;
    for (std::size_t i = 0; i < r.logs.size(); ++i) {
      const auto& j = r.logs[i].log;
      if (!j.is_object() || detail::text_field(j, "tier", "") != t.name)
        continue;
      if (j.contains("shard") && !j["shard"].is_null())
        continue; // merge shards first
      const std::string fin =
          detail::text_field(detail::object_field(j, "durations"), "finished_utc", "");
      if (!row.log || fin >= best_finished) {
        row.log = i;
        best_finished = fin;
      }
    }
    if (row.log) {
      const auto& j = r.logs[*row.log].log;
      row.status = detail::text_field(j, "verdict", "?");
      // A log that says PASS for a run in which no case ran tested nothing.
      if (row.status == "PASS" && cases_run(j) == 0)
        row.status = outcome::outcome_name(outcome::Outcome::unsupported);
    }
    r.rows.push_back(row);
  }

  for (const auto& row : r.rows) {
    if (!row.required)
      continue;
    if (!row.log) {
      r.reasons.push_back(row.tier + " (required): no whole-run log for " + date);
    } else if (row.status != "PASS") {
      const auto& j = r.logs[*row.log].log;
      std::string why = detail::text_field(j, "reason", "");
      if (detail::text_field(j, "verdict", "") == "PASS" && cases_run(j) == 0)
        why = "its log says PASS, but its totals show that no case ran";
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
  // The release gate: every required tier passed and every log verifies.
  r.verdict =
      outcome::outcome_name(r.reasons.empty() ? outcome::Outcome::pass : outcome::Outcome::fail);
  return r;
}

} // namespace mmaemu::reports
