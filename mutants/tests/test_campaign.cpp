// SPDX-License-Identifier: BSD-2-Clause
// Whole campaigns on the fixture project (tests/fixture: a library, a strong test, a weak one
// and a check of its logs): the identity mutant survives, the control is killed, the mutant
// that only the weak test could see survives and makes its result a failure, a mutant that
// never ends is reported as a timeout, the schema and plain rewrite modes give the same outcome
// for every mutant, and an untracked file in a git checkout stays out of the copies.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "mmaemu/mutants/campaign.hpp"
#include "mmaemu/mutants/workspace.hpp"
#include "mmaemu/support/process.hpp"
#include "temp_dir.hpp"

using namespace mmaemu::mutants;
namespace fs = std::filesystem;

namespace {

const fs::path kFixture = MMAEMU_MUTANTS_FIXTURE;

CampaignOptions options(const std::string& mode) {
  CampaignOptions o;
  o.mode = mode;
  o.jobs = 2;
  o.source_dir = kFixture;
  o.plan.with_t1 = false;
  o.plan.label_regex = "unit";
  o.plan.exclude_label_regex = "";
  o.test_timeout_s = 5;
  o.mutant_timeout_s = 60;
  return o;
}

const MutantResult& find(const CampaignResult& r, const std::string& id) {
  for (const auto& m : r.results) {
    if (m.mutant->id == id)
      return m;
  }
  throw std::runtime_error("no result for " + id);
}

const CampaignResult& schema_run() {
  static const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  static const CampaignResult r = run_campaign(c, options("schema"));
  return r;
}

const CampaignResult& rewrite_run() {
  static const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  static const CampaignResult r = run_campaign(c, options("rewrite"));
  return r;
}

void skip_without_tools() {
  for (const char* p : {"cmake", "ctest", "ninja", "c++"}) {
    if (!mmaemu::support::find_program(p))
      GTEST_SKIP() << "needs " << p << " in PATH";
  }
}

} // namespace

TEST(Campaign, IdentitySurvivesAndControlIsKilled) {
  skip_without_tools();
  const auto& r = schema_run();
  ASSERT_TRUE(r.error.empty()) << r.error;
  const auto& id = find(r, "identity_add");
  EXPECT_EQ(id.outcome, MutantOutcome::survived) << id.detail;
  EXPECT_TRUE(id.as_expected);
  EXPECT_EQ(id.tests_run, 3u); // strong, weak, logs_signed
  const auto& ctl = find(r, "control_sign_flip");
  EXPECT_EQ(ctl.outcome, MutantOutcome::killed);
  EXPECT_EQ(ctl.killed_by, "strong");
  EXPECT_TRUE(ctl.as_expected);
  const auto& eq = find(r, "plan.clamp_equivalent");
  EXPECT_EQ(eq.outcome, MutantOutcome::survived);
  EXPECT_TRUE(eq.as_expected);
}

TEST(Campaign, AMutantOnlyAWeakTestCouldSeeSurvivesAndFailsTheRun) {
  skip_without_tools();
  const auto& m = find(schema_run(), "plan.clamp_at_50");
  EXPECT_EQ(m.outcome, MutantOutcome::survived);
  EXPECT_FALSE(m.as_expected);
  EXPECT_THAT(m.verdict, ::testing::HasSubstr("SURVIVED"));
  const auto table = group_table(schema_run());
  bool seen = false;
  for (const auto& g : table) {
    if (g["group"] == "plan") {
      seen = true;
      EXPECT_EQ(g["mutants"], 3);
      EXPECT_EQ(g["survived"], 2);
      EXPECT_EQ(g["as_expected"], 2);
    }
  }
  EXPECT_TRUE(seen);
}

TEST(Campaign, AMutantThatNeverEndsIsATimeout) {
  skip_without_tools();
  const auto& m = find(schema_run(), "plan.count_forever");
  EXPECT_EQ(m.outcome, MutantOutcome::timeout) << m.detail;
  EXPECT_EQ(m.killed_by, "strong");
  EXPECT_TRUE(m.as_expected); // the tests did not pass: the mutant is detected
}

TEST(Campaign, SchemaAndPlainRewriteAgreeOnEveryMutant) {
  skip_without_tools();
  const auto& s = schema_run();
  const auto& w = rewrite_run();
  ASSERT_TRUE(w.error.empty()) << w.error;
  ASSERT_EQ(s.results.size(), w.results.size());
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    EXPECT_EQ(s.results[i].mutant->id, w.results[i].mutant->id);
    EXPECT_EQ(outcome_name(s.results[i].outcome), std::string(outcome_name(w.results[i].outcome)))
        << s.results[i].mutant->id << ": " << w.results[i].detail;
    EXPECT_EQ(s.results[i].killed_by, w.results[i].killed_by) << s.results[i].mutant->id;
  }
}

TEST(Campaign, AMutantThatDoesNotCompileIsABuildErrorInRewriteMode) {
  skip_without_tools();
  Catalogue c;
  Mutant m;
  m.id = "plan.broken";
  m.group = "plan";
  m.tier = "cpu";
  m.edits.push_back({"arith.cpp", "return a + b;", "return a +;", Form::stmt});
  c.mutants.push_back(m);
  auto o = options("rewrite");
  o.jobs = 1;
  const auto r = run_campaign(c, o);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].outcome, MutantOutcome::build_error);
  EXPECT_FALSE(r.results[0].as_expected);
  EXPECT_THAT(r.results[0].verdict, ::testing::HasSubstr("catalogue defect"));
}

TEST(Campaign, OnlyAndShardSelectInCatalogueOrder) {
  const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  auto ids = [](const std::vector<const Mutant*>& v) {
    std::vector<std::string> out;
    for (auto* m : v)
      out.push_back(m->id);
    return out;
  };
  EXPECT_EQ(ids(select_mutants(c, "cpu", "^plan\\.clamp", 1, 1)),
            (std::vector<std::string>{"plan.clamp_at_50", "plan.clamp_equivalent"}));
  EXPECT_EQ(ids(select_mutants(c, "cpu", "", 2, 2)),
            (std::vector<std::string>{"control_sign_flip", "plan.count_forever"}));
  EXPECT_TRUE(select_mutants(c, "gpu", "", 1, 1).empty());
  EXPECT_THROW(select_mutants(c, "cpu", "(", 1, 1), std::invalid_argument);
}

TEST(Campaign, ExpectationsMatchOutcomes) {
  std::string why;
  EXPECT_TRUE(matches_expectation(Expect::killed, MutantOutcome::killed, "t", why));
  EXPECT_TRUE(matches_expectation(Expect::killed, MutantOutcome::crash, "t", why));
  EXPECT_FALSE(matches_expectation(Expect::killed, MutantOutcome::survived, "", why));
  EXPECT_FALSE(matches_expectation(Expect::survives, MutantOutcome::killed, "t", why));
  EXPECT_THAT(why, ::testing::HasSubstr("unsound"));
  EXPECT_FALSE(matches_expectation(Expect::equivalent, MutantOutcome::killed, "t", why));
  EXPECT_THAT(why, ::testing::HasSubstr("refuted"));
  EXPECT_TRUE(matches_expectation(Expect::equivalent, MutantOutcome::survived, "", why));
  EXPECT_FALSE(matches_expectation(Expect::killed, MutantOutcome::build_error, "", why));
}

// Shards of one campaign started at once on one kept schema folder (Slurm array tasks on one
// build tree): the schema of the whole selection is built once, under the lock, and each shard
// then runs its own mutants with the outcomes of the unsharded campaign; a later shard finds
// the build up to date and builds nothing.
TEST(Campaign, ConcurrentShardsShareOneKeptSchemaBuild) {
  skip_without_tools();
  static const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  mmaemu::testing::TempDir tmp("schema_shards");
  const fs::path schema = tmp / "mutants-schema";
  auto shard = [&](std::size_t k) {
    CampaignOptions o = options("schema");
    o.jobs = 1;
    o.schema_dir = schema;
    o.shard_index = k;
    o.shard_count = 2;
    return run_campaign(c, o);
  };
  CampaignResult r1, r2;
  std::thread t1([&] { r1 = shard(1); });
  std::thread t2([&] { r2 = shard(2); });
  t1.join();
  t2.join();
  ASSERT_TRUE(r1.error.empty()) << r1.error;
  ASSERT_TRUE(r2.error.empty()) << r2.error;
  EXPECT_EQ(r1.results.size() + r2.results.size(), schema_run().results.size());
  for (const auto* r : {&r1, &r2}) {
    for (const auto& m : r->results) {
      EXPECT_EQ(outcome_name(m.outcome),
                std::string(outcome_name(find(schema_run(), m.mutant->id).outcome)))
          << m.mutant->id << ": " << m.detail;
    }
  }
  EXPECT_TRUE(fs::exists(schema / ".mmaemu-schema-stamp"));
  EXPECT_TRUE(fs::exists(tmp / "mutants-schema.lock"));
  const auto log_size = fs::file_size(schema / "build" / ".ninja_log");
  const CampaignResult again = shard(1);
  ASSERT_TRUE(again.error.empty()) << again.error;
  EXPECT_EQ(fs::file_size(schema / "build" / ".ninja_log"), log_size); // nothing was rebuilt
}

namespace {

// Runs a command in `dir`; fails the test unless it exits 0.
void run_in(const fs::path& dir, const std::vector<std::string>& argv) {
  const auto r = mmaemu::support::run_process(argv, mmaemu::support::ProcessOptions::in_dir(dir));
  ASSERT_EQ(r.exit_code, 0) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << ": "
                            << r.output << r.error;
}

// A copy of the fixture as a git repository of its own, every file committed.
fs::path committed_fixture(const fs::path& root) {
  const fs::path repo = root / "repo";
  fs::copy(kFixture, repo, fs::copy_options::recursive);
  const std::vector<std::string> git = {"git", "-c", "user.name=mutants test", "-c",
                                        "user.email=mutants@test.invalid"};
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = git;
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  run_in(repo, with({"init", "-q"}));
  run_in(repo, with({"add", "-A"}));
  run_in(repo, with({"commit", "-q", "-m", "fixture"}));
  return repo;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace

// The runner defect of issue 19: an untracked, unsigned log in the source tree fails the tree's
// own tests, and a copy that took it killed every identity mutant. The copy holds the tracked
// files only, so a campaign with that file present has the outcomes of the clean fixture.
TEST(Campaign, AnUntrackedFileThatBreaksTheTestsDoesNotChangeTheResult) {
  skip_without_tools();
  if (!mmaemu::support::find_program("git"))
    GTEST_SKIP() << "needs git in PATH";
  mmaemu::testing::TempDir tmp("untracked");
  const fs::path repo = committed_fixture(tmp.path());
  mmaemu::testing::spit(repo / "logs" / "T1.json", "{\"signed\": false}\n");
  // The stray file does break the tree's tests: the logs check fails on it.
  const auto check = mmaemu::support::run_process({"cmake", "-DLOG_DIR=" + (repo / "logs").string(),
                                                   "-P", (repo / "check_logs.cmake").string()});
  EXPECT_NE(check.exit_code, 0) << check.output;
  EXPECT_THAT(check.output, ::testing::HasSubstr("T1.json is not signed"));

  const RepositoryListing listing = list_repository_files(repo);
  EXPECT_EQ(listing.method, "git");
  EXPECT_TRUE(contains(listing.files, "logs/T0.json"));
  EXPECT_TRUE(contains(listing.files, "arith.cpp"));
  EXPECT_FALSE(contains(listing.files, "logs/T1.json"));
  EXPECT_EQ(listing.untracked, std::vector<std::string>{"logs/T1.json"});
  EXPECT_EQ(listing.untracked_count, 1u);

  static const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  CampaignOptions o = options("schema");
  o.source_dir = repo;
  const CampaignResult r = run_campaign(c, o);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const auto& clean = schema_run();
  ASSERT_EQ(r.results.size(), clean.results.size());
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const auto& m = r.results[i];
    EXPECT_EQ(outcome_name(m.outcome), std::string(outcome_name(clean.results[i].outcome)))
        << m.mutant->id << ": " << m.detail;
    EXPECT_EQ(m.killed_by, clean.results[i].killed_by) << m.mutant->id;
    EXPECT_EQ(m.as_expected, clean.results[i].as_expected) << m.mutant->id;
  }
  const auto& id = find(r, "identity_add");
  EXPECT_EQ(id.outcome, MutantOutcome::survived) << id.detail;
  EXPECT_EQ(id.tests_run, 3u);
}

// The tree is copied once per schema build. An edit of the working tree while the copy builds
// (an editor, a checkout: minutes of build) stops the campaign before any mutant runs, and
// leaves no stamp that would call the copy that tree's build; run again, it builds and runs.
TEST(Campaign, AnEditOfTheTreeDuringTheSchemaBuildStopsTheCampaign) {
  skip_without_tools();
  if (!mmaemu::support::find_program("git"))
    GTEST_SKIP() << "needs git in PATH";
  mmaemu::testing::TempDir tmp("edited");
  const fs::path repo = committed_fixture(tmp.path());
  static const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  CampaignOptions o = options("schema");
  o.source_dir = repo;
  o.schema_dir = tmp / "mutants-schema";
  const std::string original = mmaemu::testing::slurp(repo / "strong_test.cpp");
  o.note = [&](const std::string& line) {
    if (line.rfind("configuring and building", 0) == 0)
      mmaemu::testing::spit(repo / "strong_test.cpp", original + "// edited during the build\n");
  };
  const CampaignResult r = run_campaign(c, o);
  EXPECT_THAT(r.error, ::testing::HasSubstr("the source tree changed while the schema was built"));
  EXPECT_FALSE(fs::exists(o.schema_dir / ".mmaemu-schema-stamp"));
  o.note = nullptr;
  const CampaignResult again = run_campaign(c, o);
  ASSERT_TRUE(again.error.empty()) << again.error;
  EXPECT_EQ(find(again, "identity_add").outcome, MutantOutcome::survived);
  EXPECT_EQ(mmaemu::testing::slurp(o.schema_dir / "src" / "strong_test.cpp"),
            original + "// edited during the build\n");
}

// A kept copy opened attach_only is taken as it is: a file edited in the working tree since is
// not copied (a campaign opens the build it stamped for its tree that way).
TEST(Workspace, AttachOnlyOpensAKeptCopyAsItIs) {
  mmaemu::testing::TempDir tmp("attach");
  const fs::path src = tmp / "tree";
  fs::create_directories(src);
  mmaemu::testing::spit(src / "a.cpp", "int a = 1;\n");
  WorkspaceOptions wo;
  wo.source_dir = src;
  wo.persistent_root = tmp / "kept";
  { const Workspace first(wo, "attach"); }
  EXPECT_EQ(mmaemu::testing::slurp(tmp / "kept" / "src" / "a.cpp"), "int a = 1;\n");
  mmaemu::testing::spit(src / "a.cpp", "int a = 2;\n");
  WorkspaceOptions attached = wo;
  attached.attach_only = true;
  { const Workspace second(attached, "attach"); }
  EXPECT_EQ(mmaemu::testing::slurp(tmp / "kept" / "src" / "a.cpp"), "int a = 1;\n");
  { const Workspace synced(wo, "attach"); }
  EXPECT_EQ(mmaemu::testing::slurp(tmp / "kept" / "src" / "a.cpp"), "int a = 2;\n");
}

// Outside a git checkout (an unpacked tarball) there is no tracked set: every file outside
// build*/ is copied, and the listing says so.
TEST(Campaign, OutsideAGitCheckoutEveryFileIsCopied) {
  mmaemu::testing::TempDir tmp("walk");
  const fs::path tree = tmp / "tree";
  fs::copy(kFixture, tree, fs::copy_options::recursive);
  mmaemu::testing::spit(tree / "logs" / "T1.json", "{\"signed\": false}\n");
  fs::create_directories(tree / "build-x");
  mmaemu::testing::spit(tree / "build-x" / "CMakeCache.txt", "");
  const RepositoryListing listing = list_repository_files(tree);
  EXPECT_EQ(listing.method, "walk");
  EXPECT_TRUE(contains(listing.files, "logs/T1.json"));
  EXPECT_TRUE(contains(listing.files, "arith.cpp"));
  EXPECT_FALSE(contains(listing.files, "build-x/CMakeCache.txt"));
  EXPECT_EQ(listing.untracked_count, 0u);
}

// A checkout whose files git cannot list stops the campaign instead of copying every file.
TEST(Campaign, ACheckoutGitCannotListIsAnErrorNotACopyOfEveryFile) {
  mmaemu::testing::TempDir tmp("badgit");
  const fs::path tree = tmp / "tree";
  fs::copy(kFixture, tree, fs::copy_options::recursive);
  mmaemu::testing::spit(tree / ".git", "gitdir: " + (tmp / "nowhere").string() + "\n");
  try {
    list_repository_files(tree);
    FAIL() << "listed a checkout that git cannot read";
  } catch (const WorkspaceError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("tracked files only")) << e.what();
    EXPECT_THAT(e.what(), ::testing::HasSubstr(tree.string())) << e.what();
  }
  CampaignOptions o = options("schema");
  o.source_dir = tree;
  static const Catalogue c = load_catalogue(kFixture / "catalogue.json");
  const CampaignResult r = run_campaign(c, o);
  EXPECT_THAT(r.error, ::testing::HasSubstr("tracked files only"));
}

// The mutation score: killed over the mutants expected killed (identity and equivalent mutants
// left out; a timeout or a crash counts as killed), held to the layer's target in integers.
TEST(Campaign, ScoreIsKilledOverNonEquivalentAgainstTheLayersTarget) {
  std::vector<Mutant> ms;
  auto add = [&](const std::string& id, const std::string& group, Expect e) {
    Mutant m;
    m.id = id;
    m.group = group;
    m.expect = e;
    ms.push_back(m);
  };
  for (int i = 0; i < 20; ++i)
    add("signing.m" + std::to_string(i), "signing", Expect::killed);
  add("signing.eq", "signing", Expect::equivalent);
  for (int i = 0; i < 20; ++i)
    add("plan.m" + std::to_string(i), "plan", Expect::killed);
  add("identity_x", "control", Expect::survives);
  add("control_sign_flip", "control", Expect::killed);
  CampaignResult r;
  for (const auto& m : ms) {
    MutantResult x;
    x.mutant = &m;
    x.outcome = m.expect == Expect::killed ? MutantOutcome::killed : MutantOutcome::survived;
    r.results.push_back(x);
  }
  auto set = [&](const std::string& id, MutantOutcome o) {
    for (auto& x : r.results) {
      if (x.mutant->id == id)
        x.outcome = o;
    }
  };
  set("signing.m0", MutantOutcome::survived); // 19 of 20: exactly 95%
  set("signing.m1", MutantOutcome::timeout);  // still detected
  set("plan.m0", MutantOutcome::survived);    // 19 of 20: under the model's 100%
  set("plan.m1", MutantOutcome::crash);
  const auto table = group_table(r);
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0]["group"], "control");
  EXPECT_EQ(table[0]["score"]["killed"], 1);
  EXPECT_EQ(table[0]["score"]["non_equivalent"], 1);
  EXPECT_EQ(table[0]["score"]["meets_target"], true);
  EXPECT_EQ(table[1]["group"], "plan");
  EXPECT_EQ(table[1]["layer"], "modelling");
  EXPECT_EQ(table[1]["score"]["killed"], 19);
  EXPECT_EQ(table[1]["score"]["non_equivalent"], 20);
  EXPECT_EQ(table[1]["score"]["target_percent"], 100);
  EXPECT_EQ(table[1]["score"]["meets_target"], false);
  EXPECT_EQ(table[2]["group"], "signing");
  EXPECT_EQ(table[2]["layer"], "harness");
  EXPECT_EQ(table[2]["score"]["killed"], 19);
  EXPECT_EQ(table[2]["score"]["non_equivalent"], 20);
  EXPECT_EQ(table[2]["score"]["target_percent"], 95);
  EXPECT_EQ(table[2]["score"]["meets_target"], true);
  EXPECT_EQ(table[2]["equivalent"], 1);
  // 19 of 20 is 95.0 percent; compared as numbers, not text.
  EXPECT_LT(std::abs(table[2]["score"]["percent"].get<double>() - 95.0), 1e-9);
  set("signing.m2", MutantOutcome::survived); // 18 of 20: under 95%
  EXPECT_EQ(group_table(r)[2]["score"]["meets_target"], false);

  const auto summary = score_summary(r);
  EXPECT_EQ(summary["overall"]["killed"], 1 + 19 + 18);
  EXPECT_EQ(summary["overall"]["non_equivalent"], 41);
  EXPECT_FALSE(summary["overall"].contains("target_percent"));
  ASSERT_EQ(summary["layers"].size(), 3u);
  EXPECT_EQ(summary["layers"][1]["layer"], "modelling");
  const auto lines = score_lines(group_table(r), summary);
  ASSERT_EQ(lines.size(), 1u + 3u + 3u + 1u);
  EXPECT_THAT(lines[3], ::testing::HasSubstr("signing"));
  EXPECT_THAT(lines[3], ::testing::HasSubstr("18/20 killed"));
  EXPECT_THAT(lines[3], ::testing::HasSubstr("90.0%"));
  EXPECT_THAT(lines[3], ::testing::HasSubstr("UNDER TARGET"));
  EXPECT_THAT(lines.back(), ::testing::HasSubstr("38/41 killed"));

  // A selection without a mutant to kill has no percentage, and nothing to miss.
  CampaignResult only_identity;
  MutantResult x;
  x.mutant = &ms[41];
  x.outcome = MutantOutcome::survived;
  only_identity.results.push_back(x);
  const auto t = group_table(only_identity);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0]["score"]["percent"].is_null());
  EXPECT_EQ(t[0]["score"]["meets_target"], true);
}
