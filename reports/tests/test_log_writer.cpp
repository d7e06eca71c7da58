// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "log_fixtures.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;

std::size_t count_entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++n;
  return n;
}

TEST(PublishLog, UnsignedLogSaysSoAndHasNoSignatureFile) {
  testing::TempDir tmp;
  const fs::path dir = prepare_log_dir(tmp.path(), "2026-01-02");
  const PublishedLog p = publish_log(testing::tiny_log("T0", "PASS"), dir, "T0");
  EXPECT_EQ(p.log, dir / "T0.json");
  EXPECT_TRUE(p.signature.empty());
  EXPECT_FALSE(fs::exists(signature_path(p.log)));
  const std::string bytes = testing::slurp(p.log);
  const auto j = nlohmann::json::parse(bytes);
  EXPECT_EQ(j["signed"], false);
  EXPECT_FALSE(j.contains("signing"));
  EXPECT_EQ(canonical_dump(j), bytes);
  EXPECT_EQ(count_entries(dir), 1u); // no temporary file left behind
}

TEST(PublishLog, SignedLogNamesItsKeyAndGetsADetachedSignature) {
  testing::TempDir tmp;
  const auto kf = generate_key(tmp / "k.pem");
  const Key key = load_private_key(kf.private_key);
  const fs::path dir = prepare_log_dir(tmp.path(), "2026-01-02");
  const PublishedLog p = publish_log(testing::tiny_log("T1", "PASS"), dir, "T1", &key);
  EXPECT_EQ(p.signature, dir / "T1.json.sig");
  const auto j = nlohmann::json::parse(testing::slurp(p.log));
  EXPECT_EQ(j["signed"], true);
  EXPECT_EQ(j["signing"]["key_fingerprint"], fingerprint(key));
  EXPECT_EQ(testing::slurp(p.signature).size(), 89u); // 88 base64 characters and a newline
  EXPECT_EQ(count_entries(dir), 2u);
}

TEST(PublishLog, ASecondRunTheSameDayGetsANewNameAndLeavesTheFirstAlone) {
  testing::TempDir tmp;
  const fs::path dir = prepare_log_dir(tmp.path(), "2026-01-02");
  const auto first = publish_log(testing::tiny_log("T0", "PASS"), dir, "T0");
  const std::string first_bytes = testing::slurp(first.log);
  const auto second = publish_log(testing::tiny_log("T0", "FAIL", 2, 1), dir, "T0");
  const auto third = publish_log(testing::tiny_log("T0", "PASS"), dir, "T0");
  EXPECT_EQ(second.log, dir / "T0-2.json");
  EXPECT_EQ(third.log, dir / "T0-3.json");
  EXPECT_EQ(testing::slurp(first.log), first_bytes);
}

TEST(PublishLog, ConcurrentRunsGetDistinctCompleteLogs) {
  testing::TempDir tmp;
  const fs::path dir = prepare_log_dir(tmp.path(), "2026-01-02");
  const int n = 8;
  std::vector<fs::path> names(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      auto log = testing::tiny_log("T1", "PASS", i);
      names[i] = publish_log(log, dir, "T1").log;
    });
  }
  for (auto& t : threads)
    t.join();
  std::set<fs::path> distinct(names.begin(), names.end());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(n));
  std::set<long long> passed;
  for (const auto& p : names) {
    const auto j = nlohmann::json::parse(testing::slurp(p)); // complete: parses
    passed.insert(j["totals"]["PASS"].get<long long>());
  }
  EXPECT_EQ(passed.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(count_entries(dir), static_cast<std::size_t>(n));
}

TEST(PrepareLogDir, AFolderThatCannotBeCreatedIsAClearErrorNamingIt) {
  testing::TempDir tmp;
  testing::spit(tmp / "plain-file", "x");
  try {
    prepare_log_dir(tmp / "plain-file", "2026-01-02");
    FAIL() << "no exception";
  } catch (const LogWriteError& e) {
    EXPECT_NE(std::string(e.what()).find("plain-file"), std::string::npos) << e.what();
  }
}

TEST(WriteFileReplacing, ReplacesWholeAndLeavesNoTemporary) {
  testing::TempDir tmp;
  write_file_replacing(tmp / "r.md", "one\n");
  write_file_replacing(tmp / "r.md", "two\n");
  EXPECT_EQ(testing::slurp(tmp / "r.md"), "two\n");
  EXPECT_EQ(count_entries(tmp.path()), 1u);
  EXPECT_THROW(write_file_replacing(tmp / "no/such/dir/r.md", "x"), LogWriteError);
}

} // namespace
} // namespace mmaemu::reports
