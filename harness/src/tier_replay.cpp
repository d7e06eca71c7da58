// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "replay" (T1): every committed recording under the recordings folder, case by
// case on the CPU reference, through the same replay engine as `mmaemu replay`.

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
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

std::string attr_of(const recordings::MmaBatch& b, const std::string& key) {
  const auto it = b.attrs.find(key);
  return it == b.attrs.end() ? "" : it->second;
}

// The rows of `b` that `shard` selects, as a batch of their own.
recordings::MmaBatch select_rows(const recordings::MmaBatch& b, const Shard& shard) {
  recordings::MmaBatch s = b;
  s.ids.clear();
  s.a.clear();
  s.b.clear();
  s.c.clear();
  s.expect.clear();
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!shard.selects(i))
      continue;
    s.ids.push_back(b.ids[i]);
    s.a.insert(s.a.end(), b.a.begin() + static_cast<std::ptrdiff_t>(i * b.K),
               b.a.begin() + static_cast<std::ptrdiff_t>((i + 1) * b.K));
    s.b.insert(s.b.end(), b.b.begin() + static_cast<std::ptrdiff_t>(i * b.K),
               b.b.begin() + static_cast<std::ptrdiff_t>((i + 1) * b.K));
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
// result to the case (letter) it belongs to: a gemm_call call has one result per output.
SetCounts absorb(const SetResult& s, const std::vector<std::size_t>& unit_of,
                 const std::vector<std::string>& unit_ids, std::size_t cases_total,
                 const std::string& kind, const std::string& gpu, const std::string& recording,
                 const std::string& sha256, double seconds, TierResult& r) {
  SetCounts counts;
  std::string letters(unit_ids.size(), 'P');
  auto worse = [](char a, char b) {
    const std::string order = "PXUFE";
    return order.find(a) > order.find(b) ? a : b;
  };
  std::size_t passed = 0, failed = 0, errors = 0;
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    const CaseResult& c = s.results[i];
    const std::size_t u = i < unit_of.size() ? unit_of[i] : 0;
    if (c.outcome == Outcome::pass) {
      ++passed;
      r.count(Outcome::pass);
      continue;
    }
    std::string message = c.message;
    if (c.outcome == Outcome::error) {
      ++errors;
    } else if (c.outcome == Outcome::fail) {
      ++failed;
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
    if (u < letters.size())
      letters[u] = worse(letters[u], letter(c.outcome));
    r.add({recording + ":" + c.id, c.outcome, 0, message, true});
  }
  // The set's counts are per case (letter); the tier totals count every output.
  const std::size_t outputs = s.results.size();
  passed = static_cast<std::size_t>(std::count(letters.begin(), letters.end(), 'P'));
  failed = static_cast<std::size_t>(std::count(letters.begin(), letters.end(), 'F'));
  errors = static_cast<std::size_t>(std::count(letters.begin(), letters.end(), 'E'));
  json line = {{"recording", recording},
               {"sha256", sha256},
               {"set", s.name},
               {"kind", kind},
               {"preset", s.preset},
               {"gpu", gpu},
               {"cases", unit_ids.size()},
               {"cases_total", cases_total},
               {"passed", passed},
               {"failed", failed},
               {"errors", errors},
               {"not_applicable", 0},
               {"outputs", outputs},
               {"value", counts.value},
               {"zero_sign", counts.zero_sign},
               {"nan_payload", counts.nan_payload},
               {"seconds", seconds},
               {"outcomes", letters}};
  r.sets.push_back(line);
  return counts;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void add_counts(SetCounts& into, const SetCounts& c) {
  into.value += c.value;
  into.zero_sign += c.zero_sign;
  into.nan_payload += c.nan_payload;
}

} // namespace

SetCounts replay_set(const recordings::MmaBatch& batch, const std::string& recording,
                     const std::string& sha256, const Shard& shard, TierResult& r) {
  const recordings::MmaBatch sel = shard.active() ? select_rows(batch, shard) : batch;
  const std::string expect_error = attr_of(batch, "expect_error");
  const bool out_of_scope = attr_of(batch, "scope") == "out";
  const auto t0 = std::chrono::steady_clock::now();
  if (out_of_scope || !expect_error.empty()) {
    // Out of scope: listed, not run. Expected error: the hardware (or torch) refused the
    // set, and the emulator must refuse it with exactly the same class.
    std::string got;
    if (!out_of_scope) {
      try {
        const Preset& p = get_preset(sel.preset);
        std::vector<std::uint32_t> out(sel.size());
        model::dot_rows(sel.a.data(), sel.b.data(), sel.c.data(), sel.size(), sel.K, p,
                        {sel.fmt_a, sel.fmt_b}, out.data());
        got = "no error";
      } catch (const MmaemuError& e) {
        got = e.class_name();
      }
    }
    std::string letters(sel.size(), 'P');
    std::size_t passed = 0, failed = 0, na = 0;
    for (std::size_t i = 0; i < sel.size(); ++i) {
      const std::string id = recording + ":" + sel.ids[i];
      if (out_of_scope) {
        letters[i] = 'U';
        ++na;
        r.add({id, Outcome::unsupported, 0, "out of scope (n/a): " + attr_of(batch, "scope_reason"),
               true});
      } else if (got == expect_error) {
        ++passed;
        r.count(Outcome::pass);
      } else {
        letters[i] = 'F';
        ++failed;
        r.add({id, Outcome::fail, 0, "expected " + expect_error + ", got " + got, true});
      }
    }
    json line = {{"recording", recording},
                 {"sha256", sha256},
                 {"set", batch.name},
                 {"kind", "mma"},
                 {"preset", batch.preset},
                 {"gpu", attr_of(batch, "gpu")},
                 {"cases", sel.size()},
                 {"cases_total", batch.size()},
                 {"passed", passed},
                 {"failed", failed},
                 {"errors", 0},
                 {"not_applicable", na},
                 {"value", 0},
                 {"zero_sign", 0},
                 {"nan_payload", 0},
                 {"seconds", since(t0)},
                 {"outcomes", letters}};
    if (out_of_scope)
      line["scope"] = "out";
    if (!expect_error.empty())
      line["expect_error"] = expect_error;
    r.sets.push_back(line);
    return {};
  }
  const SetResult s = replay_batch(sel, recording);
  std::vector<std::size_t> unit_of(s.results.size());
  for (std::size_t i = 0; i < unit_of.size(); ++i)
    unit_of[i] = i;
  return absorb(s, unit_of, sel.ids, batch.size(), "mma", attr_of(batch, "gpu"), recording, sha256,
                since(t0), r);
}

SetCounts replay_recording(const recordings::Recording& rec, const std::string& recording,
                           const std::string& sha256, const Shard& shard, TierResult& r) {
  SetCounts total;
  for (const auto& b : rec.mma)
    add_counts(total, replay_set(b, recording, sha256, shard, r));
  for (const auto& b : rec.gemm) {
    const auto t0 = std::chrono::steady_clock::now();
    recordings::GemmBatch sel = b;
    sel.cases.clear();
    for (std::size_t i = 0; i < b.cases.size(); ++i) {
      if (shard.selects(i))
        sel.cases.push_back(b.cases[i]);
    }
    const SetResult s = replay_gemm_batch(sel, recording);
    std::vector<std::string> ids;
    for (const auto& c : sel.cases)
      ids.push_back(c.id);
    // One result per case, in order.
    std::vector<std::size_t> unit_of(s.results.size());
    for (std::size_t i = 0; i < unit_of.size(); ++i)
      unit_of[i] = i;
    const auto gpu = b.attrs.count("gpu") ? b.attrs.at("gpu") : "";
    add_counts(total, absorb(s, unit_of, ids, b.cases.size(), "gemm", gpu, recording, sha256,
                             since(t0), r));
  }
  for (const auto& b : rec.gemm_call) {
    const auto t0 = std::chrono::steady_clock::now();
    recordings::GemmCallBatch sel = b;
    sel.calls.clear();
    for (std::size_t i = 0; i < b.calls.size(); ++i) {
      if (shard.selects(i))
        sel.calls.push_back(b.calls[i]);
    }
    const SetResult s = replay_gemm_call_batch(sel, recording);
    std::vector<std::string> ids;
    std::vector<std::size_t> unit_of;
    for (std::size_t c = 0; c < sel.calls.size(); ++c) {
      ids.push_back(sel.calls[c].id);
      for (std::size_t o = 0; o < std::max<std::size_t>(1, sel.calls[c].outputs.size()); ++o) {
        unit_of.push_back(c);
      }
    }
    const auto gpu = b.attrs.count("gpu") ? b.attrs.at("gpu") : "";
    add_counts(total, absorb(s, unit_of, ids, b.calls.size(), "gemm_call", gpu, recording, sha256,
                             since(t0), r));
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
    r.add({t.name + "/data_budget", mib <= *t.budget_data_mib ? Outcome::pass : Outcome::fail, 0,
           msg});
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
      rec = recordings::read_recording(f);
    } catch (const recordings::RecordingError& e) {
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
