// SPDX-License-Identifier: BSD-2-Clause
// T2: the replay of the full hardware ground truth, read-only (docs/testing.md, "T2").

#include "mmaemu/harness/tier_truth.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/support/digest.hpp"
#include "tier_kinds.hpp"
#include "tier_work.hpp"

namespace mmaemu::harness {

namespace fs = std::filesystem;
using nlohmann::json;

TreeSnapshot snapshot_tree(const fs::path& dir) {
  TreeSnapshot snap;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory() && it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0)
      continue;
    if (S_ISDIR(st.st_mode))
      continue;
    TreeEntry e;
    e.bytes = static_cast<std::uintmax_t>(st.st_size);
    e.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    snap[fs::relative(it->path(), dir).string()] = e;
  }
  return snap;
}

std::vector<std::string> diff_snapshots(const TreeSnapshot& before, const TreeSnapshot& after) {
  std::vector<std::string> out;
  for (const auto& [path, e] : before) {
    const auto it = after.find(path);
    if (it == after.end()) {
      out.push_back("removed: " + path);
    } else if (!(it->second == e)) {
      out.push_back("changed: " + path + " (size " + std::to_string(e.bytes) + " -> " +
                    std::to_string(it->second.bytes) + ", mtime " +
                    (e.mtime_ns == it->second.mtime_ns ? "same" : "changed") + ")");
    }
  }
  for (const auto& [path, e] : after) {
    if (!before.count(path))
      out.push_back("added: " + path);
  }
  return out;
}

namespace {

bool is_inside(const fs::path& inner, const fs::path& outer) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(inner, ec);
  const fs::path b = fs::weakly_canonical(outer, ec);
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
    if (bi->empty())
      continue; // trailing separator
    if (ai == a.end() || *ai != *bi)
      return false;
  }
  return true;
}

struct RecordingRow {
  std::string path, sha256;
  std::size_t cases = 0, matched = 0, value = 0, zero_sign = 0, nan_payload = 0, errors = 0,
              not_applicable = 0, expected_errors = 0;
  std::string status = "ok"; // or why it was not replayed
  json mismatches = json::array();
};

std::string pad(std::string s, std::size_t w, bool right = false) {
  if (s.size() >= w)
    return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

} // namespace

void run_truth_replay(const fs::path& truth_dir, const fs::path& out_dir, const RunOptions& opt,
                      TierResult& r) {
  if (is_inside(out_dir, truth_dir)) {
    throw ValueError("--out: '" + out_dir.string() + "' is inside MMAEMU_TRUTH_DIR (" +
                     truth_dir.string() + "); T2 never writes into the truth");
  }
  const fs::path manifest = truth_dir / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) {
    r.verdict = Outcome::error;
    r.reason = "MMAEMU_TRUTH_DIR " + truth_dir.string() + " has no manifest.json";
    return;
  }
  // 1. Snapshot and pin before anything is read.
  const TreeSnapshot before = snapshot_tree(truth_dir);
  const std::string manifest_sha = support::sha256_file(manifest);
  json man;
  try {
    man = reports::read_json_file(manifest);
  } catch (const std::exception& e) {
    r.verdict = Outcome::error;
    r.reason = e.what();
    return;
  }
  r.inputs.push_back({"manifest.json", manifest_sha, fs::file_size(manifest)});

  // 2. The recordings: those the manifest lists (with their sha256), else every *.h5.
  std::vector<std::pair<std::string, std::string>> listed; // path, expected sha256 ("" = none)
  if (man.is_object() && man.contains("recordings") && man["recordings"].is_array()) {
    for (const auto& e : man["recordings"]) {
      if (e.is_string()) {
        listed.emplace_back(e.get<std::string>(), "");
      } else if (e.is_object() && e.contains("path") && e["path"].is_string()) {
        listed.emplace_back(e["path"].get<std::string>(), e.value("sha256", ""));
      } else {
        r.add({"manifest.json", Outcome::error, 0,
               "recordings[] entry " + e.dump() + " has no path"});
      }
    }
  } else {
    for (const auto& [path, entry] : before) {
      if (fs::path(path).extension() == ".h5")
        listed.emplace_back(path, "");
    }
  }
  std::sort(listed.begin(), listed.end());

  std::vector<RecordingRow> rows;
  if (opt.progress)
    opt.progress->begin(listed.size(), "truth recordings");
  std::size_t done = 0;
  for (const auto& entry : listed) {
    // Named copies, not structured bindings: the lambdas below capture them (clang 14, the
    // sanitizer build's compiler, does not capture structured bindings).
    const std::string& rel = entry.first;
    const std::string& expected_sha = entry.second;
    RecordingRow row;
    row.path = rel;
    const fs::path f = truth_dir / rel;
    if (!fs::is_regular_file(f, ec)) {
      row.status = "missing";
      r.add({rel, Outcome::error, 0, "listed in manifest.json but missing"});
      rows.push_back(row);
      continue;
    }
    // One read of the file: hashed, checked against the manifest, then parsed and replayed
    // through the engine's one loop (the same as T1 and `mmaemu replay`).
    bool sha_differs = false;
    ReplayOptions ro;
    ro.filter = detail::filter_of(opt.shard);
    ro.hardware_only = true;
    ro.check_sha256 = [&](const std::string& sha) {
      if (expected_sha.empty() || expected_sha == sha)
        return std::string();
      sha_differs = true;
      return "sha256 " + sha + " differs from manifest.json's " + expected_sha;
    };
    const std::size_t first_case = r.cases.size();
    replay_each_file({f}, ro, {}, [&](FileInfo& info, std::vector<SetResult>& sets) {
      row.sha256 = info.sha256;
      if (!info.sha256.empty())
        r.inputs.push_back({rel, info.sha256, info.bytes});
      if (sha_differs) {
        row.status = "sha256 differs from manifest";
        r.add({rel, Outcome::fail, 0, info.error});
        return;
      }
      if (!info.error.empty()) {
        row.status = "unreadable";
        r.add({rel, Outcome::error, 0, info.error});
        return;
      }
      for (const auto& s : sets) {
        detail::book_set(s, rel, row.sha256, r);
        row.cases += s.letters.size();
        row.matched += s.units[Outcome::pass];
        row.errors += s.units[Outcome::error];
        row.not_applicable += s.units[Outcome::unsupported];
        if (!s.expect_error.empty())
          row.expected_errors += s.units[Outcome::pass];
        row.value += s.mismatches.value;
        row.zero_sign += s.mismatches.zero_sign;
        row.nan_payload += s.mismatches.nan_payload;
      }
    });
    if (row.status != "ok") {
      rows.push_back(row);
      continue;
    }
    for (std::size_t i = first_case; i < r.cases.size() && row.mismatches.size() < 50; ++i) {
      if (r.cases[i].outcome == Outcome::unsupported)
        continue;
      row.mismatches.push_back({{"id", r.cases[i].id}, {"why", r.cases[i].message}});
    }
    if (opt.progress)
      opt.progress->step(++done, rel);
    rows.push_back(row);
  }
  if (opt.progress)
    opt.progress->end();

  // 3. The truth must be exactly as it was.
  if (opt.between_snapshots)
    opt.between_snapshots();
  const TreeSnapshot after = snapshot_tree(truth_dir);
  const auto changes = diff_snapshots(before, after);
  std::string change_text;
  for (std::size_t i = 0; i < changes.size() && i < 5; ++i)
    change_text += (i ? "; " : "") + changes[i];
  // Bookkeeping checks, not cases: they can fail the tier but never add a PASS.
  r.check({r.tier + "/truth_unchanged", changes.empty(),
           changes.empty()
               ? std::to_string(before.size()) + " files, sizes and mtimes unchanged"
               : std::to_string(changes.size()) + " change(s) during the run: " + change_text});
  std::string manifest_after;
  try {
    manifest_after = support::sha256_file(manifest);
  } catch (const std::exception&) {
    manifest_after = "(unreadable)";
  }
  const char* pin = std::getenv("MMAEMU_TRUTH_MANIFEST_SHA256");
  std::string pin_msg = "manifest.json sha256 " + manifest_sha;
  Outcome pin_outcome = manifest_after == manifest_sha ? Outcome::pass : Outcome::fail;
  if (pin_outcome == Outcome::fail)
    pin_msg += " changed to " + manifest_after + " during the run";
  if (pin && *pin && manifest_sha != pin) {
    pin_outcome = Outcome::fail;
    pin_msg += " is not the pinned MMAEMU_TRUTH_MANIFEST_SHA256 " + std::string(pin);
  }
  r.check({r.tier + "/manifest_pinned", pin_outcome == Outcome::pass, pin_msg});

  // 4. Totals and the delta table, against a previous replay.json when given.
  std::map<std::string, std::size_t> previous;
  if (opt.compare) {
    try {
      const json prev = reports::read_json_file(*opt.compare);
      for (const auto& row : prev.value("recordings", json::array())) {
        previous[row.value("path", "")] = row.value("matched", std::size_t{0});
      }
    } catch (const std::exception& e) {
      throw ValueError(std::string("--compare: ") + e.what());
    }
  }
  std::size_t zero_sign = 0, nan_payload = 0, value = 0, matched = 0, cases = 0, na = 0;
  json rec_json = json::array();
  std::string table = pad("recording", 44) + pad("cases", 9, true) + pad("matched", 9, true) +
                      pad("value", 7, true) + pad("zero_sign", 10, true) +
                      pad("nan_payload", 12, true) + pad("errors", 7, true) + pad("n/a", 6, true) +
                      (opt.compare ? pad("prev", 9, true) + pad("delta", 8, true) : "") +
                      "  status\n";
  std::string md =
      "| recording | cases | matched | value | zero_sign | nan_payload | errors | n/a |" +
      std::string(opt.compare ? " prev | delta |" : "") +
      " status |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" +
      std::string(opt.compare ? " ---: | ---: |" : "") + " --- |\n";
  for (const auto& row : rows) {
    zero_sign += row.zero_sign;
    nan_payload += row.nan_payload;
    value += row.value;
    matched += row.matched;
    cases += row.cases;
    na += row.not_applicable;
    json j = {{"path", row.path},
              {"sha256", row.sha256},
              {"cases", row.cases},
              {"matched", row.matched},
              {"value", row.value},
              {"zero_sign", row.zero_sign},
              {"nan_payload", row.nan_payload},
              {"errors", row.errors},
              {"not_applicable", row.not_applicable},
              {"expected_errors_reproduced", row.expected_errors},
              {"status", row.status},
              {"mismatches", row.mismatches}};
    std::string prev_cells, prev_md;
    if (opt.compare) {
      const auto it = previous.find(row.path);
      if (it == previous.end()) {
        prev_cells = pad("-", 9, true) + pad("new", 8, true);
        prev_md = " - | new |";
      } else {
        const long long d =
            static_cast<long long>(row.matched) - static_cast<long long>(it->second);
        j["previous_matched"] = it->second;
        prev_cells = pad(std::to_string(it->second), 9, true) +
                     pad((d > 0 ? "+" : "") + std::to_string(d), 8, true);
        prev_md = " " + std::to_string(it->second) + " | " + (d > 0 ? "+" : "") +
                  std::to_string(d) + " |";
      }
    }
    rec_json.push_back(j);
    table +=
        pad(row.path, 44) + pad(std::to_string(row.cases), 9, true) +
        pad(std::to_string(row.matched), 9, true) + pad(std::to_string(row.value), 7, true) +
        pad(std::to_string(row.zero_sign), 10, true) +
        pad(std::to_string(row.nan_payload), 12, true) + pad(std::to_string(row.errors), 7, true) +
        pad(std::to_string(row.not_applicable), 6, true) + prev_cells + "  " + row.status + "\n";
    md += "| " + row.path + " | " + std::to_string(row.cases) + " | " +
          std::to_string(row.matched) + " | " + std::to_string(row.value) + " | " +
          std::to_string(row.zero_sign) + " | " + std::to_string(row.nan_payload) + " | " +
          std::to_string(row.errors) + " | " + std::to_string(row.not_applicable) + " |" + prev_md +
          " " + row.status + " |\n";
  }
  const bool unchanged = changes.empty() && manifest_after == manifest_sha;
  const bool all_matched = r.total(Outcome::fail) == 0 && r.total(Outcome::error) == 0;
  // The replay's verdict is the tier's: the one rule over the cases and the checks.
  const Outcome verdict = outcome::judge(r.totals, verdict_notes(r, "no case ran")).outcome;
  json checks = {{"every_in_scope_case_matches", value == 0 && zero_sign == 0 && nan_payload == 0},
                 {"zero_sign_is_0", zero_sign == 0},
                 {"nan_payload_is_0", nan_payload == 0},
                 {"expected_errors_reproduced_by_class", all_matched},
                 {"no_unreadable_recording", r.total(Outcome::error) == 0},
                 {"truth_unchanged", unchanged}};
  json replay = {
      {"format", "mmaemu-truth-replay/1"},
      {"truth_dir", truth_dir.string()},
      {"manifest_sha256", manifest_sha},
      {"snapshot", {{"files", before.size()}, {"unchanged", unchanged}, {"changes", changes}}},
      {"shard", opt.shard.active() ? json(opt.shard.text()) : json()},
      {"recordings", rec_json},
      {"totals",
       {{"cases", cases},
        {"matched", matched},
        {"value", value},
        {"zero_sign", zero_sign},
        {"nan_payload", nan_payload},
        {"not_applicable", na}}},
      {"checks", checks},
      {"verdict", outcome_name(verdict)}};
  fs::create_directories(out_dir, ec);
  if (ec)
    throw ValueError("--out: '" + out_dir.string() + "' cannot be created (" + ec.message() + ")");
  reports::write_file_replacing(out_dir / "replay.json", reports::canonical_dump(replay));
  const std::string footer = std::to_string(matched) + " of " + std::to_string(cases) +
                             " cases matched; zero_sign " + std::to_string(zero_sign) +
                             ", nan_payload " + std::to_string(nan_payload) + "; truth " +
                             (unchanged ? "unchanged" : "CHANGED") + "\n";
  reports::write_file_replacing(out_dir / "delta.txt", table + footer);
  reports::write_file_replacing(out_dir / "delta.md", md + "\n" + footer);
  std::fprintf(opt.text, "%s%s", table.c_str(), footer.c_str());
  r.details = {{"truth",
                {{"dir", truth_dir.string()},
                 {"manifest_sha256", manifest_sha},
                 {"files", before.size()},
                 {"unchanged", unchanged},
                 {"zero_sign", zero_sign},
                 {"nan_payload", nan_payload},
                 {"value", value},
                 {"checks", checks},
                 {"replay_json", (out_dir / "replay.json").string()},
                 {"delta_table", (out_dir / "delta.txt").string()}}}};
}

namespace detail {

void run_truth_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const std::string var = t.run.value("env", std::string("MMAEMU_TRUTH_DIR"));
  const char* v = std::getenv(var.c_str());
  if (!v || !*v) {
    r.verdict = Outcome::unsupported;
    r.reason = "needs " + var + " (the hardware ground truth); it is not set";
    return;
  }
  const fs::path truth = v;
  std::error_code ec;
  if (!fs::is_directory(truth, ec)) {
    r.verdict = Outcome::error;
    r.reason = var + ": '" + truth.string() + "' is not a folder";
    return;
  }
  if (is_inside(opt.layout.log_root, truth)) {
    throw ValueError("--log-dir: '" + opt.layout.log_root.string() + "' is inside " + var +
                     "; T2 never writes into the truth");
  }
  if (!opt.out_dir.empty()) {
    run_truth_replay(truth, opt.out_dir, opt, r);
    return;
  }
  WorkDir work("t2");
  work.keep(); // the artefacts are the point: say where they are
  std::fprintf(opt.text, "%s: no --out given; replay.json and delta.txt go to %s\n", t.name.c_str(),
               work.path().c_str());
  run_truth_replay(truth, work.path(), opt, r);
}

} // namespace detail

} // namespace mmaemu::harness
