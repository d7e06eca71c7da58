// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report keygen --out KEY.pem [--json PATH]
// mmaemu report verify PATH... [--keys DIR] [--json PATH]
// mmaemu report release --date YYYY-MM-DD [--out DIR] [--log-dir DIR] [--keys DIR] [--tiers DIR]
//                       [--allow-other-commit] [--json PATH]
// mmaemu report merge LOG... [--out FILE] [--keys DIR] [--json PATH]
// mmaemu report merge LOG-OR-DIR... --shards N [--name STEM] [--why K=TEXT]... [--out FILE]
//                     [--keys DIR] [--json PATH]
// mmaemu report compare A.json B.json [--json PATH]
// mmaemu report publish LOG... [--json PATH]: signed logs trusted by docs/validation_logs/keys
//                       into the committed docs/validation_logs/<date>/

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "commands.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/log_at_path.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/merge_logs.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "mmaemu/reports/verify_log.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "read_inputs.hpp"
#include "tier_args.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ReportArgs {
  std::string out, keys, date, log_dir, tiers;
  std::vector<std::string> paths;
  bool allow_other_commit = false; // report release
  bool trust_tiers = false;        // report release --trust-tiers
  std::size_t shards = 0;          // report merge: the run's shard count (collect mode)
  std::string name;                // report merge --shards: the logs' stem (T1, mutants)
  std::vector<std::string> why;    // report merge --shards: K=TEXT, the engine's word
  JsonOption json;
};

fs::path keys_dir(const ReportArgs& a) {
  if (!a.keys.empty())
    return a.keys;
  return harness::discover_layout().keys_dir;
}

int run_keygen(const ReportArgs& a) {
  try {
    // Neither key file may be a special file, a folder or something mmaemu reads.
    check_output_option("--out", a.out);
    check_output_option("--out", reports::public_key_path(a.out));
    a.json.check({a.out, reports::public_key_path(a.out)});
    const auto k = reports::generate_key(a.out);
    const auto fp = reports::fingerprint(reports::load_public_key(k.public_key));
    std::printf("private key %s (mode 0600): keep it secret, point MMAEMU_SIGNING_KEY at it\n",
                shown(k.private_key).c_str());
    std::printf("public key  %s: copy it into docs/validation_logs/keys/ to trust it\n",
                shown(k.public_key).c_str());
    std::printf("fingerprint %s\n", fp.c_str());
    a.json.write({{"private_key", k.private_key.string()},
                  {"public_key", k.public_key.string()},
                  {"fingerprint", fp}});
  } catch (const reports::SigningError& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

// One line per log: OK, FAIL (a log that does not verify) or ERROR (a file that is not a
// readable validation log, or an argument that names nothing: a missing path, a dangling
// link, a folder that cannot be searched, a folder without logs). Every argument is checked,
// whatever an earlier one was; the exit status is the worst: 2 if any was an ERROR, else 1 if
// any FAILed, else 0.
int run_verify(const ReportArgs& a) {
  reports::TrustedKeys keys;
  try {
    keys = reports::load_trusted_keys(keys_dir(a));
    // --json is checked before any work against every file the arguments name (each argument
    // on its own: one that names nothing is reported below, not here).
    std::vector<fs::path> read = files_under(keys_dir(a));
    for (const auto& p : a.paths) {
      try {
        for (const auto& l : reports::collect_logs({fs::path(p)})) {
          read.push_back(l);
          read.push_back(reports::signature_path(l));
        }
      } catch (const std::exception&) {
      }
    }
    a.json.check(read);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  // Each argument on its own: one that names nothing is an ERROR of its own line.
  std::vector<std::pair<fs::path, std::optional<reports::LogVerification>>> logs;
  for (const auto& p : a.paths) {
    reports::LogVerification bad;
    bad.file = p;
    bad.error = true;
    try {
      std::error_code ec;
      if (fs::symlink_status(p, ec).type() == fs::file_type::symlink &&
          fs::status(p, ec).type() == fs::file_type::not_found) {
        bad.reason = "a dangling symbolic link";
      } else {
        const auto found = reports::collect_logs({fs::path(p)});
        for (const auto& f : found)
          logs.emplace_back(f, std::nullopt);
        if (!found.empty())
          continue;
        bad.reason = "no validation log (*.json) under it";
      }
    } catch (const std::exception& e) {
      bad.reason = e.what();
    }
    logs.emplace_back(p, bad);
  }
  std::optional<reports::LogVerification> first_bad;
  std::size_t failed = 0, errors = 0;
  json listed = json::array();
  for (const auto& [l, given] : logs) {
    const auto v = given ? *given : reports::verify_log(l, keys);
    const char* verdict = v.ok ? "OK" : v.error ? "ERROR" : "FAIL";
    std::printf("%-5s %s: %s\n", verdict, shown(l).c_str(), v.reason.c_str());
    listed.push_back({{"log", l.string()}, {"verdict", verdict}, {"reason", v.reason}});
    if (v.ok)
      continue;
    ++(v.error ? errors : failed);
    if (!first_bad || (v.error && !first_bad->error))
      first_bad = v;
  }
  std::printf("%zu verified, %zu failed, %zu errors (trusted keys: %s, %zu)\n",
              logs.size() - failed - errors, failed, errors, shown(keys.dir).c_str(),
              keys.by_fingerprint.size());
  std::fflush(stdout);
  try {
    a.json.write({{"logs", listed},
                  {"verified", logs.size() - failed - errors},
                  {"failed", failed},
                  {"errors", errors},
                  {"keys", keys.dir.string()}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  if (first_bad) {
    error_line(shown(first_bad->file) +
               (first_bad->error ? " is not a readable validation log: " : " does not verify: ") +
               first_bad->reason);
    return errors ? kUsage : kFailed;
  }
  return kOk;
}

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

// A tier name as a file name: what publish_log may create beside the shards.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '.')
    return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.')
      return false;
  }
  return true;
}

// merged[key] when it is a string, else "".
std::string string_at(const json& merged, const char* key) {
  const auto it = merged.find(key);
  return it != merged.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The shard logs a --shards merge takes: files as given; in folders (searched like `report
// verify`), the files named <stem>-shard<k>of<N>[-<m>].json of this N (and of --name).
std::vector<fs::path> shard_log_files(const ReportArgs& a, std::string& stem) {
  std::vector<fs::path> out;
  std::set<std::string> stems;
  for (const auto& p : a.paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    for (const auto& f : reports::collect_logs({fs::path(p)})) {
      std::string s;
      std::size_t k = 0, n = 0;
      if (!reports::parse_shard_log_name(f.filename().string(), s, k, n) || n != a.shards)
        continue;
      if (!a.name.empty() && s != a.name)
        continue;
      stems.insert(s);
      out.push_back(f);
    }
  }
  if (stems.size() > 1) {
    std::string list;
    for (const auto& s : stems)
      list += (list.empty() ? "" : ", ") + support::printable(s, 64);
    throw std::runtime_error("the folders hold shard logs of " + list + "; give --name");
  }
  stem = stems.empty() ? a.name : *stems.begin();
  return out;
}

int run_merge(const ReportArgs& a) {
  std::vector<reports::ShardLog> shards;
  std::optional<reports::TrustedKeys> keys;
  reports::MergeOptions mo;
  mo.count = a.shards;
  std::vector<fs::path> files(a.paths.begin(), a.paths.end());
  std::vector<fs::path> merge_inputs;
  std::string stem;
  try {
    for (const auto& w : a.why) {
      const auto eq = w.find('=');
      std::size_t k = 0;
      try {
        k = eq == std::string::npos ? 0 : std::stoul(w.substr(0, eq));
      } catch (const std::logic_error&) {
        k = 0;
      }
      if (k < 1 || k > a.shards) {
        error_line("--why: '" + support::printable(w, 128) + "' is not K=TEXT with 1 <= K <= " +
                   std::to_string(a.shards) + " (and needs --shards)");
        return kUsage;
      }
      mo.why_missing[k] = w.substr(eq + 1);
    }
    a.json.check(joined(std::vector<fs::path>(a.paths.begin(), a.paths.end()),
                        a.keys.empty() ? std::vector<fs::path>{} : files_under(a.keys)));
    if (!a.keys.empty())
      keys = reports::load_trusted_keys(a.keys);
    if (a.shards)
      files = shard_log_files(a, stem);
    // --out is the file written, exactly: not a shard (or a link to one), not a key, not a
    // special file or folder; its .sig neither (docs/api.md, "Conventions").
    if (!a.out.empty()) {
      merge_inputs = joined(files, a.keys.empty() ? std::vector<fs::path>{} : files_under(a.keys));
      check_output_option("--out", a.out, merge_inputs);
      check_output_option("--out", reports::signature_path(a.out), merge_inputs);
    }
    for (const auto& p : files) {
      if (keys) {
        const auto v = reports::verify_log(p, *keys);
        if (!v.ok) {
          error_line(shown(p) + " does not verify: " + v.reason);
          return v.error ? kUsage : kFailed;
        }
      }
      const std::string bytes = reports::read_file_bytes(p);
      shards.push_back({p.filename().string(), support::sha256_hex(bytes.data(), bytes.size()),
                        reports::parse_json_text(bytes, p)});
    }
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  if (a.shards && shards.empty()) {
    // Nothing to merge is the loudest failure of all: every shard is missing.
    for (std::size_t k = 1; k <= a.shards; ++k) {
      const auto it = mo.why_missing.find(k);
      std::printf("MISSING shard %zu/%zu: no log%s%s\n", k, a.shards,
                  it == mo.why_missing.end() ? "" : ": ",
                  it == mo.why_missing.end() ? "" : support::printable(it->second, 512).c_str());
    }
    error_line("no shard log" + (stem.empty() ? std::string() : " of " + support::printable(stem)) +
               " of a " + std::to_string(a.shards) + "-shard run under the paths given: all " +
               std::to_string(a.shards) + " shards are missing");
    return kFailed;
  }
  json merged;
  try {
    merged = reports::merge_shard_logs(shards, mo);
  } catch (const reports::MergeError& e) {
    error_line(e.what());
    return kUsage;
  }
  const std::string tier = string_at(merged, "tier");
  if (a.out.empty() && !plain_name(tier)) {
    error_line("the shards' tier " + support::printable(tier) +
               " is not a plain file name; give --out");
    return kUsage;
  }
  std::unique_ptr<reports::Key> key;
  if (const char* k = std::getenv("MMAEMU_SIGNING_KEY"); k && *k) {
    try {
      key = std::make_unique<reports::Key>(reports::load_private_key(k));
    } catch (const reports::SigningError& e) {
      error_line(std::string("MMAEMU_SIGNING_KEY: ") + e.what());
      return kUsage;
    }
  }
  const fs::path target =
      a.out.empty() ? files[0].parent_path() / (tier + ".json") : fs::path(a.out);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  for (const auto& m : merged.value("missing_shards", json::array())) {
    std::printf("MISSING shard %s: %s\n", support::printable(m.value("shard", "?")).c_str(),
                support::printable(m.value("why", ""), 512).c_str());
  }
  for (const auto& s : merged.value("superseded", json::array())) {
    std::printf("superseded shard %s: %s (%s), kept %s, which finished later\n",
                support::printable(s.value("shard", "?")).c_str(),
                support::printable(s.value("file", "")).c_str(),
                support::printable(s.value("verdict", "?")).c_str(),
                support::printable(s.value("kept", "")).c_str());
  }
  const std::string verdict = string_at(merged, "verdict");
  try {
    const auto pub = a.out.empty()
                         ? reports::publish_log(merged, dir, target.stem().string(), key.get())
                         : reports::write_log_at(merged, a.out, key.get(),
                                                 joined(merge_inputs, standard_inputs()));
    std::printf("merged %zu shards of %s: %s -> %s (%s)\n", merged["merged_from"].size(),
                support::printable(tier).c_str(), support::printable(verdict).c_str(),
                shown(pub.log).c_str(), pub.signature.empty() ? "unsigned" : "signed");
    if (!string_at(merged, "reason").empty())
      std::printf("reason: %s\n", support::printable(string_at(merged, "reason"), 2048).c_str());
    a.json.write({{"tier", tier},
                  {"shards", merged["merged_from"].size()},
                  {"verdict", verdict},
                  {"log", pub.log.string()},
                  {"signed", !pub.signature.empty()}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const std::exception& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  }
  // With --shards the merge is the run's verdict: anything but PASS is a failure.
  if (a.shards && verdict != "PASS") {
    error_line("merged " + support::printable(tier) + " of " + std::to_string(a.shards) +
               " shards is " + support::printable(verdict) + ", not PASS");
    return kFailed;
  }
  return kOk;
}

// What `report compare` sets side by side: the run's result, not where or how long it ran.
struct Differences {
  std::vector<std::string> lines;
  void add(const std::string& what, const json& a, const json& b) {
    if (a != b)
      lines.push_back(what + ": " + support::printable(a.dump(), 300) + " vs " +
                      support::printable(b.dump(), 300));
  }
};

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

// The date folder a log is published under: its own start date (UTC), else the date folder it
// lies in, else today.
std::string publish_date(const json& log, const fs::path& file) {
  if (const auto d = log.find("durations"); d != log.end() && d->is_object()) {
    const std::string started = d->value("started_utc", "");
    if (started.size() >= 10 && reports::is_date(started.substr(0, 10)))
      return started.substr(0, 10);
  }
  const std::string parent = file.parent_path().filename().string();
  return reports::is_date(parent) ? parent : reports::utc_date();
}

// "T1-2" -> "T1": publish_log gives a free name again in the committed folder.
std::string publish_stem(const fs::path& file) {
  std::string stem = file.stem().string();
  const auto dash = stem.rfind('-');
  if (dash != std::string::npos && dash + 1 < stem.size() &&
      stem.find_first_not_of("0123456789", dash + 1) == std::string::npos)
    stem.erase(dash);
  return stem;
}

bool inside(const fs::path& p, const fs::path& dir) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(fs::absolute(p), ec);
  const fs::path b = fs::weakly_canonical(fs::absolute(dir), ec);
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
    if (ai == a.end() || *ai != *bi)
      return false;
  }
  return true;
}

// Copies each log, with its signature, into the committed folder: only logs that verify against
// the keys trusted there (an unsigned log, or one of an untrusted key, would make
// committed_validation_logs_verify fail), each under its date, and says which commit each is
// of. Every log is checked before any is copied.
int run_publish(const ReportArgs& a) {
  // Always the committed folder's own keys: a log must verify where it is published.
  const harness::Layout layout = harness::discover_layout();
  if (layout.publish_root.empty()) {
    error_line("report publish needs the source tree's docs/validation_logs (run the mmaemu of "
               "a build tree)");
    return kUsage;
  }
  reports::TrustedKeys keys;
  try {
    a.json.check(std::vector<fs::path>(a.paths.begin(), a.paths.end()));
    keys = reports::load_trusted_keys(layout.keys_dir);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  struct Ready {
    fs::path file;
    std::string bytes, sig, date, stem, commit;
    bool dirty = false;
    std::string signer;
  };
  std::vector<Ready> ready;
  for (const auto& p : a.paths) {
    if (inside(p, layout.publish_root)) {
      error_line(shown(p) + ": already in " + shown(layout.publish_root));
      return kUsage;
    }
    const auto v = reports::verify_log(p, keys);
    if (!v.ok) {
      error_line(shown(p) + ": refusing to publish: " + v.reason +
                 (v.reason.find("unsigned") != std::string::npos
                      ? " (run the tier with MMAEMU_SIGNING_KEY set, or with --publish)"
                      : ""));
      return kUsage;
    }
    Ready r;
    r.file = p;
    try {
      r.bytes = reports::read_file_bytes(p);
      r.sig =
          support::read_input_file(reports::signature_path(p), support::kMaxKeyBytes, "signature");
      const json log = reports::parse_json_text(r.bytes, p);
      r.date = publish_date(log, p);
      r.stem = publish_stem(p);
      const reports::LogRevision rev = reports::log_revision(log);
      r.commit = rev.commit;
      r.dirty = rev.dirty;
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
    r.signer = v.reason;
    ready.push_back(std::move(r));
  }
  json published = json::array();
  for (const auto& r : ready) {
    try {
      const fs::path dir = reports::prepare_log_dir(layout.publish_root, r.date);
      const auto pub = reports::publish_signed_copy(r.bytes, r.sig, dir, r.stem);
      std::printf("published %s -> %s (commit %s%s; %s)\n", shown(r.file).c_str(),
                  shown(pub.log).c_str(),
                  support::printable(r.commit.empty() ? "unknown" : r.commit).c_str(),
                  r.dirty ? ", dirty tree" : "", support::printable(r.signer).c_str());
      published.push_back({{"from", r.file.string()},
                           {"log", pub.log.string()},
                           {"signature", pub.signature.string()},
                           {"commit", r.commit},
                           {"dirty", r.dirty}});
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  std::printf("%zu published into %s: commit them (git add) with the change they validate\n",
              ready.size(), shown(layout.publish_root).c_str());
  try {
    a.json.write({{"published", published}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_report(CLI::App& app, int& exit_code) {
  CLI::App* rep =
      app.add_subcommand("report", "Signing keys, log verification, merge, release report");
  rep->require_subcommand(1);

  auto ka = std::make_shared<ReportArgs>();
  CLI::App* keygen = rep->add_subcommand("keygen", "Make an Ed25519 signing key pair");
  keygen->add_option("--out", ka->out, "Private key to write (KEY.pem; KEY.pub beside it)")
      ->required();
  ka->json.add(*keygen, "Also write the key files and fingerprint");
  keygen->callback([ka, &exit_code] { exit_code = run_keygen(*ka); });

  auto va = std::make_shared<ReportArgs>();
  CLI::App* verify =
      rep->add_subcommand("verify", "Check validation logs against the trusted keys");
  verify->add_option("paths", va->paths, "Logs or folders of logs")->required();
  verify->add_option("--keys", va->keys,
                     "Folder of trusted *.pub keys (default: docs/validation_logs/keys)");
  va->json.add(*verify, "Also write each log's verdict");
  verify->callback([va, &exit_code] { exit_code = run_verify(*va); });

  auto ra = std::make_shared<ReportArgs>();
  CLI::App* release =
      rep->add_subcommand("release", "Sign-off report of one date's logs (md + html)");
  release->add_option("--date", ra->date, "YYYY-MM-DD (UTC), the logs' folder")->required();
  release->add_option("--out", ra->out,
                      "Folder for release.md and release.html (default: the date's folder)");
  release->add_option("--log-dir", ra->log_dir,
                      "Root of the validation logs (default: the committed docs/validation_logs)");
  release->add_option("--keys", ra->keys, "Folder of trusted *.pub keys");
  add_tiers_options(*release, ra->tiers, ra->trust_tiers,
                    "Folder of tier files (which tiers are required)");
  release->add_flag("--allow-other-commit", ra->allow_other_commit,
                    "Take logs of another commit than HEAD, or of a dirty tree (listed as such)");
  ra->json.add(*release, "Also write the verdict and the tiers' status");
  release->callback([ra, &exit_code] { exit_code = run_release(*ra); });

  auto ma = std::make_shared<ReportArgs>();
  CLI::App* merge = rep->add_subcommand("merge", "Combine the logs of --shard k/N runs into one");
  merge->add_option("paths", ma->paths, "The shard logs, 1/N..N/N")->required();
  merge->add_option("--out", ma->out,
                    "Merged log (default: <tier>.json beside the first shard; a "
                    "taken name gets a -2, -3, ... suffix)");
  merge->add_option("--keys", ma->keys, "Verify every shard against these trusted keys first");
  merge
      ->add_option("--shards", ma->shards,
                   "The run had N shards: paths may be folders (searched for "
                   "<name>-shard<k>of<N>[-<m>].json), a missing shard is UNSUPPORTED, a shard "
                   "logged twice (re-queued) counts once, and the exit status is 0 only for "
                   "PASS")
      ->check(CLI::Range(1, 100000));
  merge->add_option("--name", ma->name, "With --shards: the logs' stem (T1, mutants)");
  merge->add_option("--why", ma->why,
                    "With --shards: K=TEXT, why shard K has no log (the engine's word)");
  ma->json.add(*merge, "Also write the merged log's path and verdict");
  merge->callback([ma, &exit_code] { exit_code = run_merge(*ma); });

  auto ca = std::make_shared<ReportArgs>();
  CLI::App* compare = rep->add_subcommand(
      "compare", "Whether two logs hold the same result: tier, commit, verdict, totals, inputs, "
                 "each case's outcome and each set's counts and letters");
  compare->add_option("logs", ca->paths, "Two validation logs")->required()->expected(2);
  ca->json.add(*compare, "whether they hold the same result, and each difference");
  compare->callback([ca, &exit_code] { exit_code = run_compare(*ca); });

  auto pa = std::make_shared<ReportArgs>();
  CLI::App* publish = rep->add_subcommand(
      "publish", "Copy signed logs that verify into the committed docs/validation_logs/<date>/");
  publish->add_option("paths", pa->paths, "Validation logs (each with its .sig)")->required();
  pa->json.add(*publish, "Also write where each log went");
  publish->callback([pa, &exit_code] { exit_code = run_publish(*pa); });
}

} // namespace mmaemu::cli
