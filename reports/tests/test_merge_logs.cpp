// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

#include <limits>

#include "log_fixtures.hpp"
#include "mmaemu/reports/merge_logs.hpp"

namespace mmaemu::reports {
namespace {

using nlohmann::json;

// Shard k of n over one set of `total` cases whose letters are `all`.
ShardLog shard(std::size_t k, std::size_t n, const std::string& all, const std::string& verdict) {
  json log = testing::tiny_log("T1", verdict);
  log["shard"] = {{"index", k}, {"count", n}};
  std::string mine;
  std::size_t passed = 0, failed = 0;
  for (std::size_t i = k - 1; i < all.size(); i += n) {
    mine += all[i];
    (all[i] == 'P' ? passed : failed)++;
  }
  log["sets"] = json::array({{{"sha256", "aa"},
                              {"set", "S"},
                              {"cases_total", all.size()},
                              {"cases", mine.size()},
                              {"passed", passed},
                              {"failed", failed},
                              {"errors", 0},
                              {"seconds", 0.5},
                              {"outcomes", mine}}});
  log["totals"] = {{"cases", mine.size()}, {"PASS", passed}, {"FAIL", failed}};
  log["cases"] = json::array({{{"id", "case-" + std::to_string(k)}, {"outcome", "PASS"}}});
  log["inputs"] = json::array({{{"path", "public/a.h5"}, {"sha256", "aa"}}});
  return {"T1-shard" + std::to_string(k) + "of" + std::to_string(n) + ".json",
          "f" + std::to_string(k), log};
}

TEST(MergeShardLogs, InterleavesOutcomesAndSumsTotals) {
  const std::string all = "PPFPPPPFPPP"; // 11 cases over 3 shards
  const json m = merge_shard_logs(
      {shard(2, 3, all, "FAIL"), shard(1, 3, all, "FAIL"), shard(3, 3, all, "PASS")});
  EXPECT_TRUE(m["shard"].is_null());
  EXPECT_EQ(m["sets"][0]["outcomes"], all);
  EXPECT_EQ(m["sets"][0]["cases"], 11);
  EXPECT_EQ(m["totals"]["cases"], 11);
  EXPECT_EQ(m["totals"]["FAIL"], 2);
  EXPECT_EQ(m["totals"]["PASS"], 9);
  EXPECT_EQ(m["verdict"], "FAIL");
  ASSERT_EQ(m["merged_from"].size(), 3u);
  EXPECT_EQ(m["merged_from"][0]["shard"], "1/3");
  ASSERT_EQ(m["cases"].size(), 3u);
  EXPECT_EQ(m["cases"][0]["id"], "case-1");
  EXPECT_EQ(m["inputs"].size(), 1u);
  EXPECT_NEAR(m["durations"]["seconds"].get<double>(), 4.5, 1e-9); // a sum of durations, not bits
  EXPECT_FALSE(m.contains("signed"));
}

// Crafted shard logs whose counts reach the end of long long saturate in the sum (a signed
// overflow would be undefined behaviour, which the sanitizer build stops on).
TEST(MergeShardLogs, CountsAtTheEndOfLongLongSaturate) {
  const std::string all = "PPPP";
  auto a = shard(1, 2, all, "PASS"), b = shard(2, 2, all, "PASS");
  constexpr long long kMax = std::numeric_limits<long long>::max();
  a.log["totals"]["PASS"] = kMax;
  b.log["totals"]["PASS"] = kMax;
  a.log["sets"][0]["passed"] = kMax;
  b.log["sets"][0]["passed"] = kMax;
  const json m = merge_shard_logs({a, b});
  EXPECT_EQ(m["totals"]["PASS"].get<long long>(), kMax);
  EXPECT_EQ(m["sets"][0]["passed"].get<long long>(), kMax);
}

TEST(MergeShardLogs, AllPassingShardsMergeToPass) {
  const std::string all = "PPPPP";
  const json m = merge_shard_logs({shard(1, 2, all, "PASS"), shard(2, 2, all, "PASS")});
  EXPECT_EQ(m["verdict"], "PASS");
  EXPECT_EQ(m["sets"][0]["outcomes"], all);
}

TEST(MergeShardLogs, AnEmptyShardDoesNotSpoilTheOthers) {
  const std::string all = "PP";
  auto s3 = shard(3, 3, all, "UNSUPPORTED");
  s3.log["reason"] = "empty shard: shard 3/3 selects no case";
  const json m = merge_shard_logs({shard(1, 3, all, "PASS"), shard(2, 3, all, "PASS"), s3});
  EXPECT_EQ(m["verdict"], "PASS");
}

TEST(MergeShardLogs, AMissingOrRepeatedShardIsRefusedNamingIt) {
  const std::string all = "PPPP";
  try {
    merge_shard_logs({shard(1, 3, all, "PASS"), shard(2, 3, all, "PASS")});
    FAIL() << "no exception";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("2 logs"), std::string::npos) << e.what();
  }
  try {
    merge_shard_logs({shard(1, 2, all, "PASS"), shard(1, 2, all, "PASS")});
    FAIL() << "no exception";
  } catch (const MergeError& e) {
    EXPECT_NE(std::string(e.what()).find("given twice"), std::string::npos) << e.what();
  }
}

TEST(MergeShardLogs, ShardsOfDifferentCommitsOrTiersAreRefused) {
  const std::string all = "PPPP";
  auto b = shard(2, 2, all, "PASS");
  b.log["git"]["commit"] = "ffff";
  EXPECT_THROW(merge_shard_logs({shard(1, 2, all, "PASS"), b}), MergeError);
  auto c = shard(2, 2, all, "PASS");
  c.log["tier"] = "T0";
  EXPECT_THROW(merge_shard_logs({shard(1, 2, all, "PASS"), c}), MergeError);
  auto d = shard(2, 2, all, "PASS");
  d.log["inputs"][0]["sha256"] = "bb";
  EXPECT_THROW(merge_shard_logs({shard(1, 2, all, "PASS"), d}), MergeError);
  auto whole = shard(1, 1, all, "PASS");
  whole.log["shard"] = nullptr;
  EXPECT_THROW(merge_shard_logs({whole}), MergeError);
}

// A collected run (MergeOptions::count) as an engine leaves it.
MergeOptions run_of(std::size_t n) {
  MergeOptions o;
  o.count = n;
  return o;
}

TEST(MergeShardLogs, AMissingShardIsUnsupportedNamedAndItsCasesAreU) {
  const std::string all = "PPFPPPPFPPP"; // 11 cases over 3 shards; shard 2 holds 1, 4, 7, 10
  MergeOptions o = run_of(3);
  o.why_missing[2] = "cancelled: its task was stopped midway";
  const json m = merge_shard_logs({shard(1, 3, all, "FAIL"), shard(3, 3, all, "PASS")}, o);
  // The expected letters: shard 2's positions (i % 3 == 1) replaced by U, by hand.
  EXPECT_EQ(m["sets"][0]["outcomes"], "PUFPUPPUPPU");
  EXPECT_EQ(m["sets"][0]["missing"], 4);
  EXPECT_EQ(m["sets"][0]["cases"], 11);
  EXPECT_EQ(m["totals"]["UNSUPPORTED"], 4);
  EXPECT_EQ(m["totals"]["cases"], 11);
  EXPECT_EQ(m["verdict"], "FAIL"); // the worst present shard, and the missing one named
  EXPECT_NE(m["reason"].get<std::string>().find("no log of shard 2/3 (cancelled"),
            std::string::npos)
      << m["reason"];
  ASSERT_EQ(m["missing_shards"].size(), 1u);
  EXPECT_EQ(m["missing_shards"][0]["shard"], "2/3");
  EXPECT_EQ(m["missing_shards"][0]["why"], "cancelled: its task was stopped midway");
  bool named = false;
  for (const auto& c : m["cases"])
    named = named || (c["id"] == "T1/shard2of3" && c["outcome"] == "UNSUPPORTED");
  EXPECT_TRUE(named) << m["cases"].dump();
  EXPECT_EQ(m["merged_from"].size(), 2u);
}

TEST(MergeShardLogs, AnIncompleteRunOfPassingShardsIsUnsupportedNeverPass) {
  const std::string all = "PPPPPP";
  const json m = merge_shard_logs({shard(1, 2, all, "PASS")}, run_of(2));
  EXPECT_EQ(m["verdict"], "UNSUPPORTED");
  EXPECT_EQ(m["sets"][0]["outcomes"], "PUPUPU");
  EXPECT_NE(m["reason"].get<std::string>().find("2/2"), std::string::npos) << m["reason"];
}

TEST(MergeShardLogs, AMissingShardOfATierWithoutSetsIsOneUnsupportedCase) {
  auto a = shard(1, 2, "PP", "PASS");
  a.log.erase("sets");
  a.log["totals"] = {{"cases", 1}, {"PASS", 1}};
  const json m = merge_shard_logs({a}, run_of(2));
  EXPECT_EQ(m["totals"]["cases"], 2);
  EXPECT_EQ(m["totals"]["UNSUPPORTED"], 1);
  EXPECT_FALSE(m.contains("sets"));
  EXPECT_EQ(m["verdict"], "UNSUPPORTED");
}

TEST(MergeShardLogs, AReQueuedShardCountsOnceAndItsLaterLogIsTaken) {
  const std::string all = "PPPPPP";
  auto first = shard(2, 2, "PFPFPF", "FAIL"); // the first attempt saw failures ...
  first.log["durations"]["finished_utc"] = "2026-01-02T03:04:07Z";
  auto again = shard(2, 2, all, "PASS"); // ... the re-queued one, later, did not
  again.name = "T1-shard2of2-2.json";
  again.log["durations"]["finished_utc"] = "2026-01-02T03:09:00Z";
  for (const auto& order : {std::vector<ShardLog>{shard(1, 2, all, "PASS"), first, again},
                            std::vector<ShardLog>{again, shard(1, 2, all, "PASS"), first}}) {
    const json m = merge_shard_logs(order, run_of(2));
    EXPECT_EQ(m["sets"][0]["outcomes"], all);
    EXPECT_EQ(m["totals"]["PASS"], 6);
    EXPECT_EQ(m["verdict"], "PASS");
    ASSERT_EQ(m["superseded"].size(), 1u);
    EXPECT_EQ(m["superseded"][0]["file"], "T1-shard2of2.json");
    EXPECT_EQ(m["superseded"][0]["kept"], "T1-shard2of2-2.json");
    EXPECT_EQ(m["merged_from"].size(), 2u);
    EXPECT_FALSE(m.contains("missing_shards"));
  }
  // Without a run's shard count, two logs of one shard are still refused.
  EXPECT_THROW(merge_shard_logs({shard(1, 2, all, "PASS"), first, again}), MergeError);
}

TEST(MergeShardLogs, ACollectedRunRefusesAShardOfAnotherCountAndAnEmptyOne) {
  EXPECT_THROW(merge_shard_logs({shard(1, 3, "PPP", "PASS")}, run_of(2)), MergeError);
  EXPECT_THROW(merge_shard_logs({}, run_of(2)), MergeError);
}

TEST(MergeShardLogs, EveryCountOfASetIsSummedOverTheShards) {
  auto a = shard(1, 2, "PPUU", "PASS");
  auto b = shard(2, 2, "PPUU", "PASS");
  a.log["sets"][0]["not_applicable"] = 1;
  b.log["sets"][0]["not_applicable"] = 1;
  a.log["sets"][0]["outputs"] = 7;
  b.log["sets"][0]["outputs"] = 5;
  const json m = merge_shard_logs({a, b});
  EXPECT_EQ(m["sets"][0]["not_applicable"], 2);
  EXPECT_EQ(m["sets"][0]["outputs"], 12);
  EXPECT_EQ(m["sets"][0]["cases_total"], 4);
}

TEST(ShardLogName, ParsesTheNamesOfShardLogsAndTheirRepeats) {
  std::string stem;
  std::size_t k = 0, n = 0;
  ASSERT_TRUE(parse_shard_log_name("T1-shard3of4.json", stem, k, n));
  EXPECT_EQ(stem, "T1");
  EXPECT_EQ(k, 3u);
  EXPECT_EQ(n, 4u);
  ASSERT_TRUE(parse_shard_log_name("mutants_gpu-shard1of2-3.json", stem, k, n));
  EXPECT_EQ(stem, "mutants_gpu");
  EXPECT_FALSE(parse_shard_log_name("T1.json", stem, k, n));
  EXPECT_FALSE(parse_shard_log_name("T1-shard5of4.json", stem, k, n));
  EXPECT_FALSE(parse_shard_log_name("T1-shard0of4.json", stem, k, n));
  EXPECT_FALSE(parse_shard_log_name("T1-shard1of4.json.sig", stem, k, n));
}

} // namespace
} // namespace mmaemu::reports
