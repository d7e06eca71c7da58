// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "replay" (T1): every committed recording under the recordings folder, case by
// case on the CPU reference, through the same replay engine and the same loop over files as
// `mmaemu replay` (replay.hpp); here the results are only booked.

#include <algorithm>
#include <cstdio>

#include "tier_kinds.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::vector<fs::path> find_recordings(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory() && it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".h5")
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::uintmax_t tree_bytes(const fs::path& dir) {
  std::uintmax_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file())
      n += it->file_size();
  }
  return n;
}

} // namespace

CaseFilter filter_of(const Shard& shard) {
  return {shard.index - 1, shard.count};
}

void book_set(const SetResult& s, const std::string& recording, const std::string& sha256,
              TierResult& r) {
  // Every result counts in the tier totals; the ones that did not pass are listed.
  for (const CaseResult& c : s.results) {
    if (c.outcome == Outcome::pass) {
      r.count(Outcome::pass);
      continue;
    }
    std::string message = c.message;
    if (c.outcome == Outcome::fail && c.why != Mismatch::none) {
      message = "expected " + hex32(c.expected) + " actual " + hex32(c.actual) + " [" +
                mismatch_name(c.why) + "]" + (message.empty() ? "" : ": " + message);
    }
    r.add({recording + ":" + c.id, c.outcome, 0, message, true});
  }
  // The set's counts are per unit (letter), as the replay engine booked them.
  json line = {{"recording", recording},
               {"sha256", sha256},
               {"set", s.name},
               {"kind", s.kind},
               {"preset", s.preset},
               {"gpu", s.gpu},
               {"cases", s.letters.size()},
               {"cases_total", s.units_total},
               {"passed", s.units[Outcome::pass]},
               {"failed", s.units[Outcome::fail]},
               {"errors", s.units[Outcome::error]},
               {"not_applicable", s.units[Outcome::unsupported]},
               {"outputs", s.outputs},
               {"value", s.mismatches.value},
               {"zero_sign", s.mismatches.zero_sign},
               {"nan_payload", s.mismatches.nan_payload},
               {"seconds", s.seconds},
               {"outcomes", s.letters}};
  if (s.units[Outcome::xfail] > 0)
    line["xfailed"] = s.units[Outcome::xfail];
  if (s.units[Outcome::xpass] > 0)
    line["xpassed"] = s.units[Outcome::xpass];
  if (!s.scope.empty())
    line["scope"] = s.scope;
  if (!s.expect_error.empty())
    line["expect_error"] = s.expect_error;
  if (!s.xfail.empty())
    line["xfail"] = s.xfail;
  r.sets.push_back(line);
}

void run_replay_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const fs::path dir = opt.layout.recordings_dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    r.verdict = Outcome::unsupported;
    r.reason = "no recordings folder at " + dir.string() + " (use --recordings DIR)";
    return;
  }
  const auto files = find_recordings(dir);
  if (files.empty()) {
    r.verdict = Outcome::unsupported;
    r.reason = "no recording (*.h5) under " + dir.string();
    return;
  }
  r.details = {{"recordings_dir", dir.string()}, {"layout", opt.layout.origin}};
  if (t.budget_data_mib) {
    // The committed data must stay small enough for every clone and CI job.
    const std::uintmax_t bytes = tree_bytes(dir);
    const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
    char msg[160];
    std::snprintf(msg, sizeof msg, "%.2f MiB of recordings, budget %.2f MiB", mib,
                  *t.budget_data_mib);
    // Bookkeeping, not a case: an overrun fails the tier, a budget that holds passes nothing.
    r.check({t.name + "/data_budget", mib <= *t.budget_data_mib, msg});
    r.details["data_bytes"] = bytes;
  }
  if (opt.progress)
    opt.progress->begin(files.size(), "recordings");
  ReplayOptions ro;
  ro.filter = filter_of(opt.shard);
  ro.hardware_only = true; // T1 is hardware evidence: a computed file is UNSUPPORTED
  std::size_t done = 0;
  replay_each_file(files, ro, {}, [&](FileInfo& f, std::vector<SetResult>& sets) {
    const std::string rel = fs::relative(f.file, dir, ec).string();
    if (!f.sha256.empty())
      r.inputs.push_back({rel, f.sha256, f.bytes});
    if (!f.error.empty()) {
      r.add({rel, Outcome::error, 0, f.error});
      if (opt.progress)
        opt.progress->step(++done, rel + ": unreadable");
      return;
    }
    const std::size_t failed_before = r.total(Outcome::fail) + r.total(Outcome::error);
    for (const auto& s : sets)
      book_set(s, rel, f.sha256, r);
    const std::size_t bad = r.total(Outcome::fail) + r.total(Outcome::error) - failed_before;
    if (opt.progress) {
      opt.progress->step(++done, rel + ": " + std::to_string(f.cases) + " cases, " +
                                     std::to_string(bad) + " not passed");
    }
  });
  if (opt.progress)
    opt.progress->end();
}

} // namespace mmaemu::harness::detail
