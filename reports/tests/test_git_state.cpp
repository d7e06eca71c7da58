// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

#include <filesystem>

#include "mmaemu/reports/git_state.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;

TEST(GitState, NoSourceTreeOrNoRepositoryIsUnknownWithAReason) {
  EXPECT_EQ(git_state(std::nullopt)["commit"], "unknown");
  testing::TempDir dir;
  const auto j = git_state(dir.path());
  EXPECT_EQ(j["commit"], "unknown");
  EXPECT_TRUE(j["dirty"].is_null());
  EXPECT_TRUE(j["reason"].is_string());
}

TEST(GitState, AFolderNameIsAnArgumentNeverShellText) {
  testing::TempDir dir;
  // Through a shell this name would run `touch`; as an argument it is only a folder name.
  const fs::path odd = dir / "x'; touch pwned; echo '$(touch pwned2)";
  fs::create_directory(odd);
  const auto j = git_state(odd);
  EXPECT_EQ(j["commit"], "unknown");
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  EXPECT_FALSE(fs::exists(odd / "pwned"));
  EXPECT_FALSE(fs::exists("pwned2"));
}

TEST(GitState, TheSourceTreeHasAFullCommitHash) {
  const fs::path src = MMAEMU_TEST_SOURCE_DIR;
  if (!fs::exists(src / ".git"))
    GTEST_SKIP() << src << " is not a git checkout";
  const auto j = git_state(src);
  ASSERT_TRUE(j["commit"].is_string());
  const std::string c = j["commit"];
  EXPECT_TRUE(c.size() == 40 || c.size() == 64) << c;
  EXPECT_TRUE(j["dirty"].is_boolean()) << j.dump();
}

} // namespace
} // namespace mmaemu::reports
