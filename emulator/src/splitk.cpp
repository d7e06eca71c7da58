// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/splitk.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu {

SplitKRequest parse_splitk(const std::string& text) {
  if (text == "auto")
    return SplitKRequest::automatic();
  const auto comma = text.find(',');
  const std::string s_text = text.substr(0, comma);
  std::size_t used = 0;
  int S = 0;
  try {
    S = std::stoi(s_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s_text.size() || S < 1) {
    throw ValueError("splitk '" + text +
                     "': expected auto, 1, S,contiguous, S,serial or S,pairwise");
  }
  if (comma == std::string::npos) {
    if (S != 1)
      throw ValueError("splitk '" + text +
                       "': S > 1 needs a scheme (S,contiguous, S,serial or S,pairwise)");
    return SplitKRequest::explicit_split(1);
  }
  const std::string scheme = text.substr(comma + 1);
  if (scheme != "contiguous" && scheme != "serial" && scheme != "pairwise" && scheme != "none") {
    throw ValueError("splitk '" + text + "': scheme '" + scheme +
                     "' is not contiguous, serial or pairwise");
  }
  return SplitKRequest::explicit_split(S, S == 1 ? "none" : scheme);
}

std::string splitk_request_text(const SplitKRequest& r) {
  if (r.is_auto)
    return "auto";
  if (r.split.S == 1)
    return "1";
  return std::to_string(r.split.S) + "," + r.split.scheme;
}

namespace {

bool env_strict() {
  const char* v = std::getenv("MMAEMU_SPLITK_STRICT");
  return v && std::string(v) == "1";
}

void emit(SplitDecision& d, WarningClass cls, const std::string& key, const std::string& msg,
          bool dry) {
  d.warnings.push_back(Warning{cls, key, msg});
  if (!dry)
    warn_once(cls, key, msg);
}

std::string schemes_text(const Profile& p) {
  std::string s;
  for (const auto& x : p.split_schemes)
    s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

SplitDecision explicit_decision(const SplitKQuery& q, const Profile& p, const SplitK& sk,
                                bool dry) {
  if (sk.S < 1)
    throw ValueError("splitk: S = " + std::to_string(sk.S) + " must be >= 1");
  SplitDecision d;
  d.source = "explicit";
  d.S = sk.S;
  if (sk.S == 1) {
    d.scheme = "none";
    d.note = "unsplit";
    return d;
  }
  if (p.split_schemes.empty()) {
    throw UnsupportedFeatureError("splitk = (" + std::to_string(sk.S) + ", '" + sk.scheme +
                                  "'): preset '" + p.preset + "' of profile '" + p.name +
                                  "' has no characterised GEMM level (no split-K schemes)");
  }
  if (std::find(p.split_schemes.begin(), p.split_schemes.end(), sk.scheme) ==
      p.split_schemes.end()) {
    throw ValueError("splitk = (" + std::to_string(sk.S) + ", '" + sk.scheme + "'): profile '" +
                     p.name + "' (preset " + p.preset + ") uses the scheme(s) " + schemes_text(p) +
                     "; '" + sk.scheme + "' belongs to another preset");
  }
  if (static_cast<std::int64_t>(sk.S) > std::max<std::int64_t>(q.K, 1)) {
    throw ValueError("splitk: S = " + std::to_string(sk.S) + " exceeds K = " + std::to_string(q.K));
  }
  d.scheme = sk.scheme;
  d.verified = false;
  d.note = "explicit split; no GEMM recording of this platform confirms the split plan";
  emit(d, WarningClass::unverified_split, "split:" + p.name,
       "split-K (" + std::to_string(sk.S) + ", '" + sk.scheme + "') on profile '" + p.name +
           "' was not replayed on hardware: the split layout and reduction are unverified "
           "modelling decisions (docs/semantics.md)",
       dry);
  return d;
}

std::mutex& live_query_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<const SplitKLiveQuery>& live_query_slot() {
  static std::shared_ptr<const SplitKLiveQuery> fn;
  return fn;
}

std::shared_ptr<const SplitKLiveQuery> live_query() {
  std::lock_guard<std::mutex> lock(live_query_mutex());
  return live_query_slot();
}

} // namespace

void set_splitk_live_query(SplitKLiveQuery fn) {
  auto next = fn ? std::make_shared<const SplitKLiveQuery>(std::move(fn)) : nullptr;
  std::lock_guard<std::mutex> lock(live_query_mutex());
  live_query_slot() = std::move(next);
}

SplitDecision resolve_splitk(const SplitKQuery& q, const Profile& p, const SplitKRequest& splitk,
                             std::optional<bool> strict, bool dry) {
  if (!splitk.is_auto)
    return explicit_decision(q, p, splitk.split, dry);
  const bool is_strict = strict ? *strict : env_strict();
  std::vector<std::string> tried;

  if (p.workspace_bytes == 0) {
    SplitDecision d;
    d.source = "workspace0";
    d.note = "workspace 0: cuBLASLt has no workspace for split-K partials, so S = 1";
    return d;
  }
  if (q.layout_std) {
    for (const auto& e : p.splitk_table.entries) {
      if (e.M == q.M && e.N == q.N && e.K == q.K && e.a == q.a_dtype && e.b == q.b_dtype &&
          e.out == q.out_dtype && e.fast == q.use_fast_accum) {
        SplitDecision d;
        d.source = "table";
        d.S = e.S;
        d.scheme = e.scheme;
        d.verified = e.verified;
        d.table_id = p.splitk_table.id;
        d.note = e.evidence;
        if (e.S > 1 && !e.verified) {
          emit(d, WarningClass::unverified_split, "split:" + p.name,
               "split-K (" + std::to_string(e.S) + ", '" + e.scheme + "') from table '" +
                   p.splitk_table.id + "' was not replayed on hardware",
               dry);
        }
        return d;
      }
    }
    tried.push_back("table '" + p.splitk_table.id + "' has no entry" +
                    (p.splitk_table.entries.empty() ? " (it is empty: nothing recorded)" : ""));
  } else {
    tried.push_back("table skipped (non-standard layout)");
  }
  const auto lq = live_query();
  if (lq && q.layout_std) {
    std::string why;
    if (std::optional<SplitDecision> d = (*lq)(q, p, why)) {
      d->source = "live-query";
      if (d->S > 1 && !d->verified) {
        emit(*d, WarningClass::unverified_split, "split:" + p.name,
             "split-K (" + std::to_string(d->S) + ", '" + d->scheme +
                 "') from a live query of cuBLASLt on profile '" + p.name +
                 "' was not replayed on hardware",
             dry);
      }
      return *d;
    }
    tried.push_back("live-query: " + why);
  } else if (lq) {
    tried.push_back("live-query skipped (non-standard layout: cuBLASLt would see a copy)");
  } else {
    tried.push_back("live-query unavailable (no CUDA device with the profile's GPU " + p.gpu_name +
                    ")");
  }
  if (p.envelope && !is_strict) {
    const auto& env = *p.envelope;
    if (q.M * q.N >= env.min_mn && q.K <= env.max_k) {
      SplitDecision d;
      d.source = "envelope";
      d.note = "S = 1 inferred by the envelope M*N >= " + std::to_string(env.min_mn) +
               ", K <= " + std::to_string(env.max_k) + " (" + env.evidence + ")";
      if (!env.validated) {
        emit(d, WarningClass::unvalidated_envelope, "envelope:" + p.name,
             "S = 1 on profile '" + p.name +
                 "' inferred by an envelope that failed its "
                 "held-out test",
             dry);
      }
      return d;
    }
    tried.push_back("outside the envelope");
  } else if (p.envelope) {
    tried.push_back("envelope disabled (strict)");
  } else {
    tried.push_back("no envelope");
  }
  std::string why;
  for (const auto& t : tried)
    why += (why.empty() ? "" : "; ") + t;
  // What to pass comes first: the reasons are long, and the fix is the same every time.
  throw SplitKUnknownError("pass splitk=1 (or S with a scheme of the profile: " + schemes_text(p) +
                           "): splitk='auto' cannot decide for M=" + std::to_string(q.M) +
                           ", N=" + std::to_string(q.N) + ", K=" + std::to_string(q.K) +
                           " on profile '" + p.name + "': " + why);
}

} // namespace mmaemu
