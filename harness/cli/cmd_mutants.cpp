// SPDX-License-Identifier: BSD-2-Clause
// mmaemu mutants list [--json PATH] [--tier cpu|gpu] [--catalogue FILE] [--build-dir DIR]
// mmaemu mutants run --tier cpu|gpu [--jobs N] [--only REGEX] [--shard k/N] [--json PATH]
//                    [--mode schema|rewrite] [--timeout S] [--keep]
//                    [--log-dir DIR | --no-log | --publish] [--build-dir DIR] [--catalogue FILE]
//                    [--verbose]
// `run` is tier T4 (cpu) or T4g (gpu) with these options; its log is mutants.json or
// mutants_gpu.json.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/mutants/campaign.hpp"
#include "mmaemu/mutants/catalogue.hpp"
#include "mmaemu/mutants/rewriter.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "tier_args.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ListArgs {
  std::string catalogue, build_dir, tier;
  JsonOption json;
};

fs::path catalogue_path(const std::string& given, const std::string& build_dir) {
  if (!given.empty())
    return given;
  harness::LayoutOverrides o;
  o.build_dir = build_dir;
  const auto layout = harness::discover_layout(o);
  if (!layout.source_dir) {
    throw support::FileError("no source tree found (run the mmaemu of a build tree, or give "
                             "--build-dir or --catalogue)");
  }
  return *layout.source_dir / "mutants" / "catalogue.json";
}

int run_list(const ListArgs& a) {
  mutants::Catalogue c;
  fs::path path;
  try {
    path = catalogue_path(a.catalogue, a.build_dir);
    a.json.check({path}); // never the catalogue it lists
    c = mutants::load_catalogue(path);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  json out = json::array();
  std::size_t shown_count = 0;
  std::printf("%-44s %-18s %-4s %-10s %s\n", "id", "group", "tier", "expect", "description");
  for (const auto& m : c.mutants) {
    if (!a.tier.empty() && m.tier != a.tier)
      continue;
    ++shown_count;
    {
      json edits = json::array();
      for (const auto& e : m.edits) {
        edits.push_back({{"file", e.file},
                         {"original", e.original},
                         {"replacement", e.replacement},
                         {"form", mutants::form_name(e.form)}});
      }
      out.push_back({{"id", m.id},
                     {"group", m.group},
                     {"description", m.description},
                     {"source", m.source},
                     {"tier", m.tier},
                     {"expect", mutants::expect_name(m.expect)},
                     {"evidence", m.evidence},
                     {"edits", edits}});
      std::printf("%-44s %-18s %-4s %-10s %s\n", m.id.c_str(), m.group.c_str(), m.tier.c_str(),
                  mutants::expect_name(m.expect), support::printable(m.description, 200).c_str());
    }
  }
  std::printf("%zu mutants (%s)\n", shown_count, support::printable(path.string(), 256).c_str());
  try {
    a.json.write(out);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_mutants(CLI::App& app, int& exit_code) {
  CLI::App* mut =
      app.add_subcommand("mutants", "The mutation matrix (T4): list the catalogue, run a campaign");
  mut->require_subcommand(1);

  auto la = std::make_shared<ListArgs>();
  CLI::App* list = mut->add_subcommand("list", "The catalogue's mutants");
  la->json.add(*list, "Also write the mutants (with their edits)");
  list->add_option("--tier", la->tier, "Only this tier's mutants")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  list->add_option("--catalogue", la->catalogue,
                   "Catalogue file (default: mutants/catalogue.json of the source tree)");
  list->add_option("--build-dir", la->build_dir, "Build tree (to find the source tree)");
  list->callback([la, &exit_code] { exit_code = run_list(*la); });

  auto ra = std::make_shared<TierArgs>();
  auto tier = std::make_shared<std::string>("cpu");
  auto timeout = std::make_shared<double>(600);
  CLI::App* run = mut->add_subcommand(
      "run", "Apply each mutant to a copy of the repository, run its tier's tests, and write "
             "the validation log mutants.json");
  run->add_option("--tier", *tier,
                  "cpu (T0 + T1, also kernel mutants through the host shim) "
                  "or gpu (kernel mutants through T3)")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  run->add_option("--jobs,-j", ra->jobs, "Mutants tested in parallel (and build jobs)");
  run->add_option("--only", ra->mutants.only, "Only the mutants whose id matches this regex");
  run->add_option("--shard", ra->shard, "Every N-th selected mutant starting at the k-th: k/N");
  ra->json.add(*run, "Also write the result (summary, each mutant, the group table)");
  run->add_option("--mode", ra->mutants.mode,
                  "schema: every mutant in one build, chosen at run time (default); rewrite: "
                  "each mutant's plain rewrite built on its own")
      ->check(CLI::IsMember({"schema", "rewrite"}));
  run->add_option("--timeout", *timeout, "Seconds one mutant's tests may take (default 600)")
      ->check(CLI::Range(1.0, 86400.0));
  run->add_flag("--keep", ra->mutants.keep_workspace, "Keep the work copies (paths printed)");
  add_log_options(*run, *ra);
  run->add_option("--build-dir", ra->build_dir, "Build tree (to find the source tree)");
  run->add_option("--catalogue", ra->mutants.catalogue, "Catalogue file (default: the tier's)");
  add_tiers_options(*run, ra->tiers, ra->trust_tiers, "Folder of tier files");
  run->add_flag("--verbose,-v", ra->verbose, "One line per mutant");
  run->callback([ra, tier, timeout, &exit_code] {
    TierArgs a = *ra;
    // A bad option (an output path among them: one that is a special file or a file the run
    // reads, the catalogue included) is named first, whatever the state of the catalogue and
    // the tree (a campaign's schema copy, whose sources hold the schema, does not fit the
    // catalogue). Then a damaged catalogue, or one that does not fit the source tree, is a
    // usage error (exit 2) before any copy or build.
    if (check_run_paths(a) != kOk) {
      exit_code = kUsage;
      return;
    }
    try {
      mutants::select_mutants(mutants::Catalogue{}, *tier, a.mutants.only, 0, 1);
    } catch (const std::exception& e) {
      error_line(e.what());
      exit_code = kUsage;
      return;
    }
    try {
      const fs::path path = catalogue_path(a.mutants.catalogue, a.build_dir);
      const mutants::Catalogue c = mutants::load_catalogue(path);
      harness::LayoutOverrides o;
      o.build_dir = a.build_dir;
      if (const auto layout = harness::discover_layout(o); layout.source_dir) {
        const auto problems = mutants::check_catalogue_applies(*layout.source_dir, c);
        if (!problems.empty()) {
          throw mutants::CatalogueError(
              path.string() + " does not fit the source tree: " + problems.front() +
              (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)"
                                   : ""));
        }
      }
    } catch (const std::exception& e) {
      error_line(e.what());
      exit_code = kUsage;
      return;
    }
    a.name = *tier == "gpu" ? "T4g" : "T4";
    a.log_stem = *tier == "gpu" ? "mutants_gpu" : "mutants";
    a.mutants.tier = *tier;
    a.mutants.mutant_timeout_s = *timeout;
    if (!a.mutants.catalogue.empty())
      a.mutants.catalogue = fs::absolute(a.mutants.catalogue);
    exit_code = run_tier_args(a);
  });
}

} // namespace mmaemu::cli
