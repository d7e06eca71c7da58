// SPDX-License-Identifier: BSD-2-Clause
// The statuses of the decisions: for a profile (and an accumulation mode), what the committed
// recordings (through the T4 extract) and the published measurements say of its choice, the
// decisions a call relies on, and their counts per level.
#include "mmaemu/emulator/evidence.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evidence_internal.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::evidence {

namespace {

using detail::add_unique;
using detail::has;
using detail::join;
using detail::kMeasurement;
using detail::kRecording;
using nlohmann::json;

// "sm_90" for capability "9.0".
std::string architecture_of(const Profile& p) {
  std::string a = "sm_";
  for (char c : p.capability) {
    if (c != '.')
      a += c;
  }
  return a;
}

} // namespace

std::string choice_text(const Decision& d, const Profile& p) {
  const GemmModel& g = p.gemm;
  if (d.level != Level::gemm)
    return d.choice;
  const Preset& preset = get_preset_quiet(p.preset);
  if (d.id == "plan.split_layout") {
    if (p.split_schemes.empty())
      return "none: S > 1 is refused on this profile";
    const std::string gs = std::to_string(g.split_grain);
    return "S contiguous slices of ceil(ceil(K/" + gs + ")/S)*" + gs +
           " from k = 0, the last takes what remains; each slice from +0";
  }
  if (d.id == "plan.slow_chunks") {
    if (!slow_accumulation_characterised(p, preset))
      return "none: use_fast_accum=False is refused on this profile";
    const auto b = slow_block_of(p, preset);
    if (!b)
      return "flat: one chain over each slice";
    return std::to_string(*b) + "-long k blocks from each slice's start, each a chain from +0";
  }
  if (d.id == "plan.reduction") {
    if (p.split_schemes.empty())
      return "none: S > 1 is refused on this profile";
    std::string s;
    const bool pairwise = std::find(p.split_schemes.begin(), p.split_schemes.end(), "pairwise") !=
                          p.split_schemes.end();
    s = g.merge == PartialMerge::forward
            ? "fp32 partials added in fp32 in slice order, from partial 0"
            : "fp32 partials added in fp32 from the last slice back";
    if (pairwise)
      s = "serial: " + s + "; pairwise: an fp32 binary tree ((p0+p1)+(p2+p3))";
    return s;
  }
  if (d.id == "epilogue.scale") {
    return g.scale_fold == ScaleFold::fold_once
               ? "alpha = fp32(scale_a * scale_b), then D = fp32(alpha * acc), once"
               : "D = fp32(fp32(acc * scale_a) * scale_b)";
  }
  return d.choice;
}

std::string shipped_token(const Decision& d, const Profile& p) {
  const GemmModel& g = p.gemm;
  if (d.id == "plan.split_layout")
    return "grain " + std::to_string(g.split_grain);
  if (d.id == "plan.slow_chunks") {
    const Preset& preset = get_preset_quiet(p.preset);
    if (!slow_accumulation_characterised(p, preset))
      return "none";
    const auto b = slow_block_of(p, preset);
    return b ? "blocks of " + std::to_string(*b) : "flat";
  }
  if (d.id == "plan.reduction")
    return partial_merge_name(g.merge);
  if (d.id == "epilogue.scale")
    return scale_fold_name(g.scale_fold);
  return d.shipped;
}

bool applies(const Decision& d, const Profile& p, std::optional<Mode> mode) {
  if (d.level == Level::api)
    return true;
  if (d.level == Level::instruction) {
    return d.presets.empty() ||
           std::find(d.presets.begin(), d.presets.end(), p.preset) != d.presets.end();
  }
  if (mode && !has(d.modes, *mode))
    return false;
  const Preset& preset = get_preset_quiet(p.preset);
  const bool slow_only = d.modes.size() == 1 && d.modes[0] == Mode::slow;
  if ((mode == Mode::slow || slow_only) && !slow_accumulation_characterised(p, preset))
    return false;
  if (d.id == "plan.promotion" && !slow_block_of(p, preset))
    return false; // flat slow accumulation: no block totals to promote
  if (d.when == "split" && p.split_schemes.empty())
    return false;
  return true;
}

Verdict judge(const Decision& d, const Profile& p, std::optional<Mode> mode, const Registry& reg,
              const T4Runs& t4) {
  Verdict v;
  v.choice = choice_text(d, p);
  std::vector<std::string> why;
  // 1. The committed hardware recordings: every mutant of the decision killed by T1.
  if (d.mutants.empty()) {
    why.push_back("no mutant flips it, so no replay can confirm it");
  } else {
    std::vector<std::string> not_t1;
    for (const auto& m : d.mutants) {
      const auto it = t4.mutants.find(m);
      if (it == t4.mutants.end()) {
        not_t1.push_back(m + " is not in the T4 log");
      } else if (it->second.outcome != "killed" || it->second.by != "T1") {
        not_t1.push_back(m + (it->second.outcome == "killed"
                                  ? " is killed by " + it->second.by + ", not by T1"
                                  : " " + it->second.outcome + " in T4"));
      }
    }
    if (not_t1.empty()) {
      std::vector<std::string> named, ids;
      const std::string arch = architecture_of(p);
      for (int pass = 0; pass < 2 && named.empty(); ++pass) {
        for (const auto& e : d.evidence) {
          const Source* s = reg.source(e.source);
          if (!s || s->kind != kRecording)
            continue;
          if (!s->profiles.empty() && !s->profiles.count(p.name))
            continue; // a recording of another platform
          if (pass == 0 && d.level == Level::instruction && s->architecture != arch)
            continue; // first the recordings of this profile's architecture
          add_unique(named, s->short_name);
          add_unique(ids, s->id);
        }
      }
      if (!named.empty() || d.level == Level::instruction) {
        v.status = Status::confirmed;
        v.text = "confirmed by " +
                 (named.empty() ? std::string("the committed recordings (T1)") : join(named));
        v.sources = ids;
        v.why = "all " + std::to_string(d.mutants.size()) + " mutant" +
                (d.mutants.size() == 1 ? "" : "s") + " killed by T1 in " +
                (t4.log.empty() ? std::string("the T4 log") : t4.log);
        return v;
      }
      why.push_back("its mutants are killed by T1, but no recording of this profile is named");
    } else {
      why.push_back(join(not_t1, "; "));
    }
  }
  // 2. Published measurements of this profile's platform and mode.
  const std::string token = shipped_token(d, p);
  std::vector<std::string> agree, disagree, agree_ids, disagree_ids;
  for (const auto& e : d.evidence) {
    const Source* s = reg.source(e.source);
    if (!s || s->kind != kMeasurement || e.states.empty())
      continue;
    if (!s->profiles.count(p.name)) {
      why.push_back(s->short_name + " did not measure this profile's platform");
      continue;
    }
    if (d.level == Level::gemm && mode && !has(s->modes, *mode)) {
      why.push_back(s->short_name + " did not measure " + mode_name(*mode));
      continue;
    }
    if (e.states == token) {
      add_unique(agree, s->short_name);
      add_unique(agree_ids, s->id);
    } else {
      add_unique(disagree, s->short_name);
      add_unique(disagree_ids, s->id);
      why.push_back(s->short_name + " states '" + e.states + "', the profile has '" + token + "'");
    }
  }
  if (!disagree.empty()) {
    v.status = Status::contradicted;
    v.text = "contradicted by " + join(disagree);
    v.sources = disagree_ids;
  } else if (!agree.empty()) {
    v.status = Status::consistent;
    v.text = "consistent with " + join(agree);
    v.sources = agree_ids;
  } else {
    v.status = Status::unverified;
    v.text = "unverified";
  }
  v.why = join(why, "; ");
  return v;
}

std::vector<DecisionUse> decisions_for_call(const Profile& p, const CallShape& call,
                                            const Registry& reg, const T4Runs& t4) {
  std::vector<DecisionUse> out;
  const Mode mode = call.fast ? Mode::fast : Mode::slow;
  const bool e5m2 = call.a == Format::e5m2 || call.b == Format::e5m2;
  for (const auto& d : reg.decisions) {
    if (d.level == Level::instruction) {
      if (!applies(d, p, std::nullopt))
        continue;
      if ((d.formats == "e5m2" && !e5m2) || (d.formats == "mixed" && call.a == call.b))
        continue;
      out.push_back({&d, judge(d, p, std::nullopt, reg, t4)});
    } else if (d.level == Level::api) {
      out.push_back({&d, judge(d, p, std::nullopt, reg, t4)});
    } else {
      if (!applies(d, p, mode))
        continue;
      if (d.when == "split" && !(call.S && *call.S > 1))
        continue;
      if (d.when == "scale_result" && !call.scale_result)
        continue;
      out.push_back({&d, judge(d, p, mode, reg, t4)});
    }
  }
  return out;
}

Counts count(const std::vector<DecisionUse>& uses, Level level, const Registry& reg) {
  Counts c;
  for (const auto& u : uses) {
    if (u.decision->level != level)
      continue;
    auto names = [&](std::vector<std::string>& into) {
      for (const auto& id : u.verdict.sources) {
        if (const Source* s = reg.source(id))
          add_unique(into, s->short_name);
      }
    };
    switch (u.verdict.status) {
    case Status::confirmed:
      ++c.confirmed;
      names(c.confirmed_by);
      if (u.verdict.sources.empty())
        add_unique(c.confirmed_by, "the committed recordings (T1)");
      break;
    case Status::consistent:
      ++c.consistent;
      names(c.consistent_with);
      break;
    case Status::contradicted:
      ++c.contradicted;
      names(c.contradicted_by);
      break;
    case Status::unverified:
      ++c.unverified;
      break;
    }
  }
  return c;
}

std::string summary_line(Level level, const Counts& c) {
  std::vector<std::string> parts;
  if (c.confirmed)
    parts.push_back(std::to_string(c.confirmed) + " confirmed by " + join(c.confirmed_by));
  if (c.consistent)
    parts.push_back(std::to_string(c.consistent) + " consistent with " + join(c.consistent_with));
  if (c.contradicted) {
    parts.push_back(std::to_string(c.contradicted) + " contradicted by " + join(c.contradicted_by));
  }
  if (c.unverified)
    parts.push_back(std::to_string(c.unverified) + " unverified");
  return std::string(level_name(level)) +
         " level: " + (parts.empty() ? std::string("no decision") : join(parts));
}

std::vector<DecisionUse> profile_decisions(const Profile& p, Mode mode, const Registry& reg,
                                           const T4Runs& t4) {
  std::vector<DecisionUse> out;
  for (const auto& d : reg.decisions) {
    const std::optional<Mode> m = d.level == Level::gemm ? std::optional<Mode>(mode) : std::nullopt;
    if (applies(d, p, m))
      out.push_back({&d, judge(d, p, m, reg, t4)});
  }
  return out;
}

std::string counts_json_text() {
  json profiles = json::object();
  for (const auto& name : list_profiles()) {
    const Profile& p = get_profile(name);
    json modes = json::object();
    for (Mode m : {Mode::slow, Mode::fast}) {
      const auto uses = profile_decisions(p, m);
      json levels = json::object();
      for (Level l : {Level::instruction, Level::gemm, Level::api}) {
        const Counts c = count(uses, l);
        levels[level_name(l)] = {{"confirmed", c.confirmed},
                                 {"consistent", c.consistent},
                                 {"contradicted", c.contradicted},
                                 {"unverified", c.unverified},
                                 {"summary", summary_line(l, c)}};
      }
      modes[mode_name(m)] = levels;
    }
    profiles[name] = modes;
  }
  return json{{"t4_log", committed_t4().log}, {"profiles", profiles}}.dump();
}

std::vector<std::string> counts_lines() {
  std::vector<std::string> v;
  for (const auto& name : list_profiles()) {
    const Profile& p = get_profile(name);
    for (Mode m : {Mode::slow, Mode::fast}) {
      const auto uses = profile_decisions(p, m);
      std::vector<std::string> parts;
      for (Level l : {Level::instruction, Level::gemm, Level::api})
        parts.push_back(summary_line(l, count(uses, l)));
      v.push_back(name + ", " + mode_name(m) + ": " + join(parts, "; "));
    }
  }
  return v;
}

} // namespace mmaemu::evidence
