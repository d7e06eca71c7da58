// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/merge_logs.hpp"

#include <algorithm>
#include <map>
#include <regex>

#include "log_fields.hpp"
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

json merge_checked(const std::vector<ShardLog>& shards, const MergeOptions& opt);

} // namespace

json merge_shard_logs(const std::vector<ShardLog>& shards, const MergeOptions& opt) {
  try {
    return merge_checked(shards, opt);
  } catch (const json::exception& e) {
    // A field of an unexpected type (a string where a count belongs, ...): a bad shard, not a
    // crash of `report merge`.
    throw MergeError("a shard log has a field of an unexpected type (" + printable(e.what(), 160) +
                     ")");
  }
}

bool parse_shard_log_name(const std::string& file_name, std::string& stem, std::size_t& index,
                          std::size_t& count) {
  static const std::regex re(R"(^(.+)-shard([0-9]{1,9})of([0-9]{1,9})(-[0-9]{1,9})?\.json$)");
  std::smatch m;
  if (!std::regex_match(file_name, m, re))
    return false;
  const std::size_t k = std::stoul(m[2].str()), n = std::stoul(m[3].str());
  if (n < 1 || k < 1 || k > n)
    return false;
  stem = m[1].str();
  index = k;
  count = n;
  return true;
}

namespace {

// Of two logs of one shard, whether `b` is the later one: the later finish, else the later
// name ("-2" after none, "-3" after "-2": publish_log's order).
bool later(const ShardLog& a, const ShardLog& b) {
  const std::string fa = str_at(a.log, json::json_pointer("/durations/finished_utc"));
  const std::string fb = str_at(b.log, json::json_pointer("/durations/finished_utc"));
  if (fa != fb)
    return fb > fa;
  auto suffix = [](const std::string& name) {
    static const std::regex re(R"(-shard[0-9]+of[0-9]+-([0-9]+)\.json$)");
    std::smatch m;
    return std::regex_search(name, m, re) ? std::stoul(m[1].str()) : 1ul;
  };
  const auto sa = suffix(a.name), sb = suffix(b.name);
  return sa != sb ? sb > sa : b.name > a.name;
}

// How many of `total` cases shard k of n takes: k-1, k-1+n, ...
std::size_t cases_of_shard(std::size_t total, std::size_t k, std::size_t n) {
  return total > k - 1 ? (total - (k - 1) + n - 1) / n : 0;
}

json merge_checked(const std::vector<ShardLog>& shards, const MergeOptions& opt) {
  if (shards.empty()) {
    throw MergeError(opt.count
                         ? "no shard log: all " + std::to_string(opt.count) + " shards are missing"
                         : "no shard logs to merge");
  }
  const bool collect = opt.count > 0;
  const std::size_t n = collect ? opt.count : shards.size();
  std::vector<const ShardLog*> by_index(n + 1, nullptr);
  json superseded = json::array();
  std::vector<const ShardLog*> dropped;
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
                       std::to_string(count) + " but " +
                       (collect ? "the run has " + std::to_string(n) + " shards"
                                : std::to_string(n) + " logs were given"));
    }
    if (k < 1 || k > n)
      throw MergeError(printable(s.name) + ": shard index " + std::to_string(k) + " out of range");
    if (by_index[k] && !collect) {
      throw MergeError(printable(s.name) + ": shard " + std::to_string(k) + "/" +
                       std::to_string(n) + " given twice (also " + printable(by_index[k]->name) +
                       ")");
    }
    if (by_index[k]) {
      // A re-queued task: the later log stands for the shard, the other is named, not merged.
      const ShardLog* keep = later(*by_index[k], s) ? &s : by_index[k];
      dropped.push_back(keep == &s ? by_index[k] : &s);
      by_index[k] = keep;
    } else {
      by_index[k] = &s;
    }
  }
  std::vector<std::size_t> missing;
  std::size_t first = 0;
  for (std::size_t k = n; k >= 1; --k) {
    if (by_index[k])
      first = k;
    else
      missing.push_back(k);
  }
  std::reverse(missing.begin(), missing.end());
  for (const ShardLog* d : dropped) {
    const std::size_t k = d->log["shard"]["index"].get<std::size_t>();
    superseded.push_back(
        {{"file", d->name},
         {"sha256", d->sha256},
         {"shard", std::to_string(k) + "/" + std::to_string(n)},
         {"verdict", d->log.value("verdict", "?")},
         {"finished_utc", str_at(d->log, json::json_pointer("/durations/finished_utc"))},
         {"kept", by_index[k]->name}});
  }
  require_same(shards, "/tier", "tier");
  require_same(shards, "/tier_file/sha256", "tier file");
  require_same(shards, "/mmaemu/version", "mmaemu version");
  require_same(shards, "/git/commit", "git commit");
  require_same(shards, "/environment", "environment");

  json merged = by_index[first]->log;
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
  auto add_total = [&](const std::string& key, long long v) {
    totals_sum[key] =
        totals_sum.count(key) ? detail::saturating_add(totals_sum[key].get<long long>(), v) : v;
  };
  for (std::size_t k = 1; k <= n; ++k) {
    if (!by_index[k])
      continue;
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
      if (v.is_number_integer())
        add_total(key, v.get<long long>());
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

  // Sets: each shard holds the letters of cases k-1, k-1+N, ...; interleave them back. A
  // missing shard's cases are U (UNSUPPORTED): never run, never dropped.
  json sets = json::array();
  std::size_t missing_letters = 0;
  const json& first_sets = array_at(by_index[first]->log, "sets");
  for (const auto& fs : first_sets) {
    const std::string key = fs.value("sha256", "") + "/" + fs.value("set", "");
    const std::size_t total = fs.value("cases_total", std::size_t{0});
    std::vector<std::string> parts(n + 1);
    json out = fs;
    // Every count of the set is the sum of the shards' (its letters are interleaved below).
    std::map<std::string, long long> counts;
    double sec = 0;
    std::size_t letters_given = 0, unrun = 0;
    for (std::size_t k = 1; k <= n; ++k) {
      if (!by_index[k]) {
        const std::size_t u = cases_of_shard(total, k, n);
        parts[k] = std::string(u, 'U');
        unrun += u;
        letters_given += u;
        continue;
      }
      const json* found = nullptr;
      for (const auto& s : array_at(by_index[k]->log, "sets")) {
        if (s.value("sha256", "") + "/" + s.value("set", "") == key)
          found = &s;
      }
      if (!found)
        throw MergeError(printable(by_index[k]->name) + ": lacks set " + printable(key, 160));
      parts[k] = found->value("outcomes", "");
      letters_given += parts[k].size();
      for (const auto& [name, v] : found->items()) {
        if (name != "cases_total" && v.is_number_integer())
          counts[name] = detail::saturating_add(counts[name], v.get<long long>());
      }
      sec += found->value("seconds", 0.0);
    }
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
    for (const auto& [name, v] : counts)
      out[name] = v;
    if (unrun) {
      out["cases"] = counts["cases"] + static_cast<long long>(unrun);
      out["not_applicable"] = counts["not_applicable"] + static_cast<long long>(unrun);
      out["missing"] = unrun;
    }
    out["outcomes"] = letters;
    out["seconds"] = sec;
    missing_letters += unrun;
    sets.push_back(out);
  }

  // Each missing shard: one UNSUPPORTED case that names it (in the totals unless its cases are
  // already counted as the sets' U letters).
  json missing_shards = json::array();
  std::string missing_text;
  const std::string tier = merged.value("tier", "?");
  for (const std::size_t k : missing) {
    const auto why_it = opt.why_missing.find(k);
    const std::string why = why_it != opt.why_missing.end() && !why_it->second.empty()
                                ? printable(why_it->second, 512)
                                : "it never ran, was cancelled, or timed out";
    const std::string shard = std::to_string(k) + "/" + std::to_string(n);
    missing_shards.push_back({{"shard", shard}, {"why", why}});
    cases.push_back(
        {{"id", tier + "/shard" + std::to_string(k) + "of" + std::to_string(n)},
         {"outcome", "UNSUPPORTED"},
         {"seconds", 0},
         {"message", "no log of shard " + shard + ": " + why +
                         (first_sets.empty() ? "" : "; its cases are U in sets[].outcomes")}});
    if (first_sets.empty()) {
      add_total("UNSUPPORTED", 1);
      add_total("cases", 1);
    }
    missing_text += (missing_text.empty() ? "" : ", ") + shard + " (" + why + ")";
  }
  if (missing_letters) {
    add_total("UNSUPPORTED", static_cast<long long>(missing_letters));
    add_total("cases", static_cast<long long>(missing_letters));
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
  std::string verdict = worst->log.value("verdict", "?");
  std::string reason = worst->log.value("reason", "");
  if (!missing.empty()) {
    // An incomplete run is never PASS: its missing cases are UNSUPPORTED.
    const std::string no_log = "no log of shard " + missing_text;
    if (verdict_rank(verdict) < verdict_rank("UNSUPPORTED") || worst_empty) {
      verdict = "UNSUPPORTED";
      reason = no_log;
    } else {
      reason += (reason.empty() ? "" : "; ") + no_log;
    }
    merged["missing_shards"] = missing_shards;
  }
  if (!superseded.empty())
    merged["superseded"] = superseded;
  merged["verdict"] = verdict;
  merged["reason"] = reason;
  return merged;
}

} // namespace

} // namespace mmaemu::reports
