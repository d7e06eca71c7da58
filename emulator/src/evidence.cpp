// SPDX-License-Identifier: BSD-2-Clause
// The evidence registry (emulator/data/evidence.json): its parser, its lookups and the names of
// its levels, statuses and modes. The T4 extract is evidence_t4.cpp; the statuses computed
// from both, evidence_status.cpp.
#include "mmaemu/emulator/evidence.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "embedded_data.hpp"
#include "evidence_internal.hpp"
#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::evidence {

namespace {

using detail::kMeasurement;
using detail::kRecording;
using nlohmann::json;

constexpr const char* kRegistryFormat = "mmaemu-evidence/1";

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

const char* registry_json_text() {
  return data::evidence_json();
}

const Registry& registry() {
  static const Registry r = parse_registry(data::evidence_json());
  return r;
}

} // namespace mmaemu::evidence
