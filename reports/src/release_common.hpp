// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What the Markdown and HTML renderings of a release report share (private to the library).

#include <cstdio>
#include <string>
#include <vector>

#include "log_fields.hpp"
#include "mmaemu/outcome/outcome.hpp"
#include "mmaemu/reports/release_report.hpp"

namespace mmaemu::reports::detail {

// The columns of the tier table: every outcome of the one vocabulary, in its order.
inline const std::vector<std::string>& outcome_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (auto o : outcome::kAllOutcomes)
      v.push_back(outcome::outcome_name(o));
    return v;
  }();
  return n;
}

inline long long total_of(const nlohmann::json& log, const std::string& key) {
  // A count: a crafted negative one reads as 0.
  const long long n = integer_field(object_field(log, "totals"), key.c_str(), 0);
  return n > 0 ? n : 0;
}

inline std::string seconds_text(const nlohmann::json& log) {
  if (!log.is_object())
    return "";
  const double s = number_field(object_field(log, "durations"), "seconds", -1.0);
  if (s < 0)
    return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

inline std::string number_text(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

inline std::string commit_text(const nlohmann::json& log) {
  if (!log.is_object() || !log.contains("git"))
    return "unknown";
  const auto& g = log["git"];
  std::string c = text_field(g, "commit", "unknown");
  if (c.size() > 12)
    c.resize(12);
  if (g.contains("dirty") && g["dirty"].is_boolean() && g["dirty"].get<bool>())
    c += " (dirty)";
  return c;
}

struct BenchRow {
  std::string tier, name, unit, better;
  double value = 0;
  bool has_target = false;
  double target = 0;
  std::string met; // "yes", "no", ""
};

inline std::vector<BenchRow> bench_rows(const ReleaseReport& r) {
  std::vector<BenchRow> out;
  for (const auto& row : r.rows) {
    if (!row.log)
      continue;
    const auto& log = r.logs[*row.log].log;
    for (const auto& b : array_field(log, "benchmarks")) {
      if (!b.is_object() || !b.contains("value") || !b["value"].is_number())
        continue;
      BenchRow br;
      br.tier = row.tier;
      br.name = text_field(b, "name", "?");
      br.unit = text_field(b, "unit", "");
      br.better = text_field(b, "better", "");
      br.value = b["value"].get<double>();
      if (b.contains("target") && b["target"].is_number()) {
        br.has_target = true;
        br.target = b["target"].get<double>();
        br.met =
            (br.better == "lower" ? br.value <= br.target : br.value >= br.target) ? "yes" : "no";
      }
      out.push_back(br);
    }
  }
  return out;
}

} // namespace mmaemu::reports::detail
