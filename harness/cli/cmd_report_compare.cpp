// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report compare A.json B.json [--json PATH]
// Whether two validation logs hold the same result: tier, commit, verdict, totals, inputs, each
// case's outcome and each set's counts and letters (not where or how long they ran).

#include <algorithm>
#include <cstdio>
#include <map>

#include "cmd_report.hpp"
#include "commands.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What `report compare` sets side by side: the run's result, not where or how long it ran.
struct Differences {
  std::vector<std::string> lines;
  void add(const std::string& what, const json& a, const json& b) {
    if (a != b)
      lines.push_back(what + ": " + support::printable(a.dump(), 300) + " vs " +
                      support::printable(b.dump(), 300));
  }
};

} // namespace

int run_compare(const ReportArgs& a) {
  json logs[2];
  try {
    a.json.check(std::vector<fs::path>(a.paths.begin(), a.paths.end()));
    for (int i = 0; i < 2; ++i)
      logs[i] = reports::read_json_file(a.paths[static_cast<std::size_t>(i)]);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  Differences d;
  auto at = [](const json& j, const char* ptr) {
    const json::json_pointer p(ptr);
    json v = j.contains(p) ? j[p] : json();
    if (v.is_array()) // inputs: a merge unites them in shard order
      std::sort(v.begin(), v.end());
    return v;
  };
  for (const char* ptr : {"/format", "/tier", "/tier_file/sha256", "/git/commit", "/git/dirty",
                          "/mmaemu/version", "/verdict", "/totals", "/inputs"}) {
    d.add(ptr + 1, at(logs[0], ptr), at(logs[1], ptr));
  }
  // Cases by id: each once, with the same outcome.
  std::map<std::string, std::string> cases[2];
  for (int i = 0; i < 2; ++i) {
    for (const auto& c : logs[i].value("cases", json::array())) {
      const std::string id = c.value("id", "");
      if (cases[i].count(id))
        d.lines.push_back("case " + support::printable(id) + " appears twice in " +
                          support::printable(a.paths[static_cast<std::size_t>(i)]));
      cases[i][id] = support::printable(c.value("outcome", "?"));
    }
  }
  for (int i = 0; i < 2; ++i) {
    for (const auto& [id, outcome] : cases[i]) {
      const auto it = cases[1 - i].find(id);
      if (it == cases[1 - i].end()) {
        d.lines.push_back("case " + support::printable(id) + " (" + outcome + ") only in " +
                          support::printable(a.paths[static_cast<std::size_t>(i)]));
      } else if (i == 0 && it->second != outcome) {
        d.lines.push_back("case " + support::printable(id) + ": " + outcome + " vs " + it->second);
      }
    }
  }
  // Sets by (sha256, set): every count and the letters; seconds are the machine's, not the run's.
  auto sets_of = [](const json& log) {
    std::map<std::string, json> m;
    for (auto s : log.value("sets", json::array())) {
      s.erase("seconds");
      m[s.value("sha256", "") + "/" + s.value("set", "")] = s;
    }
    return m;
  };
  const auto s0 = sets_of(logs[0]), s1 = sets_of(logs[1]);
  for (const auto& [key, s] : s0) {
    const auto it = s1.find(key);
    if (it == s1.end()) {
      d.lines.push_back("set " + support::printable(key) + " only in " +
                        support::printable(a.paths[0]));
      continue;
    }
    for (const auto& [field, v] : s.items())
      d.add("set " + support::printable(key) + " " + support::printable(field), v,
            it->second.value(field, json()));
    for (const auto& [field, v] : it->second.items()) {
      if (!s.contains(field))
        d.add("set " + support::printable(key) + " " + support::printable(field), json(), v);
    }
  }
  for (const auto& [key, s] : s1) {
    if (!s0.count(key))
      d.lines.push_back("set " + support::printable(key) + " only in " +
                        support::printable(a.paths[1]));
  }
  for (const auto& l : d.lines)
    std::printf("differs: %s\n", l.c_str());
  std::printf("%s and %s: %s (%zu cases, %zu sets compared)\n", shown(a.paths[0]).c_str(),
              shown(a.paths[1]).c_str(), d.lines.empty() ? "the same result" : "different results",
              cases[0].size(), s0.size());
  try {
    a.json.write({{"same", d.lines.empty()},
                  {"differences", d.lines},
                  {"cases", cases[0].size()},
                  {"sets", s0.size()}});
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return d.lines.empty() ? kOk : kFailed;
}

} // namespace mmaemu::cli::report
