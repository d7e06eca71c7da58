// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "mutants" (T4 and T4g): the mutation campaign of libmmaemu_mutants over the
// catalogue, one case per mutant (PASS when its outcome is what the catalogue expects), the
// per-group table in details.

#include <cstdio>
#include <fstream>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/mutants/campaign.hpp"
#include "mmaemu/mutants/rewriter.hpp"
#include "mmaemu/mutants/workspace.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/text.hpp"
#include "tier_kinds.hpp"
#include "tier_work.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// MMAEMU_SHARED_DIR of the build tree this mmaemu belongs to, else <source>/../shared.
fs::path shared_dir(const RunOptions& opt) {
  if (opt.layout.build_dir) {
    std::ifstream in(*opt.layout.build_dir / "CMakeCache.txt");
    std::string line;
    const std::string key = "MMAEMU_SHARED_DIR:PATH=";
    while (std::getline(in, line)) {
      if (line.rfind(key, 0) == 0)
        return line.substr(key.size());
    }
  }
  return *opt.layout.source_dir / ".." / "shared";
}

Outcome case_outcome(const mutants::MutantResult& m) {
  if (m.as_expected)
    return Outcome::pass;
  if (m.outcome == mutants::MutantOutcome::build_error ||
      m.outcome == mutants::MutantOutcome::error)
    return Outcome::error;
  return Outcome::fail;
}

} // namespace

void run_mutants_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const fs::path source = *opt.layout.source_dir;
  fs::path cat_path = opt.mutants.catalogue;
  mutants::Catalogue cat;
  try {
    // The tier's run.catalogue stays inside the source tree (tier_paths.hpp); --catalogue is
    // the user's own choice.
    if (cat_path.empty())
      cat_path = resolve_tier_path(t.run.value("catalogue", std::string("mutants/catalogue.json")),
                                   source, source);
    cat = mutants::load_catalogue(cat_path);
  } catch (const std::invalid_argument& e) {
    r.verdict = Outcome::error;
    r.reason = t.file.string() + ": run.catalogue " + e.what();
    return;
  } catch (const mutants::CatalogueError& e) {
    r.verdict = Outcome::error;
    r.reason = e.what();
    return;
  }
  std::error_code ec;
  r.inputs.push_back({fs::relative(cat_path, source, ec).generic_string(),
                      support::sha256_file(cat_path), fs::file_size(cat_path, ec)});
  // Every edit must find its original exactly once before anything is built.
  const auto problems = mutants::check_catalogue_applies(source, cat);
  if (!problems.empty()) {
    r.verdict = Outcome::error;
    r.reason =
        "the catalogue does not fit the source tree: " + problems.front() +
        (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : "");
    r.details = {{"catalogue_defects", problems}};
    return;
  }

  // What the copies hold: the tracked files (a git checkout), or every file (no checkout). A git
  // checkout that git cannot list is an ERROR, not a copy of every file.
  mutants::RepositoryListing listing;
  try {
    listing = mutants::list_repository_files(source);
  } catch (const mutants::WorkspaceError& e) {
    r.verdict = Outcome::error;
    r.reason = e.what();
    return;
  }
  const json copy = {
      {"method", listing.method},
      {"files", listing.files.size()},
      {"what", listing.method == "git"
                   ? "the files git tracks, as in the working tree (the log's git.dirty says "
                     "whether they differ from the commit); untracked files left out"
                   : "no git checkout: every file outside build*/ and .git/"},
      {"untracked_left_out", listing.untracked_count},
      {"untracked_examples", listing.untracked}};
  if (listing.untracked_count > 0) {
    std::fprintf(opt.text, "%s: %zu untracked file(s) left out of the copies (e.g. %s)\n",
                 t.name.c_str(), listing.untracked_count,
                 support::printable(listing.untracked.front(), 200).c_str());
  }

  mutants::CampaignOptions co;
  co.tier =
      !opt.mutants.tier.empty() ? opt.mutants.tier : t.run.value("mutant_tier", std::string("cpu"));
  co.mode = opt.mutants.mode;
  co.jobs = opt.jobs ? opt.jobs : 1;
  co.only = opt.mutants.only;
  co.shard_index = opt.shard.index;
  co.shard_count = opt.shard.count;
  co.source_dir = source;
  co.shared_dir = fs::absolute(shared_dir(opt));
  co.mutant_timeout_s = t.run.value("mutant_timeout_s", opt.mutants.mutant_timeout_s);
  co.keep_workspace = opt.mutants.keep_workspace;
  if (opt.layout.build_dir)
    co.schema_dir = fs::absolute(*opt.layout.build_dir) / "mutants-schema";
  co.plan.exclude_name_regex = t.run.value("exclude_tests", std::string());
  if (const auto ft = t.run.find("first_tests"); ft != t.run.end() && ft->is_object()) {
    for (const auto& [group, regex] : ft->items())
      co.plan.first_tests[group] = regex.get<std::string>();
  }
  if (co.tier == "gpu") {
    // Kernel mutants must reach the GPU through NVRTC: plain rewrites, judged by T3.
    co.mode = "rewrite";
    co.plan.with_t1 = false;
    co.plan.with_t3 = true;
    co.plan.label_regex = "nvrtc";
  }
  co.note = [&](const std::string& s) {
    std::fprintf(opt.text, "%s: %s\n", t.name.c_str(), s.c_str());
    std::fflush(opt.text);
  };
  bool begun = false;
  co.progress = [&](std::size_t done, std::size_t total, const std::string& label) {
    if (!opt.progress)
      return;
    if (!begun) {
      opt.progress->begin(total, "mutants");
      begun = true;
    }
    opt.progress->step(done, label);
  };
  std::vector<const mutants::Mutant*> selected;
  try {
    selected = mutants::select_mutants(cat, co.tier, co.only, co.shard_index, co.shard_count);
  } catch (const std::invalid_argument& e) {
    throw ValueError(e.what());
  }
  std::fprintf(opt.text, "%s: %zu of %zu mutants (tier %s, mode %s, %u jobs)\n", t.name.c_str(),
               selected.size(), cat.mutants.size(), co.tier.c_str(), co.mode.c_str(), co.jobs);
  const mutants::CampaignResult res = mutants::run_campaign(cat, co);
  if (opt.progress && begun)
    opt.progress->end();

  const json groups = mutants::group_table(res);
  const json summary = mutants::score_summary(res);
  json list = json::array();
  double mutant_seconds = 0;
  for (const auto& m : res.results) {
    TierCase c;
    c.id = m.mutant->id;
    c.outcome = case_outcome(m);
    c.seconds = m.seconds;
    c.message = std::string(mutants::outcome_name(m.outcome)) + ": " + m.verdict;
    if (!m.as_expected && !m.detail.empty())
      c.message += " | " + tail_lines(m.detail, 4);
    r.add(c);
    list.push_back(mutants::result_json(m));
    mutant_seconds += m.seconds;
  }
  r.details = {
      {"mutant_tier", co.tier},
      {"excluded_tests", co.plan.exclude_name_regex},
      {"excluded_why", t.run.value("exclude_why", std::string())},
      {"first_tests", co.plan.first_tests},
      {"first_tests_why", t.run.value("first_tests_why", std::string())},
      {"mode", res.mode},
      {"jobs", co.jobs},
      {"only", co.only},
      {"catalogue_mutants", res.catalogue_size},
      {"selected", res.results.size()},
      {"setup_seconds", res.setup_seconds},
      {"campaign_seconds", res.seconds},
      {"mean_mutant_seconds", res.results.empty() ? 0.0 : mutant_seconds / res.results.size()},
      {"copy", copy},
      {"groups", groups},
      {"score", summary},
      {"mutants", list}};
  for (const auto& line : mutants::score_lines(groups, summary))
    std::fprintf(opt.text, "%s: %s\n", t.name.c_str(), line.c_str());
  if (!res.error.empty()) {
    r.verdict = Outcome::error;
    r.reason = res.error;
    return;
  }
  // The mutation score of each group against its layer's target (100% for the control and the
  // model, 95% for the harness): a group under it fails the run.
  for (const auto& g : groups) {
    const json& sc = g["score"];
    if (sc["non_equivalent"].get<std::size_t>() == 0)
      continue;
    r.check({"T4/score/" + g["group"].get<std::string>(), sc["meets_target"].get<bool>(),
             std::to_string(sc["killed"].get<std::size_t>()) + " of " +
                 std::to_string(sc["non_equivalent"].get<std::size_t>()) +
                 " non-equivalent mutants killed, target " +
                 std::to_string(sc["target_percent"].get<unsigned>()) + "% (" +
                 g["layer"].get<std::string>() + " layer)"});
  }
  // A whole run must show that the injection is sound and that a sign flip is caught.
  if (co.only.empty() && !opt.shard.active() && co.tier == "cpu") {
    bool control = false, identity = false;
    for (const auto& m : res.results) {
      control = control || m.mutant->id == "control_sign_flip";
      identity = identity || m.mutant->expect == mutants::Expect::survives;
    }
    r.check({"T4/control_and_identity", control && identity,
             control && identity ? "control_sign_flip and an identity mutant ran"
                                 : "the catalogue's cpu tier lacks control_sign_flip or an "
                                   "identity_* mutant"});
  }
}

} // namespace mmaemu::harness::detail
