// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The release sign-off report: one date's validation logs gathered into a verdict, rendered
// as Markdown and as a self-contained HTML page (inline CSS and SVG, no external resources).

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/reports/verify_log.hpp"

namespace mmaemu::reports {

// A tier as the report knows it (from tiers/*.json).
struct ReleaseTier {
  std::string name;
  std::string title;
  bool required = false;
};

struct ReleaseLog {
  std::filesystem::path file;
  nlohmann::json log; // null when the file is not readable JSON
  LogVerification verification;
};

struct ReleaseRow {
  std::string tier;
  std::string title;
  bool required = false;
  std::string status;             // the log's verdict, or "MISSING"
  std::optional<std::size_t> log; // index into ReleaseReport::logs
};

struct ReleaseReport {
  std::string date;
  std::string generated_utc;
  std::filesystem::path keys_dir;
  std::vector<ReleaseLog> logs;     // every log of the date folder, sorted by file name
  std::vector<ReleaseRow> rows;     // one per tier, in the order given
  std::string verdict;              // "PASS" or "FAIL"
  std::vector<std::string> reasons; // why not PASS, one line each
};

// Reads every *.json in <log_root>/<date>/ (not recursively), verifies each against `keys`,
// and picks for each tier its latest whole-run log (not a shard log; latest finished_utc).
// PASS iff every required tier's picked log says PASS and every log in the folder verifies.
// Throws std::runtime_error if the date folder does not exist.
ReleaseReport build_release_report(const std::filesystem::path& log_root, const std::string& date,
                                   const std::vector<ReleaseTier>& tiers, const TrustedKeys& keys);

std::string release_markdown(const ReleaseReport& report);
std::string release_html(const ReleaseReport& report);

} // namespace mmaemu::reports
