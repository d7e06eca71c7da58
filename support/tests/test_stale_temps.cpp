// SPDX-License-Identifier: BSD-2-Clause
// Interrupted writes leave nothing behind for long (docs/testing.md, "Hostile input"): a writer
// killed with SIGKILL between creating its temporary file and renaming it leaves
// ".<target>.tmp.<pid>.<n>.<host>"; the next write of the same target removes it, because its
// process is gone. A live process's temporary file, and one of another host, are kept.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/stale_temps.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
namespace sup = mmaemu::support;

namespace {

std::vector<std::string> temps_of(const fs::path& dir, const std::string& target) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("." + target + ".tmp.", 0) == 0)
      out.push_back(n);
  }
  return out;
}

void touch(const fs::path& p) {
  std::ofstream(p) << "partial";
}

// A child that starts writing `target` with the one atomic writer and stops (as if it were
// stuck in a long write); the parent kills it with SIGKILL once the temporary file exists.
void kill_a_writer(const fs::path& target) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    sup::write_file_atomic_with(target, [&](const fs::path& tmp) {
      touch(tmp);
      const char c = 'x';
      (void)!::write(ready[1], &c, 1);
      for (;;)
        ::pause();
    });
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
}

TEST(StaleTemps, AKilledWritersTemporaryFileIsRemovedByTheNextWrite) {
  mmaemu::testing::TempDir dir("stale_temps");
  const fs::path target = dir / "out.json";
  kill_a_writer(target);
  const auto first = temps_of(dir.path(), "out.json");
  ASSERT_EQ(first.size(), 1u) << "the killed writer left no temporary file";
  // Each later writer of the same target (killed too) removes its dead predecessor's file
  // first: they never pile up.
  for (int i = 0; i < 3; ++i)
    kill_a_writer(target);
  const auto left = temps_of(dir.path(), "out.json");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left.front(), first.front());
  EXPECT_FALSE(fs::exists(target)); // never half-written
  sup::write_file_atomic(target, "done\n");
  EXPECT_TRUE(temps_of(dir.path(), "out.json").empty());
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "done\n");
}

TEST(StaleTemps, ExclusiveWritesAndHdf5StyleWritesCleanUpToo) {
  mmaemu::testing::TempDir dir("stale_temps");
  kill_a_writer(dir / "T1.json");
  ASSERT_EQ(temps_of(dir.path(), "T1.json").size(), 1u);
  EXPECT_TRUE(sup::write_file_exclusive(dir / "T1.json", "{}\n"));
  EXPECT_TRUE(temps_of(dir.path(), "T1.json").empty());
  kill_a_writer(dir / "r.h5");
  sup::write_file_atomic_with(dir / "r.h5", [](const fs::path& tmp) { touch(tmp); });
  EXPECT_TRUE(temps_of(dir.path(), "r.h5").empty());
}

TEST(StaleTemps, LiveProcessesAndOtherHostsKeepTheirTemporaryFiles) {
  mmaemu::testing::TempDir dir("stale_temps");
  const std::string host = sup::temp_host_tag();
  // Our own pid (alive), pid 1 (alive, maybe another user's), another host's dead pid, a name
  // that is not the pattern, and a fresh host-less one of a dead pid: all kept.
  pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0)
    ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::vector<std::string> kept = {
      ".x.tmp." + std::to_string(::getpid()) + ".0." + host,
      ".x.tmp.1.0." + host,
      ".x.tmp." + std::to_string(dead) + ".0.another-host",
      ".x.tmp.notapid.0." + host,
      ".x.tmp." + std::to_string(dead) + ".7",
  };
  for (const auto& n : kept)
    touch(dir / n);
  const std::string gone = ".x.tmp." + std::to_string(dead) + ".3." + host;
  touch(dir / gone);
  fs::create_symlink("/etc/hostname", dir / (".x.tmp." + std::to_string(dead) + ".4." + host));
  EXPECT_EQ(sup::remove_stale_temps(dir.path(), ".x.tmp."), 1u);
  for (const auto& n : kept)
    EXPECT_TRUE(fs::exists(dir / n)) << n;
  EXPECT_FALSE(fs::exists(dir / gone));
  EXPECT_TRUE(fs::is_symlink(dir / (".x.tmp." + std::to_string(dead) + ".4." + host)));
}

} // namespace
