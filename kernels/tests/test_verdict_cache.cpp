// SPDX-License-Identifier: BSD-2-Clause
// The verdict cache: keys over every field, round trip through a file, damaged files ignored
// and replaced, and concurrent processes storing the same key without a torn file.

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/verdict_cache.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::kernels::Verdict;
using mmaemu::kernels::VerdictCache;
using mmaemu::kernels::VerdictKeyFields;
using mmaemu::testing::EnvGuard;
using mmaemu::testing::TempDir;

VerdictKeyFields fields() {
  VerdictKeyFields f;
  f.gpu_uuid = "00112233445566778899aabbccddeeff";
  f.cc = 90;
  f.driver_version = 13000;
  f.image_sha256 = std::string(64, 'e');
  f.gate = "smoke";
  f.gate_version = 1;
  return f;
}

TEST(VerdictCache, KeyCoversEveryField) {
  const std::string k = mmaemu::kernels::verdict_key(fields());
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, mmaemu::kernels::verdict_key(fields()));
  std::vector<VerdictKeyFields> changed(7, fields());
  changed[0].gpu_uuid = "ff";
  changed[1].cc = 89;
  changed[2].driver_version = 12080;
  changed[3].mmaemu_version = "9.9.9";
  changed[4].image_sha256 = std::string(64, 'f');
  changed[5].gate = "window";
  changed[6].gate_version = 2;
  for (const auto& c : changed)
    EXPECT_NE(mmaemu::kernels::verdict_key(c), k);
  // An empty mmaemu_version means this build's.
  VerdictKeyFields explicit_version = fields();
  explicit_version.mmaemu_version = mmaemu::kernels::mmaemu_version();
  EXPECT_EQ(mmaemu::kernels::verdict_key(explicit_version), k);
  EXPECT_FALSE(mmaemu::kernels::mmaemu_version().empty());
}

TEST(VerdictCache, RoundTripsThroughItsFile) {
  TempDir dir("verdicts");
  const std::string key = mmaemu::kernels::verdict_key(fields());
  VerdictCache writer(dir.path());
  EXPECT_FALSE(writer.lookup(key).has_value());
  EXPECT_TRUE(writer.store(key, {false, "smoke: C[3][5] differs: 0x3f800000 vs 0x3f800001"}));
  EXPECT_EQ(writer.last_error(), "");
  ASSERT_TRUE(fs::is_regular_file(dir / (key + ".json")));
  VerdictCache reader(dir.path());
  const auto v = reader.lookup(key);
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->passed);
  EXPECT_EQ(v->detail, "smoke: C[3][5] differs: 0x3f800000 vs 0x3f800001");
  EXPECT_TRUE(writer.store(key, {true, "ok"}));
  reader.forget_memory();
  EXPECT_TRUE(reader.lookup(key)->passed);
}

TEST(VerdictCache, BadKeysFindNothingAndCannotBeStored) {
  TempDir dir("verdicts-keys");
  VerdictCache c(dir.path());
  EXPECT_FALSE(c.lookup("../../etc/passwd").has_value());
  EXPECT_FALSE(c.lookup(std::string(64, 'A')).has_value());
  EXPECT_THROW(c.store("../x", {true, ""}), mmaemu::ValueError);
}

TEST(VerdictCache, DamagedOrForeignFilesAreIgnoredThenReplaced) {
  TempDir dir("verdicts-bad");
  const std::string key = mmaemu::kernels::verdict_key(fields());
  const fs::path file = dir / (key + ".json");
  const std::string other_key(64, '0');
  const std::vector<std::string> bad{
      "",
      "{",
      "[]",
      "{\"format\": \"mmaemu-verdict/1\", \"key\": \"" + key + "\", \"passed\": true}",
      "{\"format\": \"mmaemu-verdict/1\", \"key\": \"" + other_key +
          "\", \"passed\": true, \"detail\": \"\"}",
      "{\"format\": \"mmaemu-verdict/2\", \"key\": \"" + key +
          "\", \"passed\": true, \"detail\": \"\"}",
      "{\"format\": \"mmaemu-verdict/1\", \"key\": \"" + key +
          "\", \"passed\": 1, \"detail\": \"\"}",
      std::string(200000, '['),
      std::string(70000, ' ') + "{}",
      std::string("\x00\xff\xfe garbage", 11),
  };
  for (const std::string& content : bad) {
    mmaemu::testing::spit(file, content);
    VerdictCache c(dir.path());
    EXPECT_FALSE(c.lookup(key).has_value()) << content.substr(0, 80);
    EXPECT_TRUE(c.store(key, {true, "again"}));
    VerdictCache fresh(dir.path());
    ASSERT_TRUE(fresh.lookup(key).has_value());
    EXPECT_EQ(fresh.lookup(key)->detail, "again");
  }
  // A folder in the place of the file: ignored; the store cannot replace it and says so.
  fs::remove(file);
  fs::create_directory(file);
  VerdictCache c(dir.path());
  EXPECT_FALSE(c.lookup(key).has_value());
  EXPECT_FALSE(c.store(key, {true, "kept in memory"}));
  EXPECT_NE(c.last_error(), "");
  EXPECT_EQ(c.lookup(key)->detail, "kept in memory");
}

TEST(VerdictCache, DefaultCacheLivesInTheCacheFolder) {
  TempDir dir("verdicts-default");
  EnvGuard env;
  env.set("MMAEMU_CACHE_DIR", (dir / "c").string());
  const std::string key = mmaemu::kernels::verdict_key(fields());
  EXPECT_TRUE(mmaemu::kernels::verdict_cache().store(key, {true, "default"}));
  EXPECT_TRUE(fs::is_regular_file(dir / "c" / "verdicts" / (key + ".json")));
  mmaemu::kernels::verdict_cache().forget_memory();
}

TEST(VerdictCache, ConcurrentProcessesNeverLeaveATornFile) {
  TempDir dir("verdicts-race");
  const std::string key = mmaemu::kernels::verdict_key(fields());
  constexpr int kWriters = 4;
  constexpr int kStores = 150;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      VerdictCache c(dir.path());
      // Long details make a torn write likely if writes were not atomic.
      const std::string detail(8192 + w, static_cast<char>('a' + w));
      bool ok = true;
      for (int i = 0; i < kStores; ++i)
        ok = c.store(key, {w % 2 == 0, detail}) && ok;
      ::_exit(ok ? 0 : 1);
    }
    pids.push_back(pid);
  }
  // Meanwhile every read sees either nothing yet or one complete verdict.
  int complete = 0;
  for (int i = 0; i < 400; ++i) {
    VerdictCache reader(dir.path());
    const auto v = reader.lookup(key);
    if (!v)
      continue;
    ++complete;
    ASSERT_GE(v->detail.size(), 8192u);
    const int w = v->detail[0] - 'a';
    ASSERT_GE(w, 0);
    ASSERT_LT(w, kWriters);
    EXPECT_EQ(v->detail, std::string(8192 + static_cast<std::size_t>(w), v->detail[0]));
    EXPECT_EQ(v->passed, w % 2 == 0);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  VerdictCache last(dir.path());
  ASSERT_TRUE(last.lookup(key).has_value());
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename(), key + ".json");
  }
  EXPECT_EQ(files, 1);
  (void)complete;
}

} // namespace

namespace {

std::string verdict_text(const std::string& key, const std::string& detail) {
  return "{\"format\": \"mmaemu-verdict/1\", \"key\": \"" + key +
         "\", \"passed\": true, \"detail\": \"" + detail + "\"}";
}

} // namespace

TEST(VerdictCache, AKeyThatIsNotLowerHexFindsNothingEvenWithAFileOfThatName) {
  TempDir dir("verdicts-names");
  const std::string upper(64, 'A');
  mmaemu::testing::spit(dir / (upper + ".json"), verdict_text(upper, "forged"));
  VerdictCache c(dir.path());
  EXPECT_FALSE(c.lookup(upper).has_value());
  // The same for a key that is a path.
  fs::create_directory(dir / "sub");
  mmaemu::testing::spit(dir / "outside.json", verdict_text("../outside", "forged"));
  VerdictCache sub(dir / "sub");
  EXPECT_FALSE(sub.lookup("../outside").has_value());
}

TEST(VerdictCache, AFileOverTheSizeLimitIsIgnored) {
  TempDir dir("verdicts-size");
  const std::string key = mmaemu::kernels::verdict_key(fields());
  const std::string body = verdict_text(key, "padded");
  // Valid JSON, padded with spaces to one byte over 64 KiB (kMaxVerdictBytes).
  mmaemu::testing::spit(dir / (key + ".json"),
                        std::string((64u << 10) + 1 - body.size(), ' ') + body);
  EXPECT_FALSE(VerdictCache(dir.path()).lookup(key).has_value());
  // At the limit it is read.
  mmaemu::testing::spit(dir / (key + ".json"), std::string((64u << 10) - body.size(), ' ') + body);
  ASSERT_TRUE(VerdictCache(dir.path()).lookup(key).has_value());
}

TEST(VerdictCache, ItsFilesAreReadableByTheirOwnerOnly) {
  TempDir dir("verdicts-mode");
  const std::string key = mmaemu::kernels::verdict_key(fields());
  ASSERT_TRUE(VerdictCache(dir.path()).store(key, {true, "ok"}));
  const auto p = fs::status(dir / (key + ".json")).permissions();
  EXPECT_EQ(p & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
}
