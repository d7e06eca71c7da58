// SPDX-License-Identifier: BSD-2-Clause
// The extract of the latest committed T4 log (emulator/data/evidence_t4.json): read from a log,
// written, and parsed back; a log of the ids before 2026-12-06 is read in today's ids.
#include "mmaemu/emulator/evidence.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "embedded_data.hpp"
#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::evidence {

namespace {

using nlohmann::json;

constexpr const char* kT4Format = "mmaemu-evidence-t4/1";

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

const char* t4_json_text() {
  return data::evidence_t4_json();
}

const T4Runs& committed_t4() {
  static const T4Runs t = parse_t4(data::evidence_t4_json());
  return t;
}

} // namespace mmaemu::evidence
