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
  // The fixture logs' commit (log_fixtures.hpp), clean: the report's HEAD.
  const ReleaseOptions at_head{"0123456789abcdef", "", false};
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
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, at_head);
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
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, at_head);
  EXPECT_EQ(r.verdict, "FAIL");
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_NE(r.reasons[0].find("T1 (required)"), std::string::npos) << r.reasons[0];
  EXPECT_EQ(r.rows[1].status, "MISSING");
}

TEST_F(Release, AnUnsignedLogFailsTheReleaseEvenIfItPassed) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  publish_log(testing::tiny_log("T1", "PASS"), dir, "T1");
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, at_head);
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
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, at_head);
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
  const auto r =
      build_release_report(tmp / "logs", date, {{"T6", "performance", false}}, keys, at_head);
  const std::string html = release_html(r);
  EXPECT_NE(html.find("dot&lt;K=32&gt;"), std::string::npos); // escaped
  EXPECT_NE(html.find("NOT met"), std::string::npos);
  const std::string md = release_markdown(r);
  EXPECT_NE(md.find("| T6 | gemm\\<1024\\> | 3 | 2 | s | lower | no |"), std::string::npos) << md;
}

TEST_F(Release, ARequiredTierWhoseLogSaysPassButRanNoCaseIsNotPass) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  // A log written by a runner that counted nothing run as PASS: 5000 UNSUPPORTED, 0 run.
  auto t1 = testing::tiny_log("T1", "PASS", 0);
  t1["totals"]["UNSUPPORTED"] = 5000;
  t1["totals"]["cases"] = 5000;
  publish_log(t1, dir, "T1", &key);
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, at_head);
  EXPECT_EQ(r.rows[1].status, "UNSUPPORTED");
  EXPECT_EQ(r.verdict, "FAIL");
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_NE(r.reasons[0].find("T1 (required): UNSUPPORTED"), std::string::npos) << r.reasons[0];
  EXPECT_NE(r.reasons[0].find("no case ran"), std::string::npos) << r.reasons[0];
  EXPECT_NE(release_markdown(r).find("| T1 | hw\\_mini | yes | **UNSUPPORTED**"), std::string::npos)
      << release_markdown(r);
}

TEST_F(Release, ALogOfAnotherCommitIsRefusedNamingTheFlag) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  auto old = testing::tiny_log("T1", "PASS");
  old["git"]["commit"] = "fedcba9876543210";
  publish_log(old, dir, "T1", &key);
  try {
    build_release_report(tmp / "logs", date, tiers, keys, at_head);
    FAIL() << "a log of another commit was taken";
  } catch (const ReleaseRefused& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("T1.json"), std::string::npos) << m;
    EXPECT_NE(m.find("fedcba9876543210"), std::string::npos) << m;
    EXPECT_NE(m.find("0123456789abcdef"), std::string::npos) << m;
    EXPECT_NE(m.find("--allow-other-commit"), std::string::npos) << m;
  }
  ReleaseOptions allow = at_head;
  allow.allow_other_commit = true;
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, allow);
  EXPECT_EQ(r.commit, "0123456789abcdef");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("T1.json: made at commit fedcba9876543210"), std::string::npos)
      << r.notes[0];
  EXPECT_NE(release_markdown(r).find("--allow-other-commit"), std::string::npos);
  EXPECT_NE(release_html(r).find("fedcba9876543210"), std::string::npos);
}

TEST_F(Release, ALogOfADirtyTreeIsRefusedAndSaysSo) {
  auto dirty = testing::tiny_log("T0", "PASS");
  dirty["git"]["dirty"] = true;
  publish_log(dirty, dir, "T0", &key);
  try {
    build_release_report(tmp / "logs", date, tiers, keys, at_head);
    FAIL() << "a log of a dirty tree was taken";
  } catch (const ReleaseRefused& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("T0.json"), std::string::npos) << m;
    EXPECT_NE(m.find("dirty"), std::string::npos) << m;
    EXPECT_NE(m.find("--allow-other-commit"), std::string::npos) << m;
  }
  // Not known to be clean (git could not tell) is not clean either.
  auto unknown = testing::tiny_log("T0", "PASS");
  unknown["git"]["dirty"] = nullptr;
  fs::remove(dir / "T0.json");
  fs::remove(dir / "T0.json.sig");
  publish_log(unknown, dir, "T0", &key);
  EXPECT_THROW(build_release_report(tmp / "logs", date, tiers, keys, at_head), ReleaseRefused);
}

TEST_F(Release, AnUnknownHeadRefusesUnlessAllowed) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  const ReleaseOptions unknown{"unknown", "no source tree (installed binary)", false};
  try {
    build_release_report(tmp / "logs", date, tiers, keys, unknown);
    FAIL() << "logs taken without a commit to check them against";
  } catch (const ReleaseRefused& e) {
    EXPECT_NE(std::string(e.what()).find("installed binary"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--allow-other-commit"), std::string::npos) << e.what();
  }
  ReleaseOptions allow = unknown;
  allow.allow_other_commit = true;
  const auto r = build_release_report(tmp / "logs", date, tiers, keys, allow);
  EXPECT_EQ(r.commit, "unknown");
  EXPECT_EQ(r.notes.size(), 1u);
}

// A log whose fields have other types than a log's (a crafted or damaged file: "tier" a number,
// "host" a string, "shard" with text counts) is listed with fallbacks: the report over the
// folder is still written, and the well-formed logs beside it count as before.
TEST_F(Release, ALogWithFieldsOfTheWrongTypeIsListedAndStopsNothing) {
  publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &key);
  publish_log(testing::tiny_log("T1", "PASS"), dir, "T1", &key);
  auto odd = testing::tiny_log("T3", "PASS");
  odd["verdict"] = 7;
  odd["reason"] = nlohmann::json::array({"x"});
  odd["host"] = "not an object";
  odd["mmaemu"] = 3;
  odd["git"] = nlohmann::json::array();
  odd["durations"] = {{"seconds", "long"}, {"finished_utc", 12}};
  odd["totals"] = {
      {"cases", "many"}, {"PASS", 9223372036854775807LL}, {"FAIL", 9223372036854775807LL}};
  odd["benchmarks"] = nlohmann::json::object({{"name", 1}});
  publish_log(odd, dir, "T3", &key);
  auto shard = testing::tiny_log("T5", "PASS");
  shard["tier"] = 5;
  shard["shard"] = {{"index", "one"}, {"count", -1}};
  publish_log(shard, dir, "T5", &key);
  ReleaseReport r;
  ASSERT_NO_THROW(
      r = build_release_report(tmp / "logs", date, tiers, keys, {"0123456789abcdef", "", true}));
  EXPECT_EQ(r.rows[0].status, "PASS");
  EXPECT_EQ(r.rows[1].status, "PASS");
  EXPECT_EQ(r.rows[2].status, "?"); // T3's verdict is not text
  std::string md, html;
  ASSERT_NO_THROW(md = release_markdown(r));
  ASSERT_NO_THROW(html = release_html(r));
  EXPECT_NE(md.find("| T3.json | T3 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| T5.json | ? | 0/-1 |"), std::string::npos) << md;
}

TEST_F(Release, AnAbsentDateIsAnErrorNamingIt) {
  try {
    build_release_report(tmp / "logs", "2030-12-31", tiers, keys, at_head);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2030-12-31"), std::string::npos);
  }
}

} // namespace
} // namespace mmaemu::reports
