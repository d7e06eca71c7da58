// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

#include "log_fixtures.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;

class Release : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directory(tmp / "keys");
    const auto kf = generate_key(tmp / "k.pem");
    fs::rename(kf.public_key, tmp / "keys/k.pub");
    key = load_private_key(kf.private_key);
    keys = load_trusted_keys(tmp / "keys");
    dir = prepare_log_dir(tmp / "logs", date);
  }
  const std::string date = "2026-01-02";
  const std::vector<ReleaseTier> tiers = {
      {"T0", "unit", true}, {"T1", "hw_mini", true}, {"T3", "GPU", false}};
  testing::TempDir tmp;
  Key key;
  TrustedKeys keys;
  fs::path dir;
};

TEST_F(Release, PassesWhenEveryRequiredTierPassedAndEveryLogVerifies) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  publish_log(testing::tiny_log("T1", "PASS"), dir, "T1", &key);
  auto t3 = testing::tiny_log("T3", "UNSUPPORTED", 0);
  t3["reason"] = "needs a CUDA device";
  publish_log(t3, dir, "T3", &key);
  const auto r = build_release_report(tmp / "logs", date, tiers, keys);
  EXPECT_EQ(r.verdict, "PASS") << (r.reasons.empty() ? "" : r.reasons[0]);
  EXPECT_EQ(r.rows[2].status, "UNSUPPORTED");
  const std::string md = release_markdown(r);
  EXPECT_NE(md.find("Verdict: **PASS**"), std::string::npos);
  EXPECT_NE(md.find("needs a CUDA device"), std::string::npos);
  const std::string html = release_html(r);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST_F(Release, AMissingRequiredTierFails) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  const auto r = build_release_report(tmp / "logs", date, tiers, keys);
  EXPECT_EQ(r.verdict, "FAIL");
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_NE(r.reasons[0].find("T1 (required)"), std::string::npos) << r.reasons[0];
  EXPECT_EQ(r.rows[1].status, "MISSING");
}

TEST_F(Release, AnUnsignedLogFailsTheReleaseEvenIfItPassed) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  publish_log(testing::tiny_log("T1", "PASS"), dir, "T1");
  const auto r = build_release_report(tmp / "logs", date, tiers, keys);
  EXPECT_EQ(r.verdict, "FAIL");
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_NE(r.reasons[0].find("T1.json: does not verify"), std::string::npos) << r.reasons[0];
}

TEST_F(Release, TheLatestRunOfATierCountsAndShardLogsDoNot) {
  auto old_fail = testing::tiny_log("T0", "FAIL", 2, 1);
  old_fail["durations"]["finished_utc"] = "2026-01-02T01:00:00Z";
  publish_log(old_fail, dir, "T0", &key);
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  auto shard = testing::tiny_log("T1", "PASS");
  shard["shard"] = {{"index", 1}, {"count", 2}};
  publish_log(shard, dir, "T1-shard1of2", &key);
  const auto r = build_release_report(tmp / "logs", date, tiers, keys);
  EXPECT_EQ(r.rows[0].status, "PASS");
  EXPECT_EQ(r.rows[1].status, "MISSING");
  EXPECT_EQ(r.verdict, "FAIL");
}

TEST_F(Release, BenchmarksAreDrawnAgainstTheirTargets) {
  auto t6 = testing::tiny_log("T6", "PASS");
  t6["benchmarks"] = nlohmann::json::array({{{"name", "dot<K=32>"},
                                             {"value", 2.0e8},
                                             {"unit", "MAC/s"},
                                             {"target", 1.0e8},
                                             {"better", "higher"}},
                                            {{"name", "gemm<1024>"},
                                             {"value", 3.0},
                                             {"unit", "s"},
                                             {"target", 2.0},
                                             {"better", "lower"}}});
  publish_log(t6, dir, "T6", &key);
  const auto r = build_release_report(tmp / "logs", date, {{"T6", "performance", false}}, keys);
  const std::string html = release_html(r);
  EXPECT_NE(html.find("dot&lt;K=32&gt;"), std::string::npos); // escaped
  EXPECT_NE(html.find("NOT met"), std::string::npos);
  const std::string md = release_markdown(r);
  EXPECT_NE(md.find("| T6 | gemm<1024> | 3 | 2 | s | lower | no |"), std::string::npos) << md;
}

TEST_F(Release, AnAbsentDateIsAnErrorNamingIt) {
  try {
    build_release_report(tmp / "logs", "2030-12-31", tiers, keys);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2030-12-31"), std::string::npos);
  }
}

} // namespace
} // namespace mmaemu::reports
