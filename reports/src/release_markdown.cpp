// SPDX-License-Identifier: BSD-2-Clause
#include <set>

#include "mmaemu/reports/escape_markdown.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "release_common.hpp"

namespace mmaemu::reports {

namespace {

// Every field copied into the report, from a log or not, goes through the one escaping
// function of the format: a table cell or list item can never become Markdown.
} // namespace

std::string release_markdown(const ReleaseReport& r) {
  using namespace detail;
  std::string md;
  md += "# mmaemu release sign-off, " + markdown_escape(r.date) + "\n\n";
  md += "Verdict: **" + markdown_escape(r.verdict) + "**\n\n";
  md += "Commit: " + markdown_escape(r.commit) +
        " (HEAD of the source tree; every log must come from it, "
        "clean)\n\n";
  if (!r.notes.empty()) {
    md += "Logs NOT of this commit or not clean, taken by `--allow-other-commit`:\n\n";
    for (const auto& n : r.notes)
      md += "- " + markdown_escape(n) + "\n";
    md += "\n";
  }
  if (!r.reasons.empty()) {
    md += "Why not PASS:\n\n";
    for (const auto& why : r.reasons)
      md += "- " + markdown_escape(why) + "\n";
    md += "\n";
  }
  md += "PASS requires every required tier's latest whole-run log of the date to say PASS with "
        "at least one case run, and every log in the folder to verify against the trusted keys "
        "(" +
        markdown_escape(r.keys_dir.string()) + ").\n\n";

  md += "## Tiers\n\n";
  md += "| tier | title | required | status | cases |";
  for (const auto& o : outcome_names())
    md += " " + o + " |";
  md += " seconds | log | signature |\n| --- | --- | --- | --- | ---: |";
  for (std::size_t i = 0; i < outcome_names().size(); ++i)
    md += " ---: |";
  md += " ---: | --- | --- |\n";
  for (const auto& row : r.rows) {
    md += "| " + markdown_escape(row.tier) + " | " + markdown_escape(row.title) + " | " +
          (row.required ? "yes" : "no") + " | ";
    if (!row.log) {
      md += "MISSING |";
      for (std::size_t i = 0; i < outcome_names().size() + 4; ++i)
        md += " |";
      md += "\n";
      continue;
    }
    const auto& l = r.logs[*row.log];
    md += "**" + markdown_escape(row.status) + "** | " + std::to_string(total_of(l.log, "cases"));
    for (const auto& o : outcome_names())
      md += " | " + std::to_string(total_of(l.log, o));
    md += " | " + seconds_text(l.log) + " | " + markdown_escape(l.file.filename().string()) +
          " | " + (l.verification.ok ? "verified" : "**not verified**") + " |\n";
  }
  md += "\n";
  for (const auto& row : r.rows) {
    if (!row.log)
      continue;
    const auto& j = r.logs[*row.log].log;
    const std::string why = text_field(j, "reason", "");
    if (!why.empty())
      md += "- " + markdown_escape(row.tier + ": " + why) + "\n";
  }
  md += "\n";

  const auto bench = bench_rows(r);
  if (!bench.empty()) {
    md += "## Benchmarks\n\n| tier | benchmark | value | target | unit | better | met |\n"
          "| --- | --- | ---: | ---: | --- | --- | --- |\n";
    for (const auto& b : bench) {
      md += "| " + markdown_escape(b.tier) + " | " + markdown_escape(b.name) + " | " +
            number_text(b.value) + " | " + (b.has_target ? number_text(b.target) : "") + " | " +
            markdown_escape(b.unit) + " | " + markdown_escape(b.better) + " | " + b.met + " |\n";
    }
    md += "\n";
  }

  if (!r.evidence.empty()) {
    md += "## Evidence\n\nThe status of the modelling decisions (docs/semantics.md), counted per "
          "profile and accumulation mode:\n\n";
    for (const auto& line : r.evidence)
      md += "- " + markdown_escape(line) + "\n";
    md += "\n";
  }

  md += "## Logs\n\n| file | tier | shard | verdict | commit | host | signature |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n";
  std::set<std::string> commits, versions;
  for (const auto& l : r.logs) {
    const auto& j = l.log;
    std::string shard, tier = "?", verdict = "?", host;
    if (j.is_object()) {
      tier = text_field(j, "tier", "?");
      verdict = text_field(j, "verdict", "?");
      if (j.contains("shard") && j["shard"].is_object()) {
        shard = std::to_string(integer_field(j["shard"], "index", 0)) + "/" +
                std::to_string(integer_field(j["shard"], "count", 0));
      }
      host = text_field(object_field(j, "host"), "hostname", "");
      commits.insert(commit_text(j));
      versions.insert(text_field(object_field(j, "mmaemu"), "version", "?"));
    }
    md += "| " + markdown_escape(l.file.filename().string()) + " | " + markdown_escape(tier) +
          " | " + markdown_escape(shard) + " | " + markdown_escape(verdict) + " | " +
          markdown_escape(commit_text(j)) + " | " + markdown_escape(host) + " | " +
          (l.verification.ok ? "verified: " : "**FAILED**: ") +
          markdown_escape(l.verification.reason) + " |\n";
  }
  md += "\n## Provenance\n\n";
  md += "- mmaemu version(s): ";
  for (const auto& v : versions)
    md += markdown_escape(v) + " ";
  md += "\n- commit(s): ";
  for (const auto& c : commits)
    md += markdown_escape(c) + "; ";
  md += "\n- trusted keys: " + markdown_escape(r.keys_dir.string()) + "\n";
  md += "- generated: " +
        markdown_escape(r.generated_utc + " by mmaemu report release --date " + r.date) + "\n";
  return md;
}

} // namespace mmaemu::reports
