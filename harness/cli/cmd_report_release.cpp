// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report release --date YYYY-MM-DD [--out DIR] [--log-dir DIR] [--keys DIR] [--tiers DIR]
//                       [--allow-other-commit] [--json PATH]
// The sign-off of one date's logs against the tier files and the trusted keys, for HEAD of the
// source tree: release.md and release.html.

#include <cstdio>
#include <cstdlib>

#include "cmd_report.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "read_inputs.hpp"
#include "tier_args.hpp"

namespace mmaemu::cli::report {

namespace fs = std::filesystem;
using nlohmann::json;

int run_release(const ReportArgs& a) {
  if (!reports::is_date(a.date)) {
    error_line("--date: '" + support::printable(a.date) + "' is not a date YYYY-MM-DD");
    return kUsage;
  }
  harness::LayoutOverrides o;
  o.tiers_dir = a.tiers;
  o.log_root = a.log_dir;
  o.keys_dir = a.keys;
  harness::Layout layout = harness::discover_layout(o);
  // The sign-off is of the committed logs unless --log-dir names another folder.
  if (a.log_dir.empty() && !layout.publish_root.empty() && !std::getenv("MMAEMU_LOG_DIR"))
    layout.log_root = layout.publish_root;
  // What the report reads: the logs, the keys, the tier files. No output may replace one.
  const std::vector<fs::path> read =
      joined(joined(files_under(layout.log_root), files_under(layout.keys_dir)),
             files_under(layout.tiers_dir));
  try {
    a.json.check(read);
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  std::vector<reports::ReleaseTier> tiers;
  reports::TrustedKeys keys;
  reports::ReleaseReport rep;
  // The report is for HEAD of the source tree: every log must come from it, clean.
  const nlohmann::json git = reports::git_state(layout.source_dir);
  reports::ReleaseOptions ro;
  ro.commit = git.value("commit", "unknown");
  ro.commit_unknown_why = git.value("reason", "");
  ro.allow_other_commit = a.allow_other_commit;
  try {
    check_tiers_option(a.tiers, layout, a.trust_tiers);
    for (const auto& t : harness::load_tiers(layout.tiers_dir)) {
      tiers.push_back({t.name, t.title, t.required_for_release});
    }
    keys = reports::load_trusted_keys(layout.keys_dir);
    rep = reports::build_release_report(layout.log_root, a.date, tiers, keys, ro);
    rep.evidence = evidence::counts_lines();
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  const fs::path out = a.out.empty() ? layout.log_root / a.date : fs::path(a.out);
  try {
    // The two reports may not replace a log, a key or a tier file the report read.
    std::error_code ec;
    const auto st = fs::status(out, ec);
    if (fs::exists(st) && !fs::is_directory(st))
      throw support::FileError(shown(out) + " exists and is not a folder");
    fs::create_directories(out, ec);
    for (const char* name : {"release.md", "release.html"})
      check_output_option("--out", out / name, read);
    reports::write_file_replacing(out / "release.md", reports::release_markdown(rep));
    reports::write_file_replacing(out / "release.html", reports::release_html(rep));
  } catch (const std::exception& e) {
    const std::string what = e.what();
    error_line(what.rfind("--out", 0) == 0 ? what : "--out: " + what);
    return kUsage;
  }
  // The terminal's escaping (support::printable) for every field a log or tier file gave.
  const auto term = [](const std::string& t) { return support::printable(t, 1024); };
  for (const auto& row : rep.rows) {
    std::printf("%-5s %-12s %s\n", term(row.tier).c_str(), term(row.status).c_str(),
                row.required ? "(required)" : "");
  }
  for (const auto& why : rep.reasons)
    std::printf("  - %s\n", term(why).c_str());
  for (const auto& note : rep.notes)
    std::printf("  ! %s\n", term(note).c_str());
  std::printf("release %s at %s: %s\n%s\n%s\n", a.date.c_str(), term(rep.commit).c_str(),
              rep.verdict.c_str(), shown(out / "release.md").c_str(),
              shown(out / "release.html").c_str());
  json rows = json::array();
  for (const auto& row : rep.rows)
    rows.push_back({{"tier", row.tier}, {"status", row.status}, {"required", row.required}});
  try {
    a.json.write({{"date", a.date},
                  {"commit", rep.commit},
                  {"verdict", rep.verdict},
                  {"tiers", rows},
                  {"reasons", rep.reasons},
                  {"notes", rep.notes},
                  {"markdown", (out / "release.md").string()},
                  {"html", (out / "release.html").string()}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return rep.verdict == "PASS" ? kOk : kFailed;
}

} // namespace mmaemu::cli::report
