// SPDX-License-Identifier: BSD-2-Clause
// Whole campaigns on the fixture project (tests/fixture: a library, a strong test and a weak
// one): the identity mutant survives, the control is killed, the mutant that only the weak
// test could see survives and makes its result a failure, a mutant that never ends is reported
// as a timeout, and the schema and plain rewrite modes give the same outcome for every mutant.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "mmaemu/mutants/campaign.hpp"
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
  EXPECT_EQ(id.tests_run, 2u);
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
