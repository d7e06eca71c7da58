// SPDX-License-Identifier: BSD-2-Clause
// Tier files: the committed declarations load, and a bad file is a clear error naming it.

#include <gtest/gtest.h>

#include <functional>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "tier_test_support.hpp"

namespace mmaemu::harness {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

const char* kGood = R"({
  "schema": "mmaemu-tier/1",
  "name": "T9",
  "title": "test",
  "purpose": "a tier of the tests",
  "when": "never",
  "budget": {"seconds": 10},
  "run": {"kind": "replay"},
  "needs": {}
}
)";

TEST(TierSpec, EveryCommittedTierLoadsInTierOrder) {
  const auto tiers = load_tiers(tiertest::committed_tiers());
  std::vector<std::string> names;
  for (const auto& t : tiers)
    names.push_back(t.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"T0", "T1", "T1s", "T2", "T3", "T3p", "T4", "T6", "T7"}));
  for (const auto& t : tiers) {
    EXPECT_FALSE(t.purpose.empty()) << t.name;
    EXPECT_GT(t.budget_seconds, 0) << t.name;
    EXPECT_EQ(t.file_sha256.size(), 64u) << t.name;
  }
}

TEST(TierSpec, CommittedTiersDeclareTheSeedsDataAndDevices) {
  EXPECT_EQ(tiertest::committed_tier("T0").run["labels"], nlohmann::json::array({"unit"}));
  const auto t2 = tiertest::committed_tier("T2");
  ASSERT_EQ(t2.env.size(), 1u);
  EXPECT_EQ(t2.env[0].name, "MMAEMU_TRUTH_DIR");
  const auto t3 = tiertest::committed_tier("T3");
  ASSERT_EQ(t3.devices.size(), 1u);
  EXPECT_EQ(t3.devices[0].kind, "cuda");
  EXPECT_EQ(tiertest::committed_tier("T3p").devices.at(0).name, "RTX 4060");
  EXPECT_EQ(tiertest::committed_tier("T1").budget_data_mib.value_or(0), 20.0);
  EXPECT_EQ(tiertest::committed_tier("T7").kind, "package");
}

TEST(TierSpec, AFileThatDoesNotParseIsNamedWithLineAndColumn) {
  tiertest::TempDir dir;
  tiertest::spit(dir / "T9.json", "{\n  \"schema\": \"mmaemu-tier/1\",\n  \"name\": T9\n}\n");
  const std::string m = message_of([&] { load_tier_file(dir / "T9.json"); });
  EXPECT_NE(m.find("T9.json:3:"), std::string::npos) << m;
  EXPECT_THROW(load_tiers(dir.path()), TierFileError);
}

TEST(TierSpec, SchemaViolationsNameTheKey) {
  tiertest::TempDir dir;
  std::string text = kGood;
  tiertest::spit(dir / "T9.json", text);
  EXPECT_EQ(load_tier_file(dir / "T9.json").kind, "replay");

  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = kGood;
    t.replace(t.find(from), from.size(), to);
    tiertest::spit(dir / "T9.json", t);
    return message_of([&] { load_tier_file(dir / "T9.json"); });
  };
  EXPECT_NE(with("\"replay\"", "\"pytest\"").find("'run.kind' is 'pytest'"), std::string::npos);
  EXPECT_NE(with("\"name\": \"T9\"", "\"name\": \"T8\"").find("must equal the file's stem"),
            std::string::npos);
  EXPECT_NE(with("\"when\"", "\"whne\"").find("'when' is missing"), std::string::npos);
  EXPECT_NE(with("\"needs\": {}", "\"needs\": {\"gpu\": true}").find("'needs.gpu' is not a key"),
            std::string::npos);
  EXPECT_NE(with("{\"seconds\": 10}", "{\"seconds\": -1}").find("'budget.seconds'"),
            std::string::npos);
  EXPECT_NE(with("\"needs\": {}", "\"needs\": {\"devices\": [{\"kind\": \"tpu\", \"why\": \"x\"}]}")
                .find("only 'cuda'"),
            std::string::npos);
}

TEST(TierSpec, AnUnknownTierListsTheKnownOnes) {
  const auto tiers = load_tiers(tiertest::committed_tiers());
  const std::string m = message_of([&] { find_tier(tiers, "T5"); });
  EXPECT_NE(m.find("'T5'"), std::string::npos);
  EXPECT_NE(m.find("T0, T1, T1s"), std::string::npos) << m;
  EXPECT_THROW(load_tiers(tiertest::committed_tiers() / "absent"), TierFileError);
}

TEST(Shard, ParsesKOverNAndRejectsTheRestNamingTheOption) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  EXPECT_TRUE(s.selects(1));
  EXPECT_TRUE(s.selects(6));
  EXPECT_FALSE(s.selects(2));
  for (const char* bad : {"0/4", "5/4", "1/0", "x/4", "1-4", "1/", "/4", "-1/4", "1/4x"}) {
    const std::string m = message_of([&] { parse_shard(bad); });
    EXPECT_NE(m.find("--shard: '" + std::string(bad) + "'"), std::string::npos) << m;
  }
}

} // namespace
} // namespace mmaemu::harness
