// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/merge_logs.hpp"

#include <algorithm>
#include <map>

#include "mmaemu/outcome/outcome.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace {

using nlohmann::json;
using support::printable;

// The worst of the shards' verdicts by the one vocabulary's severity; an unknown verdict is
// worse than anything.
int verdict_rank(const std::string& v) {
  const auto o = outcome::parse_outcome(v);
  return o ? outcome::severity(*o) : outcome::severity(outcome::Outcome::error) + 1;
}

// j[key] when it is an array, else an empty array; a reference into j (value() would copy).
const json& array_at(const json& j, const char* key) {
  static const json empty = json::array();
  if (j.is_object()) {
    const auto it = j.find(key);
    if (it != j.end() && it->is_array())
      return *it;
  }
  return empty;
}

std::string str_at(const json& j, const json::json_pointer& p) {
  return j.contains(p) && j[p].is_string() ? j[p].get<std::string>() : std::string("(absent)");
}

void require_same(const std::vector<ShardLog>& shards, const char* pointer, const char* what) {
  const json::json_pointer p(pointer);
  const std::string first = shards[0].log.contains(p) ? shards[0].log[p].dump() : "(absent)";
  for (const auto& s : shards) {
    const std::string v = s.log.contains(p) ? s.log[p].dump() : "(absent)";
    if (v != first) {
      throw MergeError(printable(s.name) + ": " + what + " " + printable(v) + " differs from " +
                       printable(shards[0].name) + "'s " + printable(first));
    }
  }
}

json merge_checked(const std::vector<ShardLog>& shards);

} // namespace

json merge_shard_logs(const std::vector<ShardLog>& shards) {
  try {
    return merge_checked(shards);
  } catch (const json::exception& e) {
    // A field of an unexpected type (a string where a count belongs, ...): a bad shard, not a
    // crash of `report merge`.
    throw MergeError("a shard log has a field of an unexpected type (" + printable(e.what(), 160) +
                     ")");
  }
}

namespace {

json merge_checked(const std::vector<ShardLog>& shards) {
  if (shards.empty())
    throw MergeError("no shard logs to merge");
  const std::size_t n = shards.size();
  std::vector<const ShardLog*> by_index(n + 1, nullptr);
  for (const auto& s : shards) {
    if (!s.log.is_object())
      throw MergeError(printable(s.name) + ": not a validation log");
    const json& sh = s.log.value("shard", json());
    if (!sh.is_object() || !sh.contains("index") || !sh.contains("count")) {
      throw MergeError(printable(s.name) +
                       ": not a shard log (\"shard\" is null: run with --shard k/N)");
    }
    const auto k = sh["index"].get<std::size_t>();
    const auto count = sh["count"].get<std::size_t>();
    if (count != n) {
      throw MergeError(printable(s.name) + ": shard " + std::to_string(k) + "/" +
                       std::to_string(count) + " but " + std::to_string(n) + " logs were given");
    }
    if (k < 1 || k > n)
      throw MergeError(printable(s.name) + ": shard index " + std::to_string(k) + " out of range");
    if (by_index[k]) {
      throw MergeError(printable(s.name) + ": shard " + std::to_string(k) + "/" +
                       std::to_string(n) + " given twice (also " + printable(by_index[k]->name) +
                       ")");
    }
    by_index[k] = &s;
  }
  require_same(shards, "/tier", "tier");
  require_same(shards, "/tier_file/sha256", "tier file");
  require_same(shards, "/mmaemu/version", "mmaemu version");
  require_same(shards, "/git/commit", "git commit");
  require_same(shards, "/environment", "environment");

  json merged = by_index[1]->log;
  merged.erase("signed");
  merged.erase("signing");
  merged["shard"] = nullptr;

  json merged_from = json::array();
  json cases = json::array();
  json benchmarks = json::array();
  json details = json::array();
  std::map<std::string, json> totals_sum;
  std::map<std::string, std::string> input_sha; // path -> sha256
  json inputs = json::array();
  double seconds = 0, wall = 0;
  std::string started, finished;
  const ShardLog* worst = nullptr;
  bool worst_empty = false;
  for (std::size_t k = 1; k <= n; ++k) {
    const ShardLog& s = *by_index[k];
    const json& log = s.log;
    merged_from.push_back(
        {{"file", s.name},
         {"sha256", s.sha256},
         {"shard", std::to_string(k) + "/" + std::to_string(n)},
         {"host", log.value("host", json())},
         {"command_line", log.value("command_line", json())},
         {"verdict", log.value("verdict", "?")},
         {"signed", log.value("signed", false)},
         {"key_fingerprint", str_at(log, json::json_pointer("/signing/key_fingerprint"))}});
    for (const auto& c : log.value("cases", json::array()))
      cases.push_back(c);
    for (const auto& b : log.value("benchmarks", json::array()))
      benchmarks.push_back(b);
    if (log.contains("details") && !log["details"].is_null()) {
      details.push_back({{"shard", k}, {"details", log["details"]}});
    }
    const json shard_totals = log.value("totals", json::object());
    for (const auto& [key, v] : shard_totals.items()) {
      if (!v.is_number_integer())
        continue;
      totals_sum[key] = totals_sum.count(key)
                            ? totals_sum[key].get<long long>() + v.get<long long>()
                            : v.get<long long>();
    }
    for (const auto& in : log.value("inputs", json::array())) {
      const std::string path = in.value("path", "");
      const std::string sha = in.value("sha256", "");
      const auto it = input_sha.find(path);
      if (it == input_sha.end()) {
        input_sha[path] = sha;
        inputs.push_back(in);
      } else if (it->second != sha) {
        throw MergeError(printable(s.name) + ": input " + printable(path, 256) + " has sha256 " +
                         printable(sha) + ", another shard's " + printable(it->second));
      }
    }
    const json& d = log.value("durations", json::object());
    const double sec = d.value("seconds", 0.0);
    seconds += sec;
    wall = std::max(wall, sec);
    const std::string st = d.value("started_utc", ""), fi = d.value("finished_utc", "");
    if (!st.empty() && (started.empty() || st < started))
      started = st;
    if (fi > finished)
      finished = fi;
    // A shard that selected no case ("empty shard: ...") says nothing about the others.
    const std::string verdict = log.value("verdict", "?");
    const bool empty = log.value("reason", "").rfind("empty shard", 0) == 0;
    if (!worst || (worst_empty && !empty) ||
        (empty == worst_empty &&
         verdict_rank(verdict) > verdict_rank(worst->log.value("verdict", "?")))) {
      worst = &s;
      worst_empty = empty;
    }
  }

  // Sets: each shard holds the letters of cases k-1, k-1+N, ...; interleave them back.
  json sets = json::array();
  const json& first_sets = array_at(by_index[1]->log, "sets");
  for (const auto& fs : first_sets) {
    const std::string key = fs.value("sha256", "") + "/" + fs.value("set", "");
    const std::size_t total = fs.value("cases_total", std::size_t{0});
    std::vector<std::string> parts(n + 1);
    json out = fs;
    std::size_t passed = 0, failed = 0, errors = 0, cnt = 0, xfailed = 0, xpassed = 0;
    double sec = 0;
    for (std::size_t k = 1; k <= n; ++k) {
      const json* found = nullptr;
      for (const auto& s : array_at(by_index[k]->log, "sets")) {
        if (s.value("sha256", "") + "/" + s.value("set", "") == key)
          found = &s;
      }
      if (!found)
        throw MergeError(printable(by_index[k]->name) + ": lacks set " + printable(key, 160));
      parts[k] = found->value("outcomes", "");
      passed += found->value("passed", std::size_t{0});
      failed += found->value("failed", std::size_t{0});
      errors += found->value("errors", std::size_t{0});
      xfailed += found->value("xfailed", std::size_t{0});
      xpassed += found->value("xpassed", std::size_t{0});
      cnt += found->value("cases", std::size_t{0});
      sec += found->value("seconds", 0.0);
    }
    std::size_t letters_given = 0;
    for (std::size_t k = 1; k <= n; ++k)
      letters_given += parts[k].size();
    if (total > letters_given) {
      // Checked before the string of `total` letters is made: a crafted cases_total must not
      // allocate without bound.
      throw MergeError("set " + printable(key, 160) + " says " + std::to_string(total) +
                       " cases, but its shards hold " + std::to_string(letters_given) +
                       " outcomes");
    }
    std::string letters(total, '?');
    for (std::size_t i = 0; i < total; ++i) {
      const std::size_t k = i % n + 1, j = i / n;
      if (j >= parts[k].size()) {
        throw MergeError(printable(by_index[k]->name) + ": set " + printable(key, 160) + " has " +
                         std::to_string(parts[k].size()) + " outcomes, too few for shard " +
                         std::to_string(k) + "/" + std::to_string(n) + " of " +
                         std::to_string(total) + " cases");
      }
      letters[i] = parts[k][j];
    }
    out["outcomes"] = letters;
    out["passed"] = passed;
    out["failed"] = failed;
    out["errors"] = errors;
    if (xfailed > 0)
      out["xfailed"] = xfailed;
    if (xpassed > 0)
      out["xpassed"] = xpassed;
    out["cases"] = cnt;
    out["seconds"] = sec;
    sets.push_back(out);
  }

  std::stable_sort(cases.begin(), cases.end(), [](const json& a, const json& b) {
    return a.value("id", "") < b.value("id", "");
  });
  merged["merged_from"] = merged_from;
  merged["cases"] = cases;
  if (!first_sets.empty())
    merged["sets"] = sets;
  if (!benchmarks.empty())
    merged["benchmarks"] = benchmarks;
  merged["details"] = details.empty() ? json() : json{{"shards", details}};
  json totals = json::object();
  for (const auto& [k, v] : totals_sum)
    totals[k] = v;
  merged["totals"] = totals;
  merged["inputs"] = inputs;
  merged["durations"] = {
      {"seconds", seconds}, {"wall_s", wall}, {"started_utc", started}, {"finished_utc", finished}};
  merged["verdict"] = worst->log.value("verdict", "?");
  merged["reason"] = worst->log.value("reason", "");
  return merged;
}

} // namespace

} // namespace mmaemu::reports
