// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The release sign-off report: one date's validation logs gathered into a verdict, rendered
// as Markdown and as a self-contained HTML page (inline CSS and SVG, no external resources).

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
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

// What the report is for. A release is signed off for one commit: every log of the date must
// have been made at that commit from a clean tree (git.commit equal, git.dirty false).
struct ReleaseOptions {
  std::string commit;              // HEAD of the source tree; empty or "unknown": not known
  std::string commit_unknown_why;  // why the commit is not known (for the message)
  bool allow_other_commit = false; // take logs of other commits, dirty trees or an unknown
                                   // commit anyway; each is listed in ReleaseReport::notes
};

// build_release_report refused a log: its commit is not the report's, or its tree was dirty,
// or the report's commit is unknown. The message names the log, both commits and the
// --allow-other-commit flag.
class ReleaseRefused : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct ReleaseReport {
  std::string date;
  std::string commit;             // the commit the report is for, or "unknown"
  std::vector<std::string> notes; // logs taken under --allow-other-commit, one line each
  std::string generated_utc;
  std::filesystem::path keys_dir;
  std::vector<ReleaseLog> logs;     // every log of the date folder, sorted by file name
  std::vector<ReleaseRow> rows;     // one per tier, in the order given
  std::string verdict;              // "PASS" or "FAIL"
  std::vector<std::string> reasons; // why not PASS, one line each
  // How much is verified: one line per profile and accumulation mode with the decision counts
  // of each level (evidence::counts_lines(), filled by the caller; rendered when not empty).
  std::vector<std::string> evidence;
};

// Reads every *.json in <log_root>/<date>/ (not recursively), verifies each against `keys`,
// and picks for each tier its latest whole-run log (not a shard log; latest finished_utc).
// A tier's status is its log's verdict, except that a log saying PASS whose totals show no
// case that ran (PASS + FAIL + ERROR + XFAIL = 0) is UNSUPPORTED: nothing run is never PASS.
// PASS iff every required tier's status is PASS and every log in the folder verifies.
// Throws ReleaseRefused for a log of another commit or a dirty tree, or when opt.commit is
// unknown, unless opt.allow_other_commit; std::runtime_error if the date folder does not
// exist.
ReleaseReport build_release_report(const std::filesystem::path& log_root, const std::string& date,
                                   const std::vector<ReleaseTier>& tiers, const TrustedKeys& keys,
                                   const ReleaseOptions& opt);

// The same from logs already read and verified (`logs` sorted by file name; `dir` names the
// date folder in messages; the fuzz target's entry point): everything build_release_report
// does after reading the folder.
ReleaseReport assemble_release_report(std::vector<ReleaseLog> logs,
                                      const std::filesystem::path& dir, const std::string& date,
                                      const std::vector<ReleaseTier>& tiers,
                                      const std::filesystem::path& keys_dir,
                                      const ReleaseOptions& opt);

std::string release_markdown(const ReleaseReport& report);
std::string release_html(const ReleaseReport& report);

} // namespace mmaemu::reports
