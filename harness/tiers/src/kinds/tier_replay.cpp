// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "replay" (T1): every committed recording under the recordings folder, case by
// case on the CPU reference, through the same replay engine as `mmaemu replay`.

#include <algorithm>
#include <cstdio>

#include "mmaemu/support/digest.hpp"
#include "tier_kinds.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

char letter(Outcome o) {
  switch (o) {
  case Outcome::pass:
    return 'P';
  case Outcome::fail:
    return 'F';
  case Outcome::error:
    return 'E';
  case Outcome::unsupported:
    return 'U';
  case Outcome::xfail:
    return 'X';
  }
  return '?';
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// The rows of `b` that `shard` selects, as a batch of their own.
recordings::MmaBatch select_rows(const recordings::MmaBatch& b, const Shard& shard) {
  recordings::MmaBatch s = b;
  s.ids.clear();
  s.a.clear();
  s.b.clear();
  s.a_wide.clear();
  s.b_wide.clear();
  s.c.clear();
  s.expect.clear();
  // Rows [i*K, (i+1)*K) of an operand array (FP8 codes, or the wide formats' codes).
  const auto take = [&](auto& to, const auto& from, std::size_t i) {
    to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(i * b.K),
              from.begin() + static_cast<std::ptrdiff_t>((i + 1) * b.K));
  };
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!shard.selects(i))
      continue;
    s.ids.push_back(b.ids[i]);
    if (b.wide()) {
      take(s.a_wide, b.a_wide, i);
      take(s.b_wide, b.b_wide, i);
    } else {
      take(s.a, b.a, i);
      take(s.b, b.b, i);
    }
    s.c.push_back(b.c[i]);
    s.expect.push_back(b.expect[i]);
  }
  return s;
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

namespace {

// Adds one set's line to r.sets and its non-passing results to r.cases. `unit_of` maps each
// result to the case (letter) it belongs to: a gemm_call call has one result per output. The
// set's attributes (scope, expect_error) were honoured by the replay library (replay.hpp),
// the same code as `mmaemu replay`; here the results are only booked.
SetCounts absorb(const SetResult& s, const std::vector<std::size_t>& unit_of,
                 const std::vector<std::string>& unit_ids, std::size_t cases_total,
                 const std::string& kind, const std::string& recording, const std::string& sha256,
                 TierResult& r) {
  SetCounts counts;
  // '-' until a result lands in the unit: a unit without any result (a call that recorded no
  // output) ran nothing, so it is UNSUPPORTED, never PASS.
  std::string letters(unit_ids.size(), '-');
  auto worse = [](char a, char b) {
    const std::string order = "-PXUFE";
    return order.find(a) > order.find(b) ? a : b;
  };
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    const CaseResult& c = s.results[i];
    const std::size_t u = i < unit_of.size() ? unit_of[i] : 0;
    if (u < letters.size())
      letters[u] = worse(letters[u], letter(c.outcome));
    if (c.outcome == Outcome::pass) {
      r.count(Outcome::pass);
      continue;
    }
    std::string message = c.message;
    if (c.outcome == Outcome::fail) {
      if (c.why == Mismatch::zero_sign) {
        ++counts.zero_sign;
      } else if (c.why == Mismatch::nan_payload) {
        ++counts.nan_payload;
      } else if (c.why == Mismatch::value) {
        ++counts.value;
      }
      if (c.why != Mismatch::none) {
        message = "expected " + hex32(c.expected) + " actual " + hex32(c.actual) + " [" +
                  mismatch_name(c.why) + "]" + (message.empty() ? "" : ": " + message);
      }
    }
    r.add({recording + ":" + c.id, c.outcome, 0, message, true});
  }
  for (std::size_t u = 0; u < letters.size(); ++u) {
    if (letters[u] != '-')
      continue;
    letters[u] = 'U';
    r.add({recording + ":" + unit_ids[u], Outcome::unsupported, 0, "no recorded output", true});
  }
  // The set's counts are per case (letter); the tier totals count every output.
  auto n_of = [&](char l) {
    return static_cast<std::size_t>(std::count(letters.begin(), letters.end(), l));
  };
  json line = {{"recording", recording},
               {"sha256", sha256},
               {"set", s.name},
               {"kind", kind},
               {"preset", s.preset},
               {"gpu", s.gpu},
               {"cases", unit_ids.size()},
               {"cases_total", cases_total},
               {"passed", n_of('P')},
               {"failed", n_of('F')},
               {"errors", n_of('E')},
               {"not_applicable", n_of('U')},
               {"outputs", s.results.size()},
               {"value", counts.value},
               {"zero_sign", counts.zero_sign},
               {"nan_payload", counts.nan_payload},
               {"seconds", s.seconds},
               {"outcomes", letters}};
  if (!s.scope.empty())
    line["scope"] = s.scope;
  if (!s.expect_error.empty())
    line["expect_error"] = s.expect_error;
  r.sets.push_back(line);
  return counts;
}

void add_counts(SetCounts& into, const SetCounts& c) {
  into.value += c.value;
  into.zero_sign += c.zero_sign;
  into.nan_payload += c.nan_payload;
}

// One result per case, in order.
std::vector<std::size_t> identity(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

} // namespace

SetCounts replay_set(const recordings::MmaBatch& batch, const std::string& recording,
                     const std::string& sha256, const Shard& shard, TierResult& r) {
  const recordings::MmaBatch sel = shard.active() ? select_rows(batch, shard) : batch;
  const SetResult s = replay_batch(sel, recording);
  return absorb(s, identity(s.results.size()), sel.ids, batch.size(), "mma", recording, sha256, r);
}

SetCounts replay_recording(const recordings::Recording& rec, const std::string& recording,
                           const std::string& sha256, const Shard& shard, TierResult& r) {
  SetCounts total;
  for (const auto& b : rec.mma)
    add_counts(total, replay_set(b, recording, sha256, shard, r));
  for (const auto& b : rec.gemm) {
    recordings::GemmBatch sel = b;
    sel.cases.clear();
    for (std::size_t i = 0; i < b.cases.size(); ++i) {
      if (shard.selects(i))
        sel.cases.push_back(b.cases[i]);
    }
    const SetResult s = replay_gemm_set(sel, recording);
    std::vector<std::string> ids;
    for (const auto& c : sel.cases)
      ids.push_back(c.id);
    add_counts(total, absorb(s, identity(s.results.size()), ids, b.cases.size(), "gemm", recording,
                             sha256, r));
  }
  for (const auto& b : rec.gemm_call) {
    recordings::GemmCallBatch sel = b;
    sel.calls.clear();
    for (std::size_t i = 0; i < b.calls.size(); ++i) {
      if (shard.selects(i))
        sel.calls.push_back(b.calls[i]);
    }
    const SetResult s = replay_gemm_call_set(sel, recording);
    std::vector<std::string> ids;
    std::vector<std::size_t> unit_of;
    for (std::size_t c = 0; c < sel.calls.size(); ++c) {
      ids.push_back(sel.calls[c].id);
      for (std::size_t o = 0; o < sel.calls[c].outputs.size(); ++o)
        unit_of.push_back(c);
    }
    add_counts(total, absorb(s, unit_of, ids, b.calls.size(), "gemm_call", recording, sha256, r));
  }
  return total;
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
  std::size_t done = 0;
  for (const auto& f : files) {
    const std::string rel = fs::relative(f, dir, ec).string();
    InputFile in{rel, "", 0};
    try {
      in.sha256 = support::sha256_file(f);
      in.bytes = fs::file_size(f);
    } catch (const std::exception& e) {
      r.add({rel, Outcome::error, 0, e.what()});
      continue;
    }
    r.inputs.push_back(in);
    recordings::Recording rec;
    try {
      rec = read_recording_for_replay(f);
    } catch (const std::exception& e) {
      r.add({rel, Outcome::error, 0, e.what()});
      if (opt.progress)
        opt.progress->step(++done, rel + ": unreadable");
      continue;
    }
    std::size_t failed_before = r.total(Outcome::fail) + r.total(Outcome::error);
    replay_recording(rec, rel, in.sha256, opt.shard, r);
    const std::size_t bad = r.total(Outcome::fail) + r.total(Outcome::error) - failed_before;
    if (opt.progress) {
      opt.progress->step(++done, rel + ": " + std::to_string(rec.case_count()) + " cases, " +
                                     std::to_string(bad) + " not passed");
    }
  }
  if (opt.progress)
    opt.progress->end();
}

} // namespace mmaemu::harness::detail
