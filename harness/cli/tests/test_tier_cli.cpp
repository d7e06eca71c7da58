// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu tier` and `mmaemu report` as a maintainer runs them: exit statuses, logs in the
// folder given (never the repository's docs/), signatures, verification, merge and the
// release report. Each test writes only into its own temporary folder.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "mmaemu/recordings/recording.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"
#include "tier_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tiertest::run_mmaemu;

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file())
      ++n;
  }
  return n;
}

class TierCli : public ::testing::Test {
protected:
  void SetUp() override {
    logs = tmp / "logs";
    keys = tmp / "keys";
    fs::create_directories(keys);
    const auto r = run_mmaemu({"report", "keygen", "--out", (tmp / "signer.pem").string()});
    ASSERT_EQ(r.status, 0) << r.err;
    fs::rename(tmp / "signer.pub", keys / "signer.pub");
    date_dir = logs / mmaemu::reports::utc_date();
  }
  std::map<std::string, std::string> signing() const {
    return {{"MMAEMU_SIGNING_KEY", (tmp / "signer.pem").string()}};
  }
  tiertest::TempDir tmp;
  fs::path logs, keys, date_dir;
};

TEST_F(TierCli, ListShowsEveryTierAndWhyItCannotRunHere) {
  const auto r = run_mmaemu({"tier", "list"}, {}, tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* t :
       {"T0 ", "T1 ", "T1s", "T2 ", "T3 ", "T3p", "T4 ", "T4g", "T6 ", "T6g", "T7 "}) {
    EXPECT_NE(r.out.find(t), std::string::npos) << t << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("MMAEMU_TRUTH_DIR"), std::string::npos) << r.out;
  const auto j = run_mmaemu({"tier", "list", "--json", "-"});
  ASSERT_EQ(j.status, 0);
  EXPECT_EQ(json::parse(j.out).size(), 11u);
}

// The table's columns are sized to their text and wrap: every word of every title and "when"
// is there whole, and no line is wider than the width asked for.
TEST_F(TierCli, ListWrapsItsColumnsInsteadOfCuttingThem) {
  const auto r = run_mmaemu({"tier", "list", "--json", "-"}, {{"COLUMNS", "90"}});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = r.err; // with --json -, the table is on stderr
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    EXPECT_LE(line.size(), 90u) << line;
  for (const auto& t : json::parse(r.out)) {
    for (const char* key : {"title", "when"}) {
      std::istringstream words(t.at(key).get<std::string>());
      for (std::string w; words >> w;) {
        // A whole word: an occurrence with a space or a line break on both sides.
        bool whole = false;
        for (auto at = text.find(w); at != std::string::npos && !whole; at = text.find(w, at + 1)) {
          const char before = at == 0 ? ' ' : text[at - 1];
          const char after = at + w.size() < text.size() ? text[at + w.size()] : ' ';
          whole = (before == ' ' || before == '\n') && (after == ' ' || after == '\n');
        }
        EXPECT_TRUE(whole) << "'" << w << "' of " << t.at("name") << " is cut:\n" << text;
      }
    }
  }
}

TEST_F(TierCli, T1PassesWritesAnUnsignedCanonicalLogAndJunit) {
  const auto r = run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string(), "--json", "-",
                             "--junit", (tmp / "t1.xml").string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json summary = json::parse(r.out); // stdout is only the JSON
  EXPECT_EQ(summary["verdict"], "PASS");
  EXPECT_EQ(summary["signed"], false);
  const fs::path log = summary["log"].get<std::string>();
  EXPECT_EQ(log, date_dir / "T1.json");
  const std::string bytes = tiertest::slurp(log);
  const json j = json::parse(bytes);
  EXPECT_EQ(mmaemu::reports::canonical_dump(j), bytes);
  EXPECT_EQ(j["signed"], false);
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["format"], "mmaemu-validation-log/1");
  for (const char* key : {"mmaemu", "git", "command_line", "host", "gpu", "environment", "inputs",
                          "seeds", "cases", "sets", "totals", "durations", "tier_file"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["gpu"]["present"].is_boolean(), true);
  EXPECT_FALSE(fs::exists(log.string() + ".sig"));
  EXPECT_NE(tiertest::slurp(tmp / "t1.xml").find("<testsuite name=\"T1\""), std::string::npos);
  // A second run the same day gets its own file.
  ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()}).status, 0);
  EXPECT_TRUE(fs::exists(date_dir / "T1-2.json"));
  EXPECT_EQ(tiertest::slurp(log), bytes);
}

TEST_F(TierCli, SignedLogsVerifyAndTamperingIsCaught) {
  const auto r = run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()}, signing());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fs::path log = date_dir / "T1.json";
  ASSERT_TRUE(fs::exists(log.string() + ".sig"));
  EXPECT_EQ(json::parse(tiertest::slurp(log))["signed"], true);
  const auto ok = run_mmaemu({"report", "verify", logs.string(), "--keys", keys.string()});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;

  std::string bytes = tiertest::slurp(log);
  const auto at = bytes.find("\"PASS\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = 'F'; // "FASS"
  tiertest::spit(log, bytes);
  const auto bad = run_mmaemu({"report", "verify", logs.string(), "--keys", keys.string()});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find(log.string()), std::string::npos) << bad.err;
}

TEST_F(TierCli, UnsignedUntrustedOrTruncatedSignaturesFailVerification) {
  ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()}).status, 0);
  auto v =
      run_mmaemu({"report", "verify", (date_dir / "T1.json").string(), "--keys", keys.string()});
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.out.find("unsigned"), std::string::npos) << v.out;

  ASSERT_EQ(run_mmaemu({"report", "keygen", "--out", (tmp / "stranger.pem").string()}).status, 0);
  ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()},
                       {{"MMAEMU_SIGNING_KEY", (tmp / "stranger.pem").string()}})
                .status,
            0);
  v = run_mmaemu({"report", "verify", (date_dir / "T1-2.json").string(), "--keys", keys.string()});
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.out.find("not among the trusted keys"), std::string::npos) << v.out;

  ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()}, signing()).status, 0);
  const fs::path sig = date_dir / "T1-3.json.sig";
  const std::string s = tiertest::slurp(sig);
  tiertest::spit(sig, s.substr(0, s.size() / 2));
  v = run_mmaemu({"report", "verify", (date_dir / "T1-3.json").string(), "--keys", keys.string()});
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.out.find("truncated"), std::string::npos) << v.out;
  fs::remove(sig);
  v = run_mmaemu({"report", "verify", (date_dir / "T1-3.json").string(), "--keys", keys.string()});
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.out.find("missing"), std::string::npos) << v.out;
}

TEST_F(TierCli, UnsupportedTiersExitFourAndSaySoInTheLog) {
  const auto r = run_mmaemu({"tier", "run", "T2", "--log-dir", logs.string()});
  EXPECT_EQ(r.status, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("UNSUPPORTED: needs MMAEMU_TRUTH_DIR"), std::string::npos) << r.out;
  const json j = json::parse(tiertest::slurp(date_dir / "T2.json"));
  EXPECT_EQ(j["verdict"], "UNSUPPORTED");
  EXPECT_EQ(j["totals"]["PASS"], 0);
}

TEST_F(TierCli, BadInputIsExitTwoWithoutAnyLog) {
  // A log folder that cannot exist (under a regular file).
  tiertest::spit(tmp / "plain", "x");
  auto r = run_mmaemu({"tier", "run", "T1", "--log-dir", (tmp / "plain" / "logs").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("plain"), std::string::npos) << r.err;
  // A tier file that does not parse.
  fs::create_directories(tmp / "tiers");
  fs::copy(tiertest::committed_tiers() / "T0.json", tmp / "tiers" / "T0.json");
  tiertest::spit(tmp / "tiers" / "T1.json", "{ \"schema\": ");
  r = run_mmaemu({"tier", "run", "T0", "--tiers", (tmp / "tiers").string(), "--trust-tiers",
                  "--log-dir", logs.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("T1.json:1:"), std::string::npos) << r.err;
  // A signing key that is not one.
  tiertest::spit(tmp / "junk.pem", "junk");
  r = run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()},
                 {{"MMAEMU_SIGNING_KEY", (tmp / "junk.pem").string()}});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("MMAEMU_SIGNING_KEY"), std::string::npos) << r.err;
  // A bad shard and an unknown tier.
  EXPECT_EQ(run_mmaemu({"tier", "run", "T1", "--shard", "3/2", "--no-log"}).status, 2);
  EXPECT_EQ(run_mmaemu({"tier", "run", "T5", "--no-log"}).status, 2);
  EXPECT_EQ(count_files(logs), 0u);
}

TEST_F(TierCli, ShardLogsMergeAndTheMergedLogIsSigned) {
  for (const char* s : {"1/2", "2/2"}) {
    ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--shard", s, "--log-dir", logs.string()}, signing())
                  .status,
              0);
  }
  const auto m = run_mmaemu({"report", "merge", (date_dir / "T1-shard1of2.json").string(),
                             (date_dir / "T1-shard2of2.json").string(), "--keys", keys.string()},
                            signing());
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  const json merged = json::parse(tiertest::slurp(date_dir / "T1.json"));
  EXPECT_EQ(merged["verdict"], "PASS");
  EXPECT_TRUE(merged["shard"].is_null());
  EXPECT_EQ(merged["merged_from"].size(), 2u);
  for (const auto& s : merged["sets"]) {
    EXPECT_EQ(s["outcomes"].get<std::string>().size(), s["cases_total"].get<std::size_t>());
  }
  EXPECT_EQ(run_mmaemu({"report", "verify", logs.string(), "--keys", keys.string()}).status, 0);
  // Only one shard: refused.
  EXPECT_EQ(run_mmaemu({"report", "merge", (date_dir / "T1-shard1of2.json").string()}).status, 2);
}

TEST_F(TierCli, ReleaseReportGathersTheDateAndFailsWhileRequiredTiersAreMissing) {
  ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()}, signing()).status, 0);
  ASSERT_EQ(run_mmaemu({"tier", "run", "T2", "--log-dir", logs.string()}, signing()).status, 4);
  const std::string date = mmaemu::reports::utc_date();
  // The working tree may be dirty while this runs (a developer's tree): take its logs anyway.
  const auto r =
      run_mmaemu({"report", "release", "--date", date, "--log-dir", logs.string(), "--keys",
                  keys.string(), "--out", (tmp / "rel").string(), "--allow-other-commit"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const std::string md = tiertest::slurp(tmp / "rel/release.md");
  EXPECT_NE(md.find("Verdict: **FAIL**"), std::string::npos);
  EXPECT_NE(md.find("| T1 | hw\\_mini replay | yes | **PASS**"), std::string::npos) << md;
  EXPECT_NE(md.find("T0 (required): no whole-run log"), std::string::npos) << md;
  EXPECT_NE(md.find("T2 (required): UNSUPPORTED: needs MMAEMU\\_TRUTH\\_DIR"), std::string::npos)
      << md;
  const std::string html = tiertest::slurp(tmp / "rel/release.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(
      run_mmaemu({"report", "release", "--date", "2026-13-01", "--log-dir", logs.string()}).status,
      2);
}

TEST_F(TierCli, ReleaseReportRefusesALogOfAnotherCommitNamingTheFlag) {
  ASSERT_EQ(run_mmaemu({"tier", "run", "T1", "--log-dir", logs.string()}).status, 0);
  const fs::path log = date_dir / "T1.json";
  json j = json::parse(tiertest::slurp(log));
  j["git"] = {{"commit", std::string(40, '0')}, {"dirty", false}};
  tiertest::spit(log, mmaemu::reports::canonical_dump(j));
  const std::string date = mmaemu::reports::utc_date();
  const std::vector<std::string> args = {
      "report",      "release", "--date",      date,    "--log-dir",
      logs.string(), "--keys",  keys.string(), "--out", (tmp / "rel").string()};
  const auto r = run_mmaemu(args);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("T1.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::string(40, '0')), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-other-commit"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "rel/release.md")) << "a refused report was written";
  std::vector<std::string> allowed = args;
  allowed.push_back("--allow-other-commit");
  const auto a = run_mmaemu(allowed);
  EXPECT_EQ(a.status, 1) << a.out << a.err; // written, and FAIL: the required tiers are missing
  EXPECT_NE(tiertest::slurp(tmp / "rel/release.md").find(std::string(40, '0')), std::string::npos);
}

// A T1 run over recordings whose every case is out of scope tested nothing: UNSUPPORTED (exit
// 4), not PASS, and the data budget that holds adds no PASS to the log's totals.
TEST_F(TierCli, T1OverOutOfScopeRecordingsIsUnsupported) {
  auto rec = mmaemu::recordings::read_recording(tiertest::committed_recordings() / "public" /
                                                "H100_E4M3.h5");
  for (auto& e : rec.mma.at(0).expect)
    e = ~e;
  rec.mma.at(0).attrs["scope"] = "out";
  fs::create_directories(tmp / "rec");
  mmaemu::recordings::write_recording(tmp / "rec/scoped.h5", rec);
  const auto r = run_mmaemu({"tier", "run", "T1", "--recordings", (tmp / "rec").string(),
                             "--log-dir", logs.string(), "--json", "-"});
  EXPECT_EQ(r.status, 4) << r.out << r.err;
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["verdict"], "UNSUPPORTED");
  const json log = json::parse(tiertest::slurp(date_dir / "T1.json"));
  EXPECT_EQ(log["verdict"], "UNSUPPORTED");
  EXPECT_EQ(log["totals"]["PASS"], 0);
  EXPECT_EQ(log["totals"]["UNSUPPORTED"], 5000);
  EXPECT_EQ(log["details"]["checks"][0]["id"], "T1/data_budget");
}

TEST_F(TierCli, KeygenWritesAPrivateKeyOnlyItsOwnerReadsAndNeverOverwrites) {
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "signer.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto again = run_mmaemu({"report", "keygen", "--out", (tmp / "signer.pem").string()});
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("refusing to overwrite"), std::string::npos) << again.err;
}

} // namespace
