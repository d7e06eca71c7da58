// SPDX-License-Identifier: BSD-2-Clause
// The release report as one HTML file: inline CSS and inline SVG, no scripts, no external
// resources, so that it opens the same in any browser and can be archived as is.

#include <algorithm>
#include <map>

#include "mmaemu/reports/escape_html.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "release_common.hpp"

namespace mmaemu::reports {

namespace {

const std::map<std::string, std::string>& colours() {
  static const std::map<std::string, std::string> c = {
      {"PASS", "#2e7d32"},  {"FAIL", "#c62828"},  {"ERROR", "#6a1b9a"},  {"UNSUPPORTED", "#9e9e9e"},
      {"XFAIL", "#f9a825"}, {"XPASS", "#ef6c00"}, {"MISSING", "#ffffff"}};
  return c;
}

// A CSS class from a status the log names: only the known ones, so that a crafted verdict
// cannot add classes of its own.
std::string status_class(const std::string& status) {
  return "st-" + (colours().count(status) ? status : std::string("other"));
}

std::string colour(const std::string& status) {
  const auto it = colours().find(status);
  return it == colours().end() ? "#000000" : it->second;
}

// One row per tier: a bar split by outcome (proportional within the tier; every tier's bar
// has the same length so that small tiers stay readable), the counts written beside it.
std::string tier_bars_svg(const ReleaseReport& r) {
  using namespace detail;
  const int row_h = 26, label_w = 60, bar_w = 420, text_w = 340;
  const int h = row_h * static_cast<int>(r.rows.size()) + 30;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(label_w + bar_w + text_w) + "\" height=\"" + std::to_string(h) +
                    "\" role=\"img\" aria-label=\"cases per outcome, per tier\">\n";
  int y = 4;
  for (const auto& row : r.rows) {
    svg += "<text x=\"0\" y=\"" + std::to_string(y + 16) + "\" class=\"lbl\">" +
           html_escape(row.tier) + "</text>\n";
    const nlohmann::json* log = row.log ? &r.logs[*row.log].log : nullptr;
    long long total = 0;
    if (log) {
      for (const auto& o : outcome_names()) {
        total = saturating_add(total, total_of(*log, o)); // crafted totals saturate
      }
    }
    if (!log || total == 0) {
      const std::string status = log ? row.status : "MISSING";
      svg += "<rect x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(y) +
             "\" width=\"" + std::to_string(bar_w) + "\" height=\"20\" fill=\"" +
             (log ? colour(status) : std::string("#ffffff")) +
             "\" stroke=\"#757575\" stroke-dasharray=\"4 3\"><title>" + html_escape(row.tier) +
             ": " + html_escape(status) + "</title></rect>\n";
      svg += "<text x=\"" + std::to_string(label_w + bar_w + 8) + "\" y=\"" +
             std::to_string(y + 15) + "\" class=\"cnt\">" + html_escape(status) +
             (log ? " (no case ran)" : " (no log)") + "</text>\n";
      y += row_h;
      continue;
    }
    double x = label_w;
    std::string counts;
    for (const auto& o : outcome_names()) {
      const long long n = total_of(*log, o);
      if (n == 0)
        continue;
      const double w = bar_w * static_cast<double>(n) / static_cast<double>(total);
      svg += "<rect x=\"" + number_text(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
             number_text(std::max(w, 1.0)) + "\" height=\"20\" fill=\"" + colour(o) + "\"><title>" +
             html_escape(row.tier) + " " + o + ": " + std::to_string(n) + "</title></rect>\n";
      x += w;
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + o;
    }
    svg += "<text x=\"" + std::to_string(label_w + bar_w + 8) + "\" y=\"" + std::to_string(y + 15) +
           "\" class=\"cnt\">" + html_escape(row.status + ": " + counts) + "</text>\n";
    y += row_h;
  }
  // Legend.
  int lx = label_w;
  for (const auto& o : outcome_names()) {
    svg += "<rect x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(y + 6) +
           "\" width=\"12\" height=\"12\" fill=\"" + colour(o) + "\"/><text x=\"" +
           std::to_string(lx + 16) + "\" y=\"" + std::to_string(y + 16) + "\" class=\"cnt\">" + o +
           "</text>\n";
    lx += 110;
  }
  svg += "</svg>\n";
  return svg;
}

// One bar per benchmark, scaled to max(value, target); the target is a vertical line.
std::string bench_svg(const std::vector<detail::BenchRow>& rows) {
  using namespace detail;
  const int row_h = 30, label_w = 260, bar_w = 380, text_w = 260;
  const int h = row_h * static_cast<int>(rows.size()) + 8;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(label_w + bar_w + text_w) + "\" height=\"" + std::to_string(h) +
                    "\" role=\"img\" aria-label=\"benchmarks against targets\">\n";
  int y = 4;
  for (const auto& b : rows) {
    const double scale = std::max({b.value, b.has_target ? b.target : 0.0, 1e-300});
    const double w = bar_w * std::max(b.value, 0.0) / scale;
    const std::string fill = b.met == "no" ? "#c62828" : (b.met == "yes" ? "#2e7d32" : "#1565c0");
    svg += "<text x=\"0\" y=\"" + std::to_string(y + 16) + "\" class=\"lbl\">" +
           html_escape(b.tier + " " + b.name) + "</text>\n";
    svg += "<rect x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
           number_text(std::max(w, 1.0)) + "\" height=\"20\" fill=\"" + fill + "\"><title>" +
           html_escape(b.name + ": " + number_text(b.value) + " " + b.unit) + "</title></rect>\n";
    std::string text = number_text(b.value) + " " + b.unit;
    if (b.has_target) {
      const double tx = label_w + bar_w * b.target / scale;
      svg += "<line x1=\"" + number_text(tx) + "\" x2=\"" + number_text(tx) + "\" y1=\"" +
             std::to_string(y - 3) + "\" y2=\"" + std::to_string(y + 23) +
             "\" stroke=\"#000\" stroke-width=\"2\"><title>target " + number_text(b.target) +
             "</title></line>\n";
      text += " (target " + std::string(b.better == "lower" ? "<= " : ">= ") +
              number_text(b.target) + ": " + (b.met == "yes" ? "met" : "NOT met") + ")";
    }
    svg += "<text x=\"" + std::to_string(label_w + bar_w + 8) + "\" y=\"" + std::to_string(y + 15) +
           "\" class=\"cnt\">" + html_escape(text) + "</text>\n";
    y += row_h;
  }
  svg += "</svg>\n";
  return svg;
}

} // namespace

std::string release_html(const ReleaseReport& r) {
  using namespace detail;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>mmaemu release sign-off " + html_escape(r.date) + "</title>\n";
  h +=
      "<style>\n"
      "body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#212121}\n"
      "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bdbdbd;padding:3px 8px;"
      "font-size:90%}th{background:#eeeeee}td.n{text-align:right}\n"
      ".verdict{font-size:150%;font-weight:bold;padding:6px 14px;color:#fff;display:inline-block}\n"
      ".PASS{background:#2e7d32}.FAIL{background:#c62828}\n"
      ".st-PASS{color:#2e7d32;font-weight:bold}.st-FAIL,.st-ERROR,.st-MISSING,.bad{color:#c62828;"
      "font-weight:bold}\n"
      "svg .lbl{font:13px sans-serif}svg .cnt{font:12px sans-serif;fill:#424242}\n"
      "code{background:#f5f5f5;padding:0 3px}\n</style>\n</head>\n<body>\n";
  h += "<h1>mmaemu release sign-off, " + html_escape(r.date) + "</h1>\n";
  h += "<p><span class=\"verdict " + std::string(r.verdict == "PASS" ? "PASS" : "FAIL") + "\">" +
       html_escape(r.verdict) + "</span></p>\n";
  h += "<p>Commit <code>" + html_escape(r.commit) +
       "</code> (HEAD of the source tree; every log must come from it, clean).</p>\n";
  if (!r.notes.empty()) {
    h += "<p class=\"bad\">Logs NOT of this commit or not clean, taken by "
         "<code>--allow-other-commit</code>:</p>\n<ul>\n";
    for (const auto& n : r.notes)
      h += "<li>" + html_escape(n) + "</li>\n";
    h += "</ul>\n";
  }
  if (!r.reasons.empty()) {
    h += "<p>Why not PASS:</p>\n<ul>\n";
    for (const auto& why : r.reasons)
      h += "<li>" + html_escape(why) + "</li>\n";
    h += "</ul>\n";
  }
  h += "<p>PASS requires every required tier's latest whole-run log of the date to say PASS with "
       "at least one case run, and every log in the folder to verify against the trusted keys in "
       "<code>" +
       html_escape(r.keys_dir.string()) + "</code>.</p>\n";

  h += "<h2>Tiers</h2>\n" + tier_bars_svg(r);
  h += "<table>\n<tr><th>tier</th><th>title</th><th>required</th><th>status</th><th>cases</th>";
  for (const auto& o : outcome_names())
    h += "<th>" + o + "</th>";
  h += "<th>seconds</th><th>log</th><th>signature</th><th>reason</th></tr>\n";
  for (const auto& row : r.rows) {
    h += "<tr><td>" + html_escape(row.tier) + "</td><td>" + html_escape(row.title) + "</td><td>" +
         (row.required ? "yes" : "no") + "</td>";
    if (!row.log) {
      h += "<td class=\"st-MISSING\">MISSING</td><td colspan=\"" +
           std::to_string(outcome_names().size() + 5) +
           "\">no whole-run log for this date</td></tr>\n";
      continue;
    }
    const auto& l = r.logs[*row.log];
    h += "<td class=\"" + status_class(row.status) + "\">" + html_escape(row.status) +
         "</td><td class=\"n\">" + std::to_string(total_of(l.log, "cases")) + "</td>";
    for (const auto& o : outcome_names()) {
      h += "<td class=\"n\">" + std::to_string(total_of(l.log, o)) + "</td>";
    }
    h += "<td class=\"n\">" + seconds_text(l.log) + "</td><td>" +
         html_escape(l.file.filename().string()) + "</td><td" +
         (l.verification.ok ? ">verified" : " class=\"bad\">not verified") + "</td><td>" +
         html_escape(text_field(l.log, "reason", "")) + "</td></tr>\n";
  }
  h += "</table>\n";

  const auto bench = bench_rows(r);
  if (!bench.empty()) {
    h += "<h2>Benchmarks</h2>\n" + bench_svg(bench);
    h += "<table>\n<tr><th>tier</th><th>benchmark</th><th>value</th><th>target</th><th>unit</th>"
         "<th>better</th><th>met</th></tr>\n";
    for (const auto& b : bench) {
      h += "<tr><td>" + html_escape(b.tier) + "</td><td>" + html_escape(b.name) +
           "</td><td class=\"n\">" + number_text(b.value) + "</td><td class=\"n\">" +
           (b.has_target ? number_text(b.target) : "") + "</td><td>" + html_escape(b.unit) +
           "</td><td>" + html_escape(b.better) + "</td><td" +
           (b.met == "no" ? " class=\"bad\"" : "") + ">" + b.met + "</td></tr>\n";
    }
    h += "</table>\n";
  }

  if (!r.evidence.empty()) {
    h += "<h2>Evidence</h2>\n<p>The status of the modelling decisions (docs/semantics.md), "
         "counted per profile and accumulation mode:</p>\n<ul>\n";
    for (const auto& line : r.evidence)
      h += "<li>" + html_escape(line) + "</li>\n";
    h += "</ul>\n";
  }

  h += "<h2>Logs</h2>\n<table>\n<tr><th>file</th><th>tier</th><th>shard</th><th>verdict</th>"
       "<th>commit</th><th>host</th><th>signature</th></tr>\n";
  for (const auto& l : r.logs) {
    const auto& j = l.log;
    std::string tier = "?", verdict = "?", shard, host;
    if (j.is_object()) {
      tier = text_field(j, "tier", "?");
      verdict = text_field(j, "verdict", "?");
      if (j.contains("shard") && j["shard"].is_object()) {
        shard = std::to_string(integer_field(j["shard"], "index", 0)) + "/" +
                std::to_string(integer_field(j["shard"], "count", 0));
      }
      const auto& hj = object_field(j, "host");
      host = text_field(hj, "hostname", "") + " (" + text_field(hj, "cpu_model", "") + ")";
    }
    h += "<tr><td>" + html_escape(l.file.filename().string()) + "</td><td>" + html_escape(tier) +
         "</td><td>" + html_escape(shard) + "</td><td class=\"" + status_class(verdict) + "\">" +
         html_escape(verdict) + "</td><td>" + html_escape(commit_text(j)) + "</td><td>" +
         html_escape(host) + "</td><td" + (l.verification.ok ? ">" : " class=\"bad\">") +
         html_escape(l.verification.reason) + "</td></tr>\n";
  }
  h += "</table>\n";
  h += "<p>Generated " + html_escape(r.generated_utc) + " by <code>mmaemu report release --date " +
       html_escape(r.date) + "</code>.</p>\n</body>\n</html>\n";
  return h;
}

} // namespace mmaemu::reports
