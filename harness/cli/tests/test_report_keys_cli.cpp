// SPDX-License-Identifier: BSD-2-Clause
// Keys and verify on the command line: a key file that holds more than one key, or a key and
// junk, stops the command with exit 2 and one line naming the file; `report verify A B ...`
// checks and reports every argument (a dangling or missing one is an ERROR of its own line,
// and the others are still verified), its exit status the worst of them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "log_fixtures.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "tier_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using tiertest::run_mmaemu;

class ReportKeysCli : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directory(tmp / "keys");
    const auto kf = mmaemu::reports::generate_key(tmp / "k.pem");
    fs::rename(kf.public_key, tmp / "keys/k.pub");
    const auto key = mmaemu::reports::load_private_key(kf.private_key);
    fs::create_directory(tmp / "logs");
    good = mmaemu::reports::publish_log(mmaemu::testing::tiny_log("T0", "PASS"), tmp / "logs", "T0",
                                        &key)
               .log;
    unsigned_log =
        mmaemu::reports::publish_log(mmaemu::testing::tiny_log("T1", "PASS"), tmp / "logs", "T1")
            .log;
    fs::create_symlink(tmp / "nowhere.json", tmp / "dangling.json");
  }
  std::vector<std::string> verify(std::vector<std::string> paths) {
    paths.insert(paths.begin(), {"report", "verify"});
    paths.insert(paths.end(), {"--keys", (tmp / "keys").string()});
    return paths;
  }
  tiertest::TempDir tmp;
  fs::path good, unsigned_log;
};

TEST_F(ReportKeysCli, VerifyChecksEveryArgumentAfterADanglingOne) {
  const auto r = run_mmaemu(
      verify({(tmp / "dangling.json").string(), good.string(), (tmp / "missing.json").string()}));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ERROR " + (tmp / "dangling.json").string() + ": a dangling"));
  EXPECT_THAT(r.out, HasSubstr("OK    " + good.string() + ": signed by k.pub"));
  EXPECT_THAT(r.out, HasSubstr("ERROR " + (tmp / "missing.json").string()));
  EXPECT_THAT(r.out, HasSubstr("1 verified, 0 failed, 2 errors"));
}

TEST_F(ReportKeysCli, VerifyExitsWithTheWorstOfItsArguments) {
  EXPECT_EQ(run_mmaemu(verify({good.string()})).status, 0);
  const auto fail = run_mmaemu(verify({unsigned_log.string(), good.string()}));
  EXPECT_EQ(fail.status, 1) << fail.out << fail.err;
  EXPECT_THAT(fail.out, HasSubstr("1 verified, 1 failed, 0 errors"));
  // An ERROR after a FAIL still makes it 2, and both are reported.
  const auto worst = run_mmaemu(verify({unsigned_log.string(), (tmp / "dangling.json").string()}));
  EXPECT_EQ(worst.status, 2);
  EXPECT_THAT(worst.out, HasSubstr("FAIL  " + unsigned_log.string()));
  EXPECT_THAT(worst.out, HasSubstr("ERROR " + (tmp / "dangling.json").string()));
  // A folder without logs is an ERROR of its own line too, not a stop.
  fs::create_directory(tmp / "empty");
  const auto empty = run_mmaemu(verify({(tmp / "empty").string(), good.string()}));
  EXPECT_EQ(empty.status, 2);
  EXPECT_THAT(empty.out, HasSubstr("OK    " + good.string()));
}

TEST_F(ReportKeysCli, ATrustedKeyWithJunkOrTwoKeysIsExit2NamingTheFile) {
  const std::string pub = tiertest::slurp(tmp / "keys/k.pub");
  for (const std::string& text : {pub + "junk\n", pub + pub}) {
    tiertest::spit(tmp / "keys/k.pub", text);
    const auto r = run_mmaemu(verify({good.string()}));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr("k.pub: holds"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(ReportKeysCli, ASigningKeyOfTwoKeysOrWithJunkStopsTheTierRunBeforeItRuns) {
  const std::string priv = tiertest::slurp(tmp / "k.pem");
  for (const std::string& text : {priv + priv, priv + "junk"}) {
    tiertest::spit(tmp / "bad.pem", text);
    ::chmod((tmp / "bad.pem").c_str(), 0600);
    const auto r = run_mmaemu({"tier", "run", "T0", "--log-dir", (tmp / "tierlogs").string()},
                              {{"MMAEMU_SIGNING_KEY", (tmp / "bad.pem").string()}});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("MMAEMU_SIGNING_KEY: " + (tmp / "bad.pem").string() + ": holds"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    // No log was written (and so none signed with the first key).
    std::size_t logs = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(tmp / "tierlogs", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      logs += it->path().extension() == ".json";
    EXPECT_EQ(logs, 0u);
  }
}

} // namespace
