// SPDX-License-Identifier: BSD-2-Clause
// mmaemu evidence show [--profile NAME] [--json PATH]
// mmaemu evidence write [--source-dir DIR]
// mmaemu evidence check [--source-dir DIR]
//
// `show` prints every decision's status on a profile (both accumulation modes). `write`
// extracts the latest committed T4 log into emulator/data/evidence_t4.json and regenerates the
// evidence tables of docs/semantics.md; `check` exits 1 when either differs from what `write`
// would write, or when the registry disagrees with the catalogue, plan_decisions.hpp, the
// profiles or the tree (one line per problem), and 2 when the build's embedded data are stale
// or a file cannot be read.

#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "evidence_doc.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/mutants/catalogue.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
namespace ev = evidence;
using nlohmann::json;

namespace {

struct EvidenceArgs {
  std::string source_dir;
  std::string profile;
  JsonOption json;
};

fs::path source_dir_of(const std::string& given) {
  if (!given.empty()) {
    if (!fs::is_regular_file(fs::path(given) / "emulator" / "data" / "evidence.json")) {
      throw support::FileError("--source-dir: " + support::printable(given) +
                               " is not an mmaemu source tree (no emulator/data/evidence.json)");
    }
    return given;
  }
  const auto layout = harness::discover_layout({});
  if (!layout.source_dir) {
    throw support::FileError("no source tree found (run the mmaemu of a build tree, or give "
                             "--source-dir)");
  }
  return *layout.source_dir;
}

// What `write` writes, from the source tree's files: the T4 extract and docs/semantics.md.
struct Generated {
  std::string t4_text;
  std::string semantics;
  std::vector<std::string> problems; // consistency problems (check: exit 1)
};

Generated generate(const fs::path& src) {
  // The build's registry and profiles must be the tree's: the tables are computed from them.
  const fs::path data = src / "emulator" / "data";
  const std::string reg_text =
      support::read_input_file(data / "evidence.json", support::kMaxTextBytes, "registry");
  if (reg_text != ev::registry_json_text()) {
    throw support::FileError((data / "evidence.json").string() +
                             ": differs from the registry this mmaemu was built with (rebuild)");
  }
  const mutants::Catalogue cat = mutants::load_catalogue(src / "mutants" / "catalogue.json");
  std::vector<CatalogueMutant> muts;
  for (const auto& m : cat.mutants)
    muts.push_back({m.id, m.group});
  Generated g;
  const ev::T4Runs t4 = latest_t4(src).value_or(ev::T4Runs{});
  g.t4_text = ev::t4_json(t4);
  const ev::Registry& reg = ev::registry();
  const std::string doc =
      support::read_input_file(src / "docs" / "semantics.md", support::kMaxTextBytes, "document");
  g.semantics = apply_sections(doc, evidence_sections(reg, t4, muts), g.problems);
  for (auto& p : registry_problems(reg, muts, src))
    g.problems.push_back(std::move(p));
  return g;
}

int run_write(const EvidenceArgs& a) {
  try {
    const fs::path src = source_dir_of(a.source_dir);
    a.json.check({src / "emulator" / "data" / "evidence_t4.json", src / "docs" / "semantics.md",
                  src / "emulator" / "data" / "evidence.json"});
    const Generated g = generate(src);
    for (const auto& p : g.problems)
      error_line(p);
    if (!g.problems.empty()) {
      a.json.write({{"written", json::array()}, {"problems", g.problems}});
      return kFailed;
    }
    support::write_file_atomic(src / "emulator" / "data" / "evidence_t4.json", g.t4_text);
    support::write_file_atomic(src / "docs" / "semantics.md", g.semantics);
    std::printf("wrote emulator/data/evidence_t4.json and docs/semantics.md (rebuild mmaemu for "
                "explain to use the new T4 extract)\n");
    a.json.write({{"written", {"emulator/data/evidence_t4.json", "docs/semantics.md"}},
                  {"problems", json::array()}});
    return kOk;
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
}

int run_check(const EvidenceArgs& a) {
  try {
    const fs::path src = source_dir_of(a.source_dir);
    a.json.check({src / "emulator" / "data" / "evidence_t4.json", src / "docs" / "semantics.md",
                  src / "emulator" / "data" / "evidence.json"});
    const Generated g = generate(src);
    std::vector<std::string> problems = g.problems;
    const fs::path t4_file = src / "emulator" / "data" / "evidence_t4.json";
    const std::string t4_now =
        fs::exists(t4_file) ? support::read_input_file(t4_file, support::kMaxTextBytes, "extract")
                            : std::string();
    if (t4_now != g.t4_text) {
      problems.push_back("emulator/data/evidence_t4.json is not the extract of the latest "
                         "committed T4 log: run `mmaemu evidence write`");
    } else if (t4_now != ev::t4_json_text()) {
      error_line(t4_file.string() + ": differs from the extract this mmaemu was built with "
                                    "(rebuild)");
      return kUsage;
    }
    const std::string doc =
        support::read_input_file(src / "docs" / "semantics.md", support::kMaxTextBytes, "document");
    if (doc != g.semantics) {
      problems.push_back("docs/semantics.md: its evidence tables differ from the registry's "
                         "(run `mmaemu evidence write`; never edit them by hand)");
    }
    for (const auto& p : problems)
      error_line(p);
    a.json.write({{"current", problems.empty()}, {"problems", problems}});
    if (!problems.empty())
      return kFailed;
    std::printf("evidence: docs/semantics.md and emulator/data/evidence_t4.json are current\n");
    return kOk;
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
}

int run_show(const EvidenceArgs& a) {
  const Profile* p = nullptr;
  try {
    a.json.check();
    p = &get_profile_or_default(a.profile);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  const ev::T4Runs& t4 = ev::committed_t4();
  std::printf("profile     %s\n", p->name.c_str());
  std::printf("t4 log      %s\n", t4.log.empty() ? "(none)" : t4.log.c_str());
  json out;
  out["profile"] = p->name;
  out["t4_log"] = t4.log;
  json modes = json::object();
  for (ev::Mode m : {ev::Mode::slow, ev::Mode::fast}) {
    const auto uses = ev::profile_decisions(*p, m);
    std::printf("\n%s\n", ev::mode_name(m));
    json jm;
    json summary = json::array();
    for (ev::Level l : {ev::Level::instruction, ev::Level::gemm, ev::Level::api}) {
      const std::string line = ev::summary_line(l, ev::count(uses, l));
      std::printf("evidence    %s\n", line.c_str());
      summary.push_back(line);
    }
    json decisions = json::array();
    for (const auto& u : uses) {
      std::printf("decision    %s %s: %s\n", ev::level_name(u.decision->level),
                  u.decision->id.c_str(), u.verdict.text.c_str());
      decisions.push_back({{"id", u.decision->id},
                           {"level", ev::level_name(u.decision->level)},
                           {"choice", u.verdict.choice},
                           {"status", ev::status_name(u.verdict.status)},
                           {"text", u.verdict.text},
                           {"sources", u.verdict.sources},
                           {"why", u.verdict.why}});
    }
    jm["summary"] = summary;
    jm["decisions"] = decisions;
    modes[m == ev::Mode::slow ? "slow" : "fast"] = jm;
  }
  out["modes"] = modes;
  {
    try {
      a.json.write(out);
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  return kOk;
}

} // namespace

void add_evidence(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<EvidenceArgs>();
  CLI::App* cmd = app.add_subcommand("evidence", "The evidence behind every modelling decision");
  cmd->require_subcommand(1);
  CLI::App* show = cmd->add_subcommand("show", "Every decision's status on a profile");
  show->add_option("--profile", args->profile, "Profile (default: $MMAEMU_PROFILE or hopper)");
  args->json.add(*show, "the statuses");
  show->callback([args, &exit_code] { exit_code = run_show(*args); });
  CLI::App* write = cmd->add_subcommand(
      "write", "Regenerate emulator/data/evidence_t4.json and docs/semantics.md's tables");
  write->add_option("--source-dir", args->source_dir, "The source tree (default: this build's)");
  args->json.add(*write, "what was written, or the problems");
  write->callback([args, &exit_code] { exit_code = run_write(*args); });
  CLI::App* check = cmd->add_subcommand(
      "check", "Exit 1 if the T4 extract or docs/semantics.md's tables are not current");
  check->add_option("--source-dir", args->source_dir, "The source tree (default: this build's)");
  args->json.add(*check, "whether the extract and the tables are current, and the problems");
  check->callback([args, &exit_code] { exit_code = run_check(*args); });
}

} // namespace mmaemu::cli
