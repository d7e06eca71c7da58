// SPDX-License-Identifier: BSD-2-Clause
#include "evidence_doc.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "mmaemu/emulator/plan_decisions.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
namespace ev = evidence;

namespace {

// A table cell: one line, no column separator.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string code(const std::string& s) {
  return "`" + s + "`";
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

// What T4 says of a decision's mutants, in a few words: how many T1 killed, which unit tests
// killed the others, and the mutants that were not killed or not run.
std::string mutants_cell(const ev::Decision& d, const ev::T4Runs& t4) {
  if (d.mutants.empty())
    return "none";
  std::size_t by_t1 = 0, by_tests = 0;
  std::vector<std::string> tests, others;
  for (const auto& m : d.mutants) {
    const auto it = t4.mutants.find(m);
    if (it == t4.mutants.end()) {
      others.push_back(code(m) + " not in the T4 log");
    } else if (it->second.outcome == "killed" && it->second.by == "T1") {
      ++by_t1;
    } else if (it->second.outcome == "killed") {
      ++by_tests;
      if (std::find(tests.begin(), tests.end(), it->second.by) == tests.end())
        tests.push_back(it->second.by);
    } else {
      others.push_back(code(m) + " " + it->second.outcome);
    }
  }
  const std::string n = std::to_string(d.mutants.size());
  if (by_t1 == d.mutants.size())
    return n + ", all killed by T1";
  std::string s = n + ": " + std::to_string(by_t1) + " killed by T1";
  if (by_tests)
    s += "; " + std::to_string(by_tests) + " by unit tests (" + join(tests) + ")";
  if (!others.empty())
    s += "; " + join(others, "; ");
  return s;
}

std::string evidence_cell(const ev::Decision& d, const ev::Registry& reg) {
  std::vector<std::string> v;
  for (const auto& e : d.evidence) {
    const ev::Source* s = reg.source(e.source);
    if (!s)
      continue;
    std::string x = s->short_name;
    if (!e.shows.empty())
      x += ": " + e.shows;
    v.push_back(x);
  }
  return v.empty() ? "none" : join(v, "; ");
}

std::string decision_cell(const ev::Decision& d) {
  std::string s = code(d.id) + " " + d.title;
  if (!d.note.empty())
    s += ": " + d.note;
  return s;
}

const std::vector<const Profile*>& shipped_profiles() {
  static const std::vector<const Profile*> v = [] {
    std::vector<const Profile*> p;
    for (const auto& n : list_profiles())
      p.push_back(&get_profile(n));
    return p;
  }();
  return v;
}

// The instruction-level judgement without a profile's architecture: every recording named.
ev::Verdict judge_unfiltered(const ev::Decision& d, const ev::Registry& reg, const ev::T4Runs& t4) {
  Profile none;
  none.preset = "hopper";
  return ev::judge(d, none, std::nullopt, reg, t4);
}

std::string t4_section(const ev::T4Runs& t4) {
  if (t4.log.empty()) {
    return "No committed T4 log was found: no decision is `confirmed by` a recording.\n";
  }
  return "Statuses computed by `mmaemu evidence write` from `emulator/data/evidence.json`, the "
         "profiles and the T4 log `" +
         t4.log + "` (finished " + t4.finished_utc + ", commit " + t4.commit.substr(0, 12) +
         "; its extract is `emulator/data/evidence_t4.json`). `mmaemu evidence check` (ctest " +
         "`evidence_semantics_check`) fails on any difference from this page.\n";
}

std::string sources_section(const ev::Registry& reg) {
  std::string s = "| id | kind | what | platform | covers | does not cover |\n"
                  "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& x : reg.sources) {
    const bool rec = x.kind == "hardware_recording";
    std::string what = rec ? code(x.file) + ": " + x.case_family
                           : x.reference + ". Measured: " + x.measured + " (" + x.size + ")";
    std::string platform = x.gpu + ", " + x.architecture;
    if (!x.cublaslt.empty())
      platform += ", cuBLASLt " + x.cublaslt;
    std::string covers = x.covered;
    if (!x.profiles.empty()) {
      std::vector<std::string> p;
      for (const auto& [name, why] : x.profiles)
        p.push_back(code(name) + " (" + why + ")");
      covers += (covers.empty() ? "" : "; profiles ") + join(p, "; ");
    }
    s += "| " + code(x.id) + " | " + (rec ? "hardware recording" : "published measurement") +
         " | " + cell(what) + " | " + cell(platform) + " | " + cell(covers.empty() ? "-" : covers) +
         " | " + cell(x.not_covered.empty() ? "-" : x.not_covered) + " |\n";
  }
  return s;
}

std::string level_section(const ev::Registry& reg, const ev::T4Runs& t4, ev::Level level) {
  const bool instr = level == ev::Level::instruction;
  std::string s = instr ? "| decision | choice | presets | mutants (T4) | evidence | status |\n"
                          "| --- | --- | --- | --- | --- | --- |\n"
                        : "| decision | choice | mutants (T4) | evidence | status |\n"
                          "| --- | --- | --- | --- | --- |\n";
  for (const auto& d : reg.decisions) {
    if (d.level != level)
      continue;
    const ev::Verdict v = judge_unfiltered(d, reg, t4);
    std::string formats;
    if (d.formats == "e5m2")
      formats = " (E5M2 operands)";
    else if (d.formats == "mixed")
      formats = " (mixed operands)";
    s += "| " + cell(decision_cell(d)) + " | " + cell(d.choice) + " | ";
    if (instr)
      s += cell(join(d.presets) + formats) + " | ";
    s += cell(mutants_cell(d, t4)) + " | " + cell(evidence_cell(d, reg)) + " | **" + cell(v.text) +
         "** |\n";
  }
  return s;
}

std::string gemm_section(const ev::Registry& reg, const ev::T4Runs& t4) {
  std::string s = "| decision | profiles | choice | use_fast_accum=False | use_fast_accum=True | "
                  "mutants (T4) |\n| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& d : reg.decisions) {
    if (d.level != ev::Level::gemm)
      continue;
    // Profiles with the same choice and verdicts share a row, in list_profiles() order.
    struct Row {
      std::string choice, slow, fast;
      std::vector<std::string> profiles;
    };
    std::vector<Row> rows;
    for (const Profile* p : shipped_profiles()) {
      Row r;
      r.choice = ev::choice_text(d, *p);
      for (ev::Mode m : {ev::Mode::slow, ev::Mode::fast}) {
        std::string& out = m == ev::Mode::slow ? r.slow : r.fast;
        out = ev::applies(d, *p, m) ? "**" + ev::judge(d, *p, m, reg, t4).text + "**" : "n/a";
      }
      auto same = std::find_if(rows.begin(), rows.end(), [&](const Row& x) {
        return x.choice == r.choice && x.slow == r.slow && x.fast == r.fast;
      });
      if (same == rows.end()) {
        r.profiles.push_back(p->name);
        rows.push_back(r);
      } else {
        same->profiles.push_back(p->name);
      }
    }
    bool first = true;
    for (const auto& r : rows) {
      std::vector<std::string> names;
      for (const auto& n : r.profiles)
        names.push_back(code(n));
      s += "| " + (first ? cell(decision_cell(d)) : std::string("\"")) + " | " + cell(join(names)) +
           " | " + cell(r.choice) + " | " + cell(r.slow) + " | " + cell(r.fast) + " | " +
           (first ? cell(mutants_cell(d, t4)) : std::string("\"")) + " |\n";
      first = false;
    }
  }
  return s;
}

std::string profiles_section(const ev::Registry& reg) {
  std::string s = "| profile | split grain | slow block | merge | scale fold | evidence | values "
                  "| why |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Profile* p : shipped_profiles()) {
    const Preset& preset = get_preset_quiet(p->preset);
    std::string block;
    if (!slow_accumulation_characterised(*p, preset))
      block = "none (slow refused)";
    else if (const auto b = slow_block_of(*p, preset))
      block = std::to_string(*b) + (p->gemm.slow_block_from_preset ? " (the preset's)" : "");
    else
      block = "flat";
    const ev::ProfileChoice* c = reg.choice_of(p->name);
    s += "| " + code(p->name) + " | " + std::to_string(p->gemm.split_grain) + " | " + block +
         " | " + partial_merge_name(p->gemm.merge) + " | " + scale_fold_name(p->gemm.scale_fold) +
         " | " + (p->gemm.evidence.empty() ? std::string("none") : code(p->gemm.evidence)) + " | " +
         (c ? c->values : std::string("?")) + " | " + cell(c ? c->why : "") + " |\n";
  }
  return s;
}

std::string implementation_section(const ev::Registry& reg, const ev::T4Runs& t4,
                                   const std::vector<CatalogueMutant>& mutants) {
  std::string s = "| mutant group | mutants | T4 | why it is no modelling decision |\n"
                  "| --- | --- | --- | --- |\n";
  for (const auto& [group, why] : reg.not_decisions) {
    std::size_t n = 0;
    std::map<std::string, std::size_t> outcomes;
    for (const auto& m : mutants) {
      if (m.group != group)
        continue;
      ++n;
      const auto it = t4.mutants.find(m.id);
      ++outcomes[it == t4.mutants.end() ? std::string("not in the T4 log")
                 : it->second.outcome == "killed" && it->second.by == "T1"
                     ? std::string("killed by T1")
                 : it->second.outcome == "killed" ? std::string("killed by a unit test")
                                                  : it->second.outcome];
    }
    std::vector<std::string> parts;
    for (const auto& [o, k] : outcomes)
      parts.push_back(std::to_string(k) + " " + o);
    s += "| " + code(group) + " | " + std::to_string(n) + " | " + cell(join(parts)) + " | " +
         cell(why) + " |\n";
  }
  return s;
}

} // namespace

std::map<std::string, std::string> evidence_sections(const ev::Registry& reg, const ev::T4Runs& t4,
                                                     const std::vector<CatalogueMutant>& mutants) {
  return {{"t4", t4_section(t4)},
          {"sources", sources_section(reg)},
          {"instruction", level_section(reg, t4, ev::Level::instruction)},
          {"api", level_section(reg, t4, ev::Level::api)},
          {"gemm", gemm_section(reg, t4)},
          {"profiles", profiles_section(reg)},
          {"implementation", implementation_section(reg, t4, mutants)}};
}

std::string apply_sections(const std::string& doc,
                           const std::map<std::string, std::string>& sections,
                           std::vector<std::string>& problems) {
  std::string out = doc;
  for (const auto& [name, text] : sections) {
    const std::string begin = "<!-- BEGIN evidence:" + name;
    const std::string end = "<!-- END evidence:" + name + " -->";
    const std::size_t b = out.find(begin);
    const std::size_t e = out.find(end);
    if (b == std::string::npos || e == std::string::npos || e < b) {
      problems.push_back("docs/semantics.md: the markers of section '" + name +
                         "' are missing or out of order ('" + begin + " ... -->' then '" + end +
                         "')");
      continue;
    }
    const std::size_t body = out.find("-->", b);
    if (body == std::string::npos || body > e) {
      problems.push_back("docs/semantics.md: the BEGIN marker of section '" + name +
                         "' is not closed");
      continue;
    }
    const std::size_t from = out.find('\n', body);
    if (from == std::string::npos || from >= e) {
      problems.push_back("docs/semantics.md: the BEGIN marker of section '" + name +
                         "' must end its line");
      continue;
    }
    out.replace(from + 1, e - (from + 1), text);
  }
  return out;
}

std::vector<std::string> registry_problems(const ev::Registry& reg,
                                           const std::vector<CatalogueMutant>& mutants,
                                           const fs::path& source_dir) {
  std::vector<std::string> p;
  // Every catalogue mutant is a decision's, or of a group that is no decision; and back.
  std::set<std::string> in_decisions;
  for (const auto& d : reg.decisions)
    in_decisions.insert(d.mutants.begin(), d.mutants.end());
  std::set<std::string> catalogue;
  for (const auto& m : mutants) {
    catalogue.insert(m.id);
    const bool decision = in_decisions.count(m.id) > 0;
    const bool excused = reg.not_decisions.count(m.group) > 0;
    if (!decision && !excused) {
      p.push_back("mutant " + m.id + " (group " + m.group +
                  ") is in no decision of emulator/data/evidence.json");
    }
    if (decision && excused) {
      p.push_back("mutant " + m.id + " belongs to a decision but its group " + m.group +
                  " is listed as no decision");
    }
  }
  for (const auto& id : in_decisions) {
    if (!catalogue.count(id))
      p.push_back("the registry names mutant " + id + ", which the catalogue does not have");
  }
  // Every decision of plan_decisions.hpp has its GEMM-level entry.
  for (const auto& d : model::list_decisions()) {
    const ev::Decision* e = reg.decision(d.id);
    if (!e || e->level != ev::Level::gemm)
      p.push_back(std::string("decision ") + d.id +
                  " of model::list_decisions() has no GEMM-level "
                  "entry in the registry");
  }
  // Every shipped profile says why it has its values; a measurement's profiles exist, match
  // its architecture and cuBLASLt major version, and are the profiles whose data cite it.
  for (const auto& name : list_profiles()) {
    if (!reg.choice_of(name))
      p.push_back("profile " + name + " is in no profile_choices entry of the registry");
    const Profile& prof = get_profile(name);
    if (!prof.gemm.evidence.empty()) {
      const ev::Source* s = reg.source(prof.gemm.evidence);
      if (!s || !s->profiles.count(name)) {
        p.push_back("profile " + name + " cites evidence " + prof.gemm.evidence +
                    ", which does not name it among the profiles it covers");
      }
    }
  }
  for (const auto& s : reg.sources) {
    if (s.kind == "hardware_recording" && !fs::is_regular_file(source_dir / s.file))
      p.push_back("recording " + s.id + ": " + s.file + " is not a file of the source tree");
    for (const auto& [name, why] : s.profiles) {
      const auto names = list_profiles();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        p.push_back("source " + s.id + " covers profile " + name + ", which is not shipped");
        continue;
      }
      const Profile& prof = get_profile(name);
      if (s.kind == "published_measurement") {
        std::string arch = "sm_";
        for (char c : prof.capability)
          if (c != '.')
            arch += c;
        const std::string major = s.cublaslt.substr(0, s.cublaslt.find('.'));
        if (arch != s.architecture)
          p.push_back("source " + s.id + " measured " + s.architecture + ", profile " + name +
                      " is " + arch);
        if (prof.cublaslt_version.rfind(major, 0) != 0 ||
            (prof.cublaslt_version.size() > major.size() &&
             std::isdigit(static_cast<unsigned char>(prof.cublaslt_version[major.size()])))) {
          p.push_back("source " + s.id + " measured cuBLASLt " + s.cublaslt + ", profile " + name +
                      " has cuBLASLt " + prof.cublaslt_version);
        }
        if (prof.gemm.evidence != s.id) {
          p.push_back("source " + s.id + " covers profile " + name +
                      ", whose gemm data do not cite it (gemm.evidence)");
        }
      }
    }
  }
  // A shipped profile is never left contradicted.
  for (const Profile* prof : shipped_profiles()) {
    for (const auto& d : reg.decisions) {
      for (ev::Mode m : {ev::Mode::slow, ev::Mode::fast}) {
        const auto mode = d.level == ev::Level::gemm ? std::optional<ev::Mode>(m) : std::nullopt;
        if (!ev::applies(d, *prof, mode))
          continue;
        const ev::Verdict v = ev::judge(d, *prof, mode, reg, ev::committed_t4());
        if (v.status == ev::Status::contradicted) {
          p.push_back("decision " + d.id + " on profile " + prof->name + " (" + ev::mode_name(m) +
                      ") is " + v.text + ": " + v.why);
        }
      }
    }
  }
  return p;
}

std::optional<ev::T4Runs> latest_t4(const fs::path& source_dir) {
  const fs::path root = source_dir / "docs" / "validation_logs";
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return std::nullopt;
  std::optional<ev::T4Runs> best;
  std::vector<fs::path> files;
  for (const auto& date : fs::directory_iterator(root, ec)) {
    if (!date.is_directory())
      continue;
    for (const auto& f : fs::directory_iterator(date.path(), ec)) {
      if (f.is_regular_file() && f.path().extension() == ".json")
        files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string text = support::read_input_file(f, support::kMaxTextBytes, "log");
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || j.value("tier", "") != "T4" || !j.contains("cases") ||
        !j["cases"].is_array() || j["cases"].empty()) {
      continue; // not a T4 log, or one that ran nothing (UNSUPPORTED)
    }
    const std::string rel = fs::relative(f, source_dir).generic_string();
    ev::T4Runs t = ev::t4_from_log(text, rel, support::sha256_hex(text));
    // The latest finished run; of two equal times the later file name.
    if (!best || t.finished_utc >= best->finished_utc)
      best = std::move(t);
  }
  return best;
}

} // namespace mmaemu::cli
