// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

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

} // namespace
} // namespace mmaemu::reports
