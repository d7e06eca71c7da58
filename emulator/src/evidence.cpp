// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/evidence.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "embedded_data.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::evidence {

namespace {

using nlohmann::json;

constexpr const char* kRegistryFormat = "mmaemu-evidence/1";
constexpr const char* kT4Format = "mmaemu-evidence-t4/1";
constexpr const char* kRecording = "hardware_recording";
constexpr const char* kMeasurement = "published_measurement";

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw ValueError("evidence registry: " + where + ": " + what);
}

std::string str(const json& j, const char* key, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required)
      bad(where, std::string("field '") + key + "' is missing");
    return "";
  }
  if (!j[key].is_string())
    bad(where, std::string("field '") + key + "' must be a string");
  return j[key].get<std::string>();
}

std::vector<std::string> strings(const json& j, const char* key, const std::string& where) {
  std::vector<std::string> v;
  if (!j.contains(key))
    return v;
  if (!j[key].is_array())
    bad(where, std::string("field '") + key + "' must be an array of strings");
  for (const auto& x : j[key]) {
    if (!x.is_string())
      bad(where, std::string("field '") + key + "' must be an array of strings");
    v.push_back(x.get<std::string>());
  }
  return v;
}

Mode mode_of(const std::string& s, const std::string& where) {
  if (s == "fast")
    return Mode::fast;
  if (s == "slow")
    return Mode::slow;
  bad(where, "mode '" + s + "' is not fast or slow");
}

std::vector<Mode> modes_of(const json& j, const std::string& where) {
  std::vector<Mode> v;
  for (const auto& s : strings(j, "modes", where))
    v.push_back(mode_of(s, where));
  return v;
}

Level level_of(const std::string& s, const std::string& where) {
  if (s == "instruction")
    return Level::instruction;
  if (s == "gemm")
    return Level::gemm;
  if (s == "api")
    return Level::api;
  bad(where, "level '" + s + "' is not instruction, gemm or api");
}

bool has(const std::vector<Mode>& v, Mode m) {
  return std::find(v.begin(), v.end(), m) != v.end();
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

void add_unique(std::vector<std::string>& v, const std::string& x) {
  if (std::find(v.begin(), v.end(), x) == v.end())
    v.push_back(x);
}

// "sm_90" for capability "9.0".
std::string architecture_of(const Profile& p) {
  std::string a = "sm_";
  for (char c : p.capability) {
    if (c != '.')
      a += c;
  }
  return a;
}

// A mutant's id as the catalogue spells it today. Until 2026-12-06 two groups' ids had a
// prefix other than the group's name (model.* for instruction_model, fast.* for
// fast_reference); a T4 log written before then is read in today's ids, so that an older log
// still speaks of the catalogue's mutants.
std::string current_mutant_id(const std::string& id) {
  static const std::pair<std::string_view, std::string_view> kRenamed[] = {
      {"model.", "instruction_model."}, {"fast.", "fast_reference."}};
  for (const auto& [before, now] : kRenamed) {
    if (id.rfind(before, 0) == 0)
      return std::string(now) + id.substr(before.size());
  }
  return id;
}

} // namespace

const char* level_name(Level l) {
  switch (l) {
  case Level::instruction:
    return "instruction";
  case Level::gemm:
    return "GEMM";
  case Level::api:
    return "API";
  }
  return "?";
}

const char* status_name(Status s) {
  switch (s) {
  case Status::confirmed:
    return "confirmed";
  case Status::consistent:
    return "consistent";
  case Status::contradicted:
    return "contradicted";
  case Status::unverified:
    return "unverified";
  }
  return "?";
}

const char* mode_name(Mode m) {
  return m == Mode::fast ? "use_fast_accum=True" : "use_fast_accum=False";
}

const Source* Registry::source(const std::string& id) const {
  for (const auto& s : sources) {
    if (s.id == id)
      return &s;
  }
  return nullptr;
}

const Decision* Registry::decision(const std::string& id) const {
  for (const auto& d : decisions) {
    if (d.id == id)
      return &d;
  }
  return nullptr;
}

const ProfileChoice* Registry::choice_of(const std::string& profile) const {
  for (const auto& c : profile_choices) {
    if (std::find(c.profiles.begin(), c.profiles.end(), profile) != c.profiles.end())
      return &c;
  }
  return nullptr;
}

Registry parse_registry(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw ValueError(std::string("evidence registry: not JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("format", "") != kRegistryFormat)
    bad("top level", std::string("format must be '") + kRegistryFormat + "'");
  Registry r;
  if (j.contains("not_decisions")) {
    for (const auto& [group, why] : j["not_decisions"].items()) {
      if (!why.is_string())
        bad("not_decisions", "the reason for group '" + group + "' must be a string");
      r.not_decisions[group] = why.get<std::string>();
    }
  }
  for (const auto& s : j.at("sources")) {
    Source x;
    x.id = str(s, "id", "a source", true);
    const std::string where = "source '" + x.id + "'";
    x.kind = str(s, "kind", where, true);
    if (x.kind != kRecording && x.kind != kMeasurement)
      bad(where, "kind '" + x.kind + "' is not " + kRecording + " or " + kMeasurement);
    x.short_name = str(s, "short", where, true);
    x.file = str(s, "file", where, x.kind == kRecording);
    x.case_family = str(s, "case_family", where, x.kind == kRecording);
    x.reference = str(s, "reference", where, x.kind == kMeasurement);
    x.gpu = str(s, "gpu", where, false);
    x.architecture = str(s, "architecture", where, false);
    x.cublaslt = str(s, "cublaslt", where, false);
    x.measured = str(s, "measured", where, x.kind == kMeasurement);
    x.size = str(s, "size", where, x.kind == kMeasurement);
    x.covered = str(s, "covered", where, false);
    x.not_covered = str(s, "not_covered", where, false);
    x.modes = modes_of(s, where);
    if (s.contains("profiles")) {
      for (const auto& [name, why] : s["profiles"].items()) {
        if (!why.is_string())
          bad(where, "profiles." + name + " must be a string");
        x.profiles[name] = why.get<std::string>();
      }
    }
    if (x.kind == kMeasurement && (x.modes.empty() || x.profiles.empty()))
      bad(where, "a published measurement names the modes and the profiles it covers");
    if (r.source(x.id))
      bad(where, "the id is used twice");
    r.sources.push_back(std::move(x));
  }
  for (const auto& c : j.value("profile_choices", json::array())) {
    ProfileChoice x;
    x.profiles = strings(c, "profiles", "profile_choices");
    x.values = str(c, "values", "profile_choices", true);
    x.why = str(c, "why", "profile_choices", true);
    r.profile_choices.push_back(std::move(x));
  }
  std::set<std::string> mutants_seen;
  for (const auto& d : j.at("decisions")) {
    Decision x;
    x.id = str(d, "id", "a decision", true);
    const std::string where = "decision '" + x.id + "'";
    x.level = level_of(str(d, "level", where, true), where);
    x.presets = strings(d, "presets", where);
    x.formats = d.contains("formats") ? str(d, "formats", where, true) : "any";
    if (x.formats != "any" && x.formats != "e5m2" && x.formats != "mixed")
      bad(where, "formats '" + x.formats + "' is not any, e5m2 or mixed");
    x.modes = modes_of(d, where);
    if (x.level == Level::gemm && x.modes.empty())
      bad(where, "a GEMM-level decision names its modes");
    x.when = d.contains("when") ? str(d, "when", where, true) : "always";
    if (x.when != "always" && x.when != "split" && x.when != "scale_result")
      bad(where, "when '" + x.when + "' is not always, split or scale_result");
    x.title = str(d, "title", where, true);
    x.choice = str(d, "choice", where, false);
    x.shipped = str(d, "shipped", where, false);
    x.mutants = strings(d, "mutants", where);
    for (const auto& m : x.mutants) {
      if (!mutants_seen.insert(m).second)
        bad(where, "mutant '" + m + "' belongs to two decisions");
    }
    for (const auto& e : d.value("evidence", json::array())) {
      EvidenceRef ref;
      ref.source = str(e, "source", where, true);
      ref.states = str(e, "states", where, false);
      ref.shows = str(e, "shows", where, false);
      if (!r.source(ref.source))
        bad(where, "evidence source '" + ref.source + "' is not a source of the registry");
      x.evidence.push_back(std::move(ref));
    }
    x.note = str(d, "note", where, false);
    if (r.decision(x.id))
      bad(where, "the id is used twice");
    r.decisions.push_back(std::move(x));
  }
  return r;
}

T4Runs parse_t4(const std::string& text) {
  T4Runs t;
  if (text.empty())
    return t; // no extract written yet: no T4 log
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw ValueError(std::string("evidence T4 extract: not JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("format", "") != kT4Format)
    throw ValueError(std::string("evidence T4 extract: format must be '") + kT4Format + "'");
  t.log = j.value("log", "");
  t.log_sha256 = j.value("log_sha256", "");
  t.finished_utc = j.value("finished_utc", "");
  t.commit = j.value("commit", "");
  t.catalogue_sha256 = j.value("catalogue_sha256", "");
  const json mutants = j.value("mutants", json::object());
  for (const auto& [id, run] : mutants.items())
    t.mutants[current_mutant_id(id)] = {run.value("outcome", ""), run.value("by", "")};
  return t;
}

T4Runs t4_from_log(const std::string& log_text, const std::string& log_path,
                   const std::string& log_sha256) {
  const std::string where = "T4 log " + log_path;
  json j;
  try {
    j = json::parse(log_text);
  } catch (const json::exception& e) {
    throw ValueError(where + ": not JSON: " + e.what());
  }
  if (!j.is_object() || j.value("tier", "") != "T4")
    throw ValueError(where + ": not a T4 log (field 'tier')");
  T4Runs t;
  t.log = log_path;
  t.log_sha256 = log_sha256;
  if (j.contains("durations") && j["durations"].is_object())
    t.finished_utc = j["durations"].value("finished_utc", "");
  if (j.contains("git") && j["git"].is_object())
    t.commit = j["git"].value("commit", "");
  for (const auto& in : j.value("inputs", json::array())) {
    if (in.is_object() && in.value("path", "") == "mutants/catalogue.json")
      t.catalogue_sha256 = in.value("sha256", "");
  }
  const json details = j.value("details", json());
  if (details.is_object() && details.contains("mutants") && details["mutants"].is_array()) {
    for (const auto& m : details["mutants"]) {
      if (!m.is_object() || !m.contains("id") || !m["id"].is_string())
        throw ValueError(where + ": details.mutants holds an entry without an id");
      std::string by = m.value("killed_by", "");
      while (!by.empty() && (by.back() == ',' || by.back() == ' '))
        by.pop_back(); // the campaign writes a test list's separator after a parameterised name
      t.mutants[current_mutant_id(m["id"].get<std::string>())] = {m.value("outcome", ""), by};
    }
    return t;
  }
  // Without details: each case message reads "<outcome>: <outcome> by <test>" or
  // "<outcome>: ...".
  for (const auto& c : j.value("cases", json::array())) {
    if (!c.is_object() || !c.contains("id") || !c["id"].is_string())
      throw ValueError(where + ": a case has no id");
    const std::string msg = c.value("message", "");
    MutantRun run;
    run.outcome = msg.substr(0, msg.find(':'));
    const std::string by = run.outcome + " by ";
    if (const auto at = msg.find(by); at != std::string::npos) {
      run.by = msg.substr(at + by.size());
      run.by = run.by.substr(0, run.by.find_first_of(", "));
    }
    t.mutants[current_mutant_id(c["id"].get<std::string>())] = run;
  }
  return t;
}

std::string t4_json(const T4Runs& t) {
  json j;
  j["SPDX-License-Identifier"] = "BSD-2-Clause";
  j["format"] = kT4Format;
  j["generated_by"] = "mmaemu evidence write, from the latest committed T4 log: do not edit "
                      "(mmaemu evidence check fails on any difference)";
  j["log"] = t.log;
  j["log_sha256"] = t.log_sha256;
  j["finished_utc"] = t.finished_utc;
  j["commit"] = t.commit;
  j["catalogue_sha256"] = t.catalogue_sha256;
  json m = json::object();
  for (const auto& [id, run] : t.mutants)
    m[id] = {{"outcome", run.outcome}, {"by", run.by}};
  j["mutants"] = m;
  return j.dump(2) + "\n";
}

const char* registry_json_text() {
  return data::evidence_json();
}

const char* t4_json_text() {
  return data::evidence_t4_json();
}

const Registry& registry() {
  static const Registry r = parse_registry(data::evidence_json());
  return r;
}

const T4Runs& committed_t4() {
  static const T4Runs t = parse_t4(data::evidence_t4_json());
  return t;
}

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
