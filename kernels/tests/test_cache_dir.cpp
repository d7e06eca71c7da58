// SPDX-License-Identifier: BSD-2-Clause
// The cache folder: where it is, created private on demand, refused when others can write it.

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/cache_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::kernels::CacheDirError;
using mmaemu::testing::EnvGuard;
using mmaemu::testing::TempDir;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777u;
}

TEST(CacheDir, PathFollowsTheEnvironment) {
  EnvGuard env;
  env.set("MMAEMU_CACHE_DIR", "/some/where");
  EXPECT_EQ(mmaemu::kernels::cache_dir_path(), fs::path("/some/where"));
  env.unset("MMAEMU_CACHE_DIR");
  env.set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(mmaemu::kernels::cache_dir_path(), fs::path("/xdg/mmaemu"));
  env.unset("XDG_CACHE_HOME");
  env.set("HOME", "/home/u");
  EXPECT_EQ(mmaemu::kernels::cache_dir_path(), fs::path("/home/u/.cache/mmaemu"));
  env.unset("HOME");
  EXPECT_THROW(mmaemu::kernels::cache_dir_path(), CacheDirError);
}

TEST(CacheDir, CreatedPrivateOnDemandWithItsSubfolders) {
  TempDir tmp("cachedir");
  EnvGuard env;
  const fs::path dir = tmp / "a" / "b" / "mmaemu";
  env.set("MMAEMU_CACHE_DIR", dir.string());
  EXPECT_EQ(mmaemu::kernels::cache_dir(), dir);
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mmaemu::kernels::cache_subdir("nvrtc"), dir / "nvrtc");
  EXPECT_EQ(mode_of(dir / "nvrtc"), 0700u);
  EXPECT_EQ(mmaemu::kernels::cache_subdir("verdicts"), dir / "verdicts");
  EXPECT_THROW(mmaemu::kernels::cache_subdir("../x"), mmaemu::ValueError);
  EXPECT_THROW(mmaemu::kernels::cache_subdir(""), mmaemu::ValueError);
}

TEST(CacheDir, WritableByGroupOrOthersIsRefusedNamingPathAndMode) {
  TempDir tmp("cachedir-open");
  EnvGuard env;
  const fs::path dir = tmp / "cache";
  env.set("MMAEMU_CACHE_DIR", dir.string());
  fs::create_directory(dir);
  for (const unsigned mode : {0770u, 0702u, 0777u}) {
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    try {
      mmaemu::kernels::cache_dir();
      ADD_FAILURE() << "accepted mode " << mode;
    } catch (const CacheDirError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(dir.string()), std::string::npos) << what;
      char octal[8];
      std::snprintf(octal, sizeof octal, "%04o", mode);
      EXPECT_NE(what.find(octal), std::string::npos) << what;
    }
    EXPECT_EQ(mode_of(dir), mode); // refused, never repaired
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0); // readable by others is fine
  EXPECT_NO_THROW(mmaemu::kernels::cache_dir());
  // A subfolder that others can write is refused too.
  fs::create_directory(dir / "verdicts");
  ASSERT_EQ(::chmod((dir / "verdicts").c_str(), 0777), 0);
  EXPECT_THROW(mmaemu::kernels::cache_subdir("verdicts"), CacheDirError);
}

TEST(CacheDir, AFileInThePlaceOfTheFolderIsRefused) {
  TempDir tmp("cachedir-file");
  EnvGuard env;
  mmaemu::testing::spit(tmp / "cache", "x");
  env.set("MMAEMU_CACHE_DIR", (tmp / "cache").string());
  EXPECT_THROW(mmaemu::kernels::cache_dir(), CacheDirError);
}

TEST(CacheDir, AFolderOfAnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to give a folder to another user";
  TempDir tmp("cachedir-owner");
  EnvGuard env;
  const fs::path dir = tmp / "cache";
  fs::create_directory(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  env.set("MMAEMU_CACHE_DIR", dir.string());
  try {
    mmaemu::kernels::cache_dir();
    FAIL() << "accepted";
  } catch (const CacheDirError& e) {
    EXPECT_NE(std::string(e.what()).find("uid 65534"), std::string::npos) << e.what();
  }
}

} // namespace
