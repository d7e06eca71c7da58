// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/mutants/campaign.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <thread>

#include "mmaemu/mutants/rewriter.hpp"
#include "mmaemu/mutants/schema.hpp"
#include "mmaemu/mutants/workspace.hpp"
#include "output_tail.hpp"
#include "schema_lock.hpp"

namespace mmaemu::mutants {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The tests of a mutant's tier in the copy: T1 (or T3) of its own mmaemu, then T0's tests.
std::vector<PlannedTest> tier_tests(const Workspace& ws, const TierPlan& plan) {
  std::vector<PlannedTest> tests;
  const fs::path exe = ws.build_dir() / "harness" / "mmaemu";
  auto tier = [&](const char* name) {
    PlannedTest t;
    t.name = name;
    t.command = {exe.string(),           "tier", "run", name, "--no-log", "--build-dir",
                 ws.build_dir().string()};
    t.cwd = ws.src();
    return t;
  };
  if (plan.with_t3)
    tests.push_back(tier("T3"));
  if (plan.with_t1)
    tests.push_back(tier("T1"));
  if (!plan.label_regex.empty()) {
    auto t0 = list_ctest_tests(ws.build_dir(), plan.label_regex, plan.exclude_label_regex,
                               plan.exclude_name_regex);
    tests.insert(tests.end(), t0.begin(), t0.end());
  }
  return tests;
}

// tests_for_group for each group of the selection, computed once.
std::map<std::string, std::vector<PlannedTest>>
orders_by_group(const std::vector<const Mutant*>& selected, const std::vector<PlannedTest>& tests,
                const TierPlan& plan) {
  std::map<std::string, std::vector<PlannedTest>> out;
  for (const Mutant* m : selected) {
    if (!out.count(m->group))
      out[m->group] = tests_for_group(tests, plan, m->group);
  }
  return out;
}

void settle(MutantResult& r) {
  r.as_expected = matches_expectation(r.mutant->expect, r.outcome, r.killed_by, r.verdict);
}

void from_plan_run(MutantResult& r, const PlanRun& run) {
  r.tests_run = run.tests_run;
  switch (run.status) {
  case RunStatus::passed:
    r.outcome = MutantOutcome::survived;
    break;
  case RunStatus::failed:
    r.outcome = MutantOutcome::killed;
    break;
  case RunStatus::crashed:
    r.outcome = MutantOutcome::crash;
    break;
  case RunStatus::timed_out:
    r.outcome = MutantOutcome::timeout;
    break;
  case RunStatus::error:
    r.outcome = MutantOutcome::error;
    break;
  }
  r.killed_by = run.first_failure;
  r.detail = run.detail;
}

WorkspaceOptions workspace_options(const CampaignOptions& opt) {
  WorkspaceOptions w;
  w.source_dir = opt.source_dir;
  w.shared_dir = opt.shared_dir;
  w.cmake_args = opt.cmake_args;
  w.keep = opt.keep_workspace;
  // The build's "[n/N]" lines, about every tenth of the way (a cold build takes minutes).
  if (opt.note) {
    auto last = std::make_shared<int>(-1);
    w.on_line = [note = opt.note, last](const std::string& line) {
      int n = 0, total = 0;
      if (std::sscanf(line.c_str(), "[%d/%d]", &n, &total) != 2 || total <= 0)
        return;
      const int tenth = 10 * n / total;
      if (tenth != *last) {
        *last = tenth;
        note("building: " + std::to_string(n) + "/" + std::to_string(total));
      }
    };
  }
  return w;
}

// Runs `work(i)` for i in [0, n) on `jobs` threads; reports progress after each.
void for_each_parallel(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& work) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++)
      work(i);
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < std::max(1u, jobs); ++j)
    threads.emplace_back(worker);
  worker();
  for (auto& t : threads)
    t.join();
}

// Builds the schema copy in a fresh temporary folder, or brings the kept one
// (opt.schema_dir) up to date: under its lock, so that concurrent shards of one campaign build
// it once and then run their mutants side by side. Returns the workspace, or null with
// out.error set.
std::unique_ptr<Workspace> schema_workspace(const WorkspaceOptions& wo, const CampaignOptions& opt,
                                            std::unique_ptr<detail::SchemaLock>& lock,
                                            CampaignResult& out) {
  auto build = [&](Workspace& ws) {
    if (opt.note)
      opt.note("configuring and building the copy (" + ws.build_dir().string() + ")");
    ws.configure();
    const auto b = ws.build(std::max(1u, opt.jobs), 3600);
    if (b.exit_code != 0 || b.timed_out) {
      out.error = "the schema build failed (a mutant does not compile; run --mode rewrite --only "
                  "ID to find it): " +
                  detail::last_lines(b.output, 12);
      for (auto& r : out.results) {
        r.outcome = MutantOutcome::build_error;
        r.detail = out.error;
        settle(r);
      }
      return false;
    }
    return true;
  };
  if (opt.schema_dir.empty()) {
    auto ws = std::make_unique<Workspace>(wo, "schema");
    if (opt.keep_workspace && opt.note)
      opt.note("work folder: " + ws->root().string());
    return build(*ws) ? std::move(ws) : nullptr;
  }
  lock = std::make_unique<detail::SchemaLock>(opt.schema_dir.string() + ".lock");
  const std::string want = tree_fingerprint(wo);
  for (int attempt = 0;; ++attempt) {
    lock->shared();
    if (detail::read_schema_stamp(opt.schema_dir) == want)
      break; // built for this very tree and selection, by this campaign or another shard
    if (attempt == 4) {
      out.error = "the schema build in " + opt.schema_dir.string() +
                  " keeps being rebuilt for another tree or selection (campaigns of different "
                  "--only selections share it; run them one after the other)";
      return nullptr;
    }
    lock->exclusive();
    if (detail::read_schema_stamp(opt.schema_dir) == want)
      continue;
    detail::remove_schema_stamp(opt.schema_dir);
    Workspace ws(wo, "schema");
    if (opt.note)
      opt.note("work folder: " + ws.root().string());
    if (!build(ws))
      return nullptr;
    // The copy holds the tree as it was when it was copied; an edit of the working tree since
    // (during a build of minutes) would make the stamp name a tree the build never saw.
    if (tree_fingerprint(wo) != want) {
      out.error = "the source tree changed while the schema was built in " +
                  opt.schema_dir.string() +
                  " (files were edited during the campaign's setup); "
                  "run the campaign again on a tree that stays as it is";
      return nullptr;
    }
    detail::write_schema_stamp(opt.schema_dir, want);
  }
  // Built and stamped for this tree: open it as it is. Synchronising it again would copy any
  // edit made to the working tree since the build into sources the binaries were not built
  // from (a campaign's identity mutants were "killed" that way on 2026-12-06).
  WorkspaceOptions attached = wo;
  attached.attach_only = true;
  return std::make_unique<Workspace>(attached, "schema");
}

void run_schema(const std::vector<const Mutant*>& selected,
                const std::vector<const Mutant*>& schema_set, const CampaignOptions& opt,
                CampaignResult& out) {
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.note)
    opt.note("copying the repository and writing the schema of " +
             std::to_string(schema_set.size()) + " mutants");
  Schema schema;
  try {
    schema = make_schema(opt.source_dir, schema_set);
  } catch (const RewriteError& e) {
    out.error = std::string("schema: ") + e.what();
    return;
  }
  WorkspaceOptions wo = workspace_options(opt);
  wo.persistent_root = opt.schema_dir;
  wo.overrides = schema.files;
  wo.unity = true;                                 // built once for every mutant
  std::unique_ptr<detail::SchemaLock> schema_lock; // held (shared) while the mutants run
  const std::unique_ptr<Workspace> wsp = schema_workspace(wo, opt, schema_lock, out);
  if (!wsp)
    return;
  Workspace& ws = *wsp;
  const auto& numbers = schema.numbers;
  const auto tests = tier_tests(ws, opt.plan);
  const auto orders = orders_by_group(selected, tests, opt.plan);
  out.setup_seconds = since(t0);
  if (opt.note)
    opt.note("built in " + std::to_string(static_cast<int>(out.setup_seconds)) + " s; " +
             std::to_string(tests.size()) + " tests per mutant at most");
  std::mutex mu;
  std::size_t done = 0;
  if (opt.progress)
    opt.progress(0, selected.size(), "");
  for_each_parallel(selected.size(), opt.jobs, [&](std::size_t i) {
    MutantResult& r = out.results[i];
    const auto m0 = std::chrono::steady_clock::now();
    PlanRunOptions po;
    po.build_dir = ws.build_dir();
    po.env[kSchemaEnv] = std::to_string(numbers.at(r.mutant->id));
    po.test_timeout_s = opt.test_timeout_s;
    po.total_timeout_s = opt.mutant_timeout_s;
    from_plan_run(r, run_plan(orders.at(r.mutant->group), po));
    r.seconds = since(m0);
    settle(r);
    std::lock_guard<std::mutex> lock(mu);
    ++done;
    if (opt.progress)
      opt.progress(done, selected.size(), r.mutant->id + " " + outcome_name(r.outcome));
  });
}

void run_rewrite(const std::vector<const Mutant*>& selected, const CampaignOptions& opt,
                 CampaignResult& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned jobs = std::max(1u, std::min<unsigned>(opt.jobs, selected.size()));
  std::vector<std::unique_ptr<Workspace>> spaces;
  std::vector<std::map<std::string, std::vector<PlannedTest>>> plans;
  for (unsigned j = 0; j < jobs; ++j) {
    if (opt.note)
      opt.note("copying, configuring and building work copy " + std::to_string(j + 1) + " of " +
               std::to_string(jobs));
    spaces.push_back(std::make_unique<Workspace>(workspace_options(opt), "rewrite"));
    if (opt.keep_workspace && opt.note)
      opt.note("work folder kept: " + spaces.back()->root().string());
    spaces.back()->configure();
    // The first copy builds with every job; later ones mostly hit the compiler cache.
    const auto b = spaces.back()->build(jobs, 3600);
    if (b.exit_code != 0 || b.timed_out) {
      out.error = "the unmutated copy does not build: " + detail::last_lines(b.output, 12);
      return;
    }
    plans.push_back(orders_by_group(selected, tier_tests(*spaces.back(), opt.plan), opt.plan));
  }
  out.setup_seconds = since(t0);
  std::mutex mu;
  std::size_t done = 0;
  std::atomic<std::size_t> next{0};
  if (opt.progress)
    opt.progress(0, selected.size(), "");
  auto worker = [&](unsigned j) {
    Workspace& ws = *spaces[j];
    for (std::size_t i = next++; i < selected.size(); i = next++) {
      MutantResult& r = out.results[i];
      const auto m0 = std::chrono::steady_clock::now();
      std::map<std::string, std::string> saved;
      try {
        saved = apply_mutant(ws.src(), *r.mutant);
        const auto b = ws.build(1, opt.mutant_timeout_s);
        if (b.timed_out) {
          r.outcome = MutantOutcome::timeout;
          r.killed_by = "build";
          r.detail = "the build ran out of time";
        } else if (b.exit_code != 0) {
          r.outcome = MutantOutcome::build_error;
          r.killed_by = "build";
          r.detail = detail::last_lines(b.output, 12);
        } else {
          PlanRunOptions po;
          po.build_dir = ws.build_dir();
          po.test_timeout_s = opt.test_timeout_s;
          po.total_timeout_s = std::max(1.0, opt.mutant_timeout_s - since(m0));
          from_plan_run(r, run_plan(plans[j].at(r.mutant->group), po));
        }
      } catch (const std::exception& e) {
        r.outcome = MutantOutcome::error;
        r.detail = e.what();
      }
      try {
        restore_files(ws.src(), saved); // rebuilt by the next mutant's build
      } catch (const std::exception& e) {
        r.outcome = MutantOutcome::error;
        r.detail = std::string("cannot restore the copy: ") + e.what();
      }
      r.seconds = since(m0);
      settle(r);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (opt.progress)
        opt.progress(done, selected.size(), r.mutant->id + " " + outcome_name(r.outcome));
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j)
    threads.emplace_back(worker, j);
  worker(0);
  for (auto& t : threads)
    t.join();
}

} // namespace

const char* outcome_name(MutantOutcome o) {
  switch (o) {
  case MutantOutcome::killed:
    return "killed";
  case MutantOutcome::survived:
    return "survived";
  case MutantOutcome::timeout:
    return "timeout";
  case MutantOutcome::crash:
    return "crash";
  case MutantOutcome::build_error:
    return "build_error";
  case MutantOutcome::error:
    return "error";
  }
  return "?";
}

bool matches_expectation(Expect e, MutantOutcome o, const std::string& killed_by,
                         std::string& why) {
  const bool detected =
      o == MutantOutcome::killed || o == MutantOutcome::timeout || o == MutantOutcome::crash;
  if (o == MutantOutcome::build_error) {
    why = "does not build: a catalogue defect";
    return false;
  }
  if (o == MutantOutcome::error) {
    why = "could not run";
    return false;
  }
  const std::string by = killed_by.empty() ? "" : " by " + killed_by;
  switch (e) {
  case Expect::killed:
    why = detected ? std::string(outcome_name(o)) + by
                   : "SURVIVED: no test of its tier fails (a missing test, or an equivalent "
                     "mutant without its evidence)";
    return detected;
  case Expect::survives:
    why = detected ? "identity mutant " + std::string(outcome_name(o)) + by +
                         ": the injection itself changes behaviour (unsound)"
                   : "survived: the injection is sound";
    return !detected;
  case Expect::equivalent:
    why = detected ? "claimed equivalent but " + std::string(outcome_name(o)) + by +
                         ": the evidence is refuted"
                   : "survived, as its evidence says";
    return !detected;
  }
  return false;
}

std::vector<PlannedTest> tests_for_group(const std::vector<PlannedTest>& tests,
                                         const TierPlan& plan, const std::string& group) {
  const auto it = plan.first_tests.find(group);
  if (it == plan.first_tests.end() || it->second.empty())
    return tests;
  std::regex re;
  try {
    re = std::regex(it->second, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("first_tests of group " + group + ": '" + it->second +
                                "' is not a regular expression (" + e.what() + ")");
  }
  std::vector<PlannedTest> first, rest;
  for (const auto& t : tests)
    (std::regex_search(t.name, re) ? first : rest).push_back(t);
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

std::vector<const Mutant*> select_mutants(const Catalogue& c, const std::string& tier,
                                          const std::string& only, std::size_t shard_index,
                                          std::size_t shard_count) {
  std::optional<std::regex> re;
  if (!only.empty()) {
    try {
      re.emplace(only, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--only: '" + only + "' is not a regular expression (" +
                                  e.what() + ")");
    }
  }
  std::vector<const Mutant*> out;
  std::size_t k = 0;
  for (const auto& m : c.mutants) {
    // The GPU tier also runs every kernel mutant (the CPU tier runs them through the host shim).
    if (m.tier != tier && !(tier == "gpu" && m.group == "kernel"))
      continue;
    if (re && !std::regex_search(m.id, *re))
      continue;
    if (shard_count > 1 && (k++ % shard_count) != shard_index - 1)
      continue;
    out.push_back(&m);
  }
  return out;
}

CampaignResult run_campaign(const Catalogue& c, const CampaignOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  CampaignResult out;
  out.mode = opt.mode;
  out.catalogue_size = c.mutants.size();
  const auto selected = select_mutants(c, opt.tier, opt.only, opt.shard_index, opt.shard_count);
  for (const Mutant* m : selected) {
    MutantResult r;
    r.mutant = m;
    r.outcome = MutantOutcome::error;
    r.detail = "not run";
    out.results.push_back(r);
  }
  if (selected.empty()) {
    out.seconds = since(t0);
    return out;
  }
  try {
    if (opt.mode == "rewrite") {
      run_rewrite(selected, opt, out);
    } else if (!opt.schema_dir.empty() && opt.shard_count > 1) {
      // Every shard of the campaign compiles the schema of the whole selection, so that they
      // share one kept build instead of rewriting it for each other.
      run_schema(selected, select_mutants(c, opt.tier, opt.only, 1, 1), opt, out);
    } else {
      run_schema(selected, selected, opt, out);
    }
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  if (!out.error.empty()) {
    for (auto& r : out.results) {
      if (r.detail == "not run") {
        r.outcome = MutantOutcome::error;
        r.detail = out.error;
        settle(r);
      }
    }
  }
  out.seconds = since(t0);
  return out;
}

json result_json(const MutantResult& r) {
  json j = {{"id", r.mutant->id},
            {"group", r.mutant->group},
            {"description", r.mutant->description},
            {"source", r.mutant->source},
            {"expect", expect_name(r.mutant->expect)},
            {"outcome", outcome_name(r.outcome)},
            {"as_expected", r.as_expected},
            {"verdict", r.verdict},
            {"killed_by", r.killed_by},
            {"tests_run", r.tests_run},
            {"seconds", r.seconds}};
  if (!r.mutant->evidence.empty())
    j["evidence"] = r.mutant->evidence;
  if (!r.as_expected || r.outcome == MutantOutcome::killed)
    j["detail"] = r.detail;
  return j;
}

namespace {

bool detected(MutantOutcome o) {
  return o == MutantOutcome::killed || o == MutantOutcome::timeout || o == MutantOutcome::crash;
}

std::string percent_text(const json& score) {
  if (score["percent"].is_null())
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", score["percent"].get<double>());
  return buf;
}

std::string score_line(const std::string& name, const std::string& layer, const json& score) {
  char buf[160];
  const std::string frac = std::to_string(score["killed"].get<std::size_t>()) + "/" +
                           std::to_string(score["non_equivalent"].get<std::size_t>());
  std::snprintf(buf, sizeof buf, "  %-18s %-10s %9s killed  %7s", name.c_str(), layer.c_str(),
                frac.c_str(), percent_text(score).c_str());
  std::string line = buf;
  if (score.contains("target_percent")) {
    line += "  (target " + std::to_string(score["target_percent"].get<unsigned>()) + "%)";
    if (!score["meets_target"].get<bool>())
      line += "  UNDER TARGET";
  }
  return line;
}

} // namespace

json score_json(const std::vector<const MutantResult*>& results,
                std::optional<unsigned> target_percent) {
  std::size_t killed = 0, non_equivalent = 0;
  for (const MutantResult* x : results) {
    if (x->mutant->expect != Expect::killed)
      continue;
    ++non_equivalent;
    killed += detected(x->outcome);
  }
  json s = {{"killed", killed},
            {"non_equivalent", non_equivalent},
            {"percent", non_equivalent == 0 ? json()
                                            : json(100.0 * static_cast<double>(killed) /
                                                   static_cast<double>(non_equivalent))}};
  if (target_percent) {
    s["target_percent"] = *target_percent;
    // In integers, so that 19 of 20 against 95% is exact.
    s["meets_target"] = killed * 100 >= static_cast<std::size_t>(*target_percent) * non_equivalent;
  }
  return s;
}

json group_table(const CampaignResult& r) {
  json table = json::array();
  for (const auto& info : catalogue_group_info()) {
    const std::string& g = info.name;
    std::size_t n = 0, ok = 0, killed = 0, survived = 0, equivalent = 0, identity = 0, errors = 0;
    std::vector<const MutantResult*> members;
    for (const auto& x : r.results) {
      if (x.mutant->group != g)
        continue;
      members.push_back(&x);
      ++n;
      ok += x.as_expected;
      killed += detected(x.outcome);
      survived += x.outcome == MutantOutcome::survived;
      equivalent += x.mutant->expect == Expect::equivalent;
      identity += x.mutant->expect == Expect::survives;
      errors += x.outcome == MutantOutcome::build_error || x.outcome == MutantOutcome::error;
    }
    if (n == 0)
      continue;
    table.push_back({{"group", g},
                     {"layer", layer_name(info.layer)},
                     {"mutants", n},
                     {"as_expected", ok},
                     {"killed", killed},
                     {"survived", survived},
                     {"equivalent", equivalent},
                     {"identity", identity},
                     {"errors", errors},
                     {"score", score_json(members, kill_target_percent(info.layer))}});
  }
  return table;
}

json score_summary(const CampaignResult& r) {
  std::vector<const MutantResult*> all;
  for (const auto& x : r.results)
    all.push_back(&x);
  json layers = json::array();
  for (const Layer l : {Layer::control, Layer::modelling, Layer::harness}) {
    std::vector<const MutantResult*> members;
    for (const auto& x : r.results) {
      if (group_layer(x.mutant->group) == l)
        members.push_back(&x);
    }
    if (members.empty())
      continue;
    json s = score_json(members, kill_target_percent(l));
    s["layer"] = layer_name(l);
    layers.push_back(std::move(s));
  }
  return {{"overall", score_json(all, std::nullopt)}, {"layers", layers}};
}

std::vector<std::string> score_lines(const json& groups, const json& summary) {
  std::vector<std::string> out;
  out.push_back("mutation score (killed / non-equivalent), by group:");
  for (const auto& g : groups)
    out.push_back(
        score_line(g["group"].get<std::string>(), g["layer"].get<std::string>(), g["score"]));
  for (const auto& l : summary["layers"])
    out.push_back(score_line("layer", l["layer"].get<std::string>(), l));
  out.push_back(score_line("overall", "", summary["overall"]));
  return out;
}

} // namespace mmaemu::mutants
