// SPDX-License-Identifier: BSD-2-Clause
// No environment value and no set folder makes mmaemu read outside its data (docs/testing.md,
// "Hostile input"): a FIFO named by MMAEMU_LIBCUDA_PATH or MMAEMU_NVRTC_PATH hangs nothing; a
// set folder's symlinked file is refused by `recordings import-public` and its target's text is
// never echoed. The tier files' path fields are tested in harness/tiers/tests/test_tier_paths.cpp.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "mmaemu/support/process.hpp"
#include "public_set_writer.hpp"
#include "tier_test_support.hpp"

namespace fs = std::filesystem;

namespace {

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A FIFO where the environment names a library: every command that may load libcuda or NVRTC
// finishes (the FIFO is never opened) and says why the path was not used.
TEST(HostileEnvironment, AFifoAsALibraryPathHangsNothing) {
  tiertest::TempDir dir;
  const fs::path fifo = dir / "libcuda.so.1";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string rec = (tiertest::committed_recordings() / "public" / "H100_E4M3.h5").string();
  const std::vector<std::vector<std::string>> commands = {
      {"info"},
      {"selftest"},
      {"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1"},
      {"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1", "--backend", "cuda"},
      {"replay", rec, "--backend", "cuda:h1"},
  };
  for (const char* var : {"MMAEMU_LIBCUDA_PATH", "MMAEMU_NVRTC_PATH"}) {
    for (const auto& args : commands) {
      std::vector<std::string> argv = {MMAEMU_BIN};
      argv.insert(argv.end(), args.begin(), args.end());
      mmaemu::support::ProcessOptions po;
      po.set_env[var] = fifo.string();
      po.unset_env = {"MMAEMU_DISABLE_CUDA", "MMAEMU_BACKEND"};
      po.timeout_s = 60; // the hang was for ever; 60 s is generous on a busy machine
      const auto res = mmaemu::support::run_process(argv, po);
      SCOPED_TRACE(std::string(var) + " " + args[0]);
      EXPECT_FALSE(res.timed_out) << res.output;
      EXPECT_NE(res.exit_code, -1) << res.output;
    }
  }
  mmaemu::support::ProcessOptions po;
  po.set_env["MMAEMU_LIBCUDA_PATH"] = fifo.string();
  po.unset_env = {"MMAEMU_DISABLE_CUDA"};
  po.timeout_s = 60;
  const auto info = mmaemu::support::run_process({MMAEMU_BIN, "info"}, po);
  EXPECT_NE(info.output.find("a FIFO, not a regular file"), std::string::npos) << info.output;
}

// import-public reads the set folder's own files: a symlink there (to a file of secrets) is
// refused by name, and nothing of the target's text reaches the error line.
TEST(HostileImport, SymlinkedSetFilesAreRefusedWithoutEchoingTheirTarget) {
  tiertest::TempDir dir;
  const auto set = testsupport::write_set(dir / "set", {});
  tiertest::spit(dir / "secret", "TOPSECRET:x:0:0:root:/root:/bin/bash\n");
  for (const fs::path& victim : {set.a, set.c}) {
    const std::string name = victim.filename().string();
    const fs::path saved = dir / (name + ".saved");
    fs::rename(victim, saved);
    fs::create_symlink(dir / "secret", victim);
    const auto r = tiertest::run_mmaemu(
        {"recordings", "import-public", set.dir.string(), "--out", (dir / "out.h5").string()});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("TOPSECRET"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out.h5"));
    fs::remove(victim);
    fs::rename(saved, victim);
  }
  EXPECT_EQ(tiertest::run_mmaemu({"recordings", "import-public", set.dir.string(), "--out",
                                  (dir / "out.h5").string()})
                .status,
            0);
}

} // namespace
