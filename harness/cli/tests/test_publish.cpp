// SPDX-License-Identifier: BSD-2-Clause
// Where validation logs go: a tier run writes under the build tree (or --log-dir,
// $MMAEMU_LOG_DIR), never into the committed docs/validation_logs/ unless asked; publishing
// (`tier run --publish`, `report publish`) takes only logs that verify against the keys trusted
// there, and names the commit. Run on a copy of mmaemu in a stand-in build tree whose
// CMakeCache.txt names a stand-in source tree, so that nothing is written into the repository.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tier_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

// Every *.json under `dir` (logs), sorted.
std::vector<fs::path> logs_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().extension() == ".json")
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class Publish : public ::testing::Test {
protected:
  void SetUp() override {
    src = tmp / "src";
    build = tmp / "build";
    committed = src / "docs" / "validation_logs";
    fs::create_directories(committed / "keys");
    fs::create_directories(build / "harness");
    fs::create_directory_symlink(tiertest::committed_tiers(), src / "tiers");
    fs::create_directories(src / "recordings");
    fs::create_directory_symlink(tiertest::committed_recordings(), src / "recordings" / "data");
    tiertest::spit(build / "CMakeCache.txt",
                   "CMAKE_HOME_DIRECTORY:INTERNAL=" + src.string() + "\n");
    // A copy, not a link: the layout is found from /proc/self/exe.
    fs::copy_file(MMAEMU_BIN, mmaemu);
    fs::permissions(mmaemu, fs::perms::owner_all);
    for (const char* k : {"trusted", "stranger"}) {
      const auto r =
          tiertest::run_mmaemu({"report", "keygen", "--out", (tmp / k).string() + ".pem"});
      ASSERT_EQ(r.status, 0) << r.err;
    }
    fs::copy_file(tmp / "trusted.pub", committed / "keys" / "trusted.pub");
  }

  // The stand-in build tree's mmaemu, in the temporary folder, with `set` in its environment
  // and none of the caller's MMAEMU_SIGNING_KEY, MMAEMU_LOG_DIR, MMAEMU_TRUTH_DIR.
  tiertest::CliResult run(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& set = {}) {
    tiertest::TempDir io;
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" >\"$OUT\" 2>\"$ERR\"", "sh",
                                     mmaemu.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    mmaemu::support::ProcessOptions po;
    po.set_env = set;
    po.set_env["OUT"] = (io / "out").string();
    po.set_env["ERR"] = (io / "err").string();
    for (const char* v : {"MMAEMU_SIGNING_KEY", "MMAEMU_LOG_DIR", "MMAEMU_TRUTH_DIR"}) {
      if (!set.count(v))
        po.unset_env.push_back(v);
    }
    po.cwd = tmp.path().string();
    po.timeout_s = 600;
    const auto r = mmaemu::support::run_process(argv, po);
    return {r.exit_code, tiertest::slurp(io / "out"), tiertest::slurp(io / "err")};
  }

  std::map<std::string, std::string> key(const char* name) {
    return {{"MMAEMU_SIGNING_KEY", (tmp / name).string() + ".pem"}};
  }

  tiertest::TempDir tmp{"publish"};
  fs::path src, build, committed;
  fs::path mmaemu = tmp / "build" / "harness" / "mmaemu";
};

TEST_F(Publish, ATierRunWritesUnderTheBuildTreeNeverIntoTheCommittedFolder) {
  const auto r = run({"tier", "run", "T1"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto logs = logs_under(build / "validation_logs");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].filename(), "T1.json");
  EXPECT_THAT(r.out, HasSubstr("log: " + logs[0].string() + " (unsigned"));
  EXPECT_TRUE(logs_under(committed).empty());
  // $MMAEMU_LOG_DIR and --log-dir choose another folder.
  const auto env = run({"tier", "run", "T1"}, {{"MMAEMU_LOG_DIR", (tmp / "env").string()}});
  ASSERT_EQ(env.status, 0) << env.err;
  EXPECT_EQ(logs_under(tmp / "env").size(), 1u);
  const auto opt = run({"tier", "run", "T1", "--log-dir", (tmp / "opt").string()});
  ASSERT_EQ(opt.status, 0) << opt.err;
  EXPECT_EQ(logs_under(tmp / "opt").size(), 1u);
  EXPECT_TRUE(logs_under(committed).empty());
}

TEST_F(Publish, PublishSignsWithATrustedKeyAndNamesTheCommit) {
  // No key, or a key the committed folder does not trust: refused before the run.
  for (const auto& env : {std::map<std::string, std::string>{}, key("stranger")}) {
    const auto r = run({"tier", "run", "T1", "--publish"}, env);
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr("MMAEMU_SIGNING_KEY"));
  }
  EXPECT_TRUE(logs_under(committed).empty());
  EXPECT_TRUE(logs_under(build / "validation_logs").empty());
  // --publish with --log-dir or --no-log is a contradiction.
  EXPECT_EQ(run({"tier", "run", "T1", "--publish", "--no-log"}, key("trusted")).status, 2);
  const auto r = run({"tier", "run", "T1", "--publish"}, key("trusted"));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("published for commit unknown"));
  const auto logs = logs_under(committed);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_TRUE(fs::exists(logs[0].string() + ".sig"));
  const auto v = run({"report", "verify", committed.string()});
  EXPECT_EQ(v.status, 0) << v.out << v.err;
}

TEST_F(Publish, ReportPublishCopiesOnlyLogsThatVerifyThere) {
  ASSERT_EQ(run({"tier", "run", "T1"}).status, 0);
  const auto unsigned_log = logs_under(build / "validation_logs").at(0);
  const auto refused = run({"report", "publish", unsigned_log.string()});
  EXPECT_EQ(refused.status, 2) << refused.out << refused.err;
  EXPECT_EQ(refused.out, "");
  EXPECT_THAT(refused.err, HasSubstr("refusing to publish"));
  EXPECT_THAT(refused.err, HasSubstr("unsigned"));
  // Signed by a key the committed folder does not trust.
  ASSERT_EQ(
      run({"tier", "run", "T1", "--log-dir", (tmp / "stranger-logs").string()}, key("stranger"))
          .status,
      0);
  const auto stranger =
      run({"report", "publish", logs_under(tmp / "stranger-logs").at(0).string()});
  EXPECT_EQ(stranger.status, 2) << stranger.out << stranger.err;
  EXPECT_TRUE(logs_under(committed).empty());
  // Signed by the trusted key: copied with its signature, under its date, naming the commit.
  ASSERT_EQ(
      run({"tier", "run", "T1", "--log-dir", (tmp / "signed").string()}, key("trusted")).status, 0);
  const auto good = logs_under(tmp / "signed").at(0);
  const auto r = run({"report", "publish", good.string(), "--json", "-"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("published").size(), 1u);
  EXPECT_EQ(j["published"][0].at("commit"), "unknown");
  EXPECT_THAT(r.err, HasSubstr("(commit unknown"));
  const auto logs = logs_under(committed);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].parent_path().filename(), good.parent_path().filename()); // the log's date
  EXPECT_EQ(tiertest::slurp(logs[0]), tiertest::slurp(good));
  EXPECT_EQ(run({"report", "verify", committed.string()}).status, 0);
  // A log already in the committed folder is not published again.
  EXPECT_EQ(run({"report", "publish", logs[0].string()}).status, 2);
  EXPECT_EQ(logs_under(committed).size(), 1u);
}

} // namespace
