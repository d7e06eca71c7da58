// SPDX-License-Identifier: BSD-2-Clause
// Hostile input to the commands explain, gemm, bench, dot, info, recordings and tier: each
// ends in exit status 2 with one line on stderr that names the argument, file or key, writes
// nothing, never blocks on a FIFO or a device, never allocates what a size asks for before
// checking it, and echoes no control character.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "public_set_writer.hpp"
#include "tier_test_support.hpp"

namespace fs = std::filesystem;

namespace {

using tiertest::CliResult;
using tiertest::run_mmaemu;

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// Exit 2, nothing on stdout, one line on stderr holding `needle`, no escape character.
void expect_refused(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
}

fs::path committed_h5() {
  return tiertest::committed_recordings() / "public" / "H100_E4M3.h5";
}

TEST(HostileCli, ExplainRefusesSizesOverTheLimitsWithoutAllocating) {
  // M = 2^62 + 1 used to pass validation as an M*K that wrapped to 64 bytes.
  auto r = run_mmaemu({"explain", "4611686018427387905", "64", "64", "--splitk", "1"});
  expect_refused(r, "M = 4611686018427387905 is over the emulator's limit of 2147483647");
  EXPECT_EQ(r.out, "");
  expect_refused(run_mmaemu({"explain", "1048576", "1048592", "16", "--splitk", "1"}),
                 "M*N = 1099528404992 elements is over the emulator's limit");
  expect_refused(run_mmaemu({"explain", "16", "16", "-16"}), "K = -16 must be >= 0");
  // The largest call is explained on shapes alone: nothing of its size is allocated.
  const auto t0 = std::chrono::steady_clock::now();
  r = run_mmaemu({"explain", "2147483647", "64", "512", "--splitk", "1", "--fast"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("validation  ok"), std::string::npos) << r.out;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

TEST(HostileCli, GemmNeedsSizesAndRefusesThemOverTheLimits) {
  expect_refused(run_mmaemu({"gemm"}), "give --M, --N and --K");
  expect_refused(run_mmaemu({"gemm", "--M", "16", "--N", "16"}), "give --M, --N and --K");
  expect_refused(run_mmaemu({"gemm", "--M", "2147483648", "--N", "16", "--K", "16"}),
                 "M = 2147483648 is over");
  expect_refused(run_mmaemu({"gemm", "--M", "1048576", "--N", "16", "--K", "2097152"}),
                 "M*K = 2199023255552 elements");
  expect_refused(run_mmaemu({"gemm", "--from", committed_h5().string(), "--M", "16"}),
                 "--from takes M, N and K");
  expect_refused(run_mmaemu({"bench", "gemm", "--M", "2147483648", "--N", "16", "--K", "16"}),
                 "M = 2147483648 is over");
  expect_refused(run_mmaemu({"gemm", "--M", "16", "--N", "16", "--K", "16", "--threads", "100000"}),
                 "--threads");
}

TEST(HostileCli, SpecialFilesAreRefusedAsInputsAtOnce) {
  tiertest::TempDir dir;
  const fs::path fifo = dir / "fifo.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_mmaemu({"gemm", "--from", fifo.string()}), "FIFO");
  expect_refused(run_mmaemu({"recordings", "show", fifo.string()}), "FIFO");
  expect_refused(run_mmaemu({"gemm", "--from", "/dev/zero"}), "character device");
  // A tier folder holding a FIFO named like a tier file.
  fs::create_directories(dir / "tiers");
  fs::copy(tiertest::committed_tiers() / "T1.json", dir / "tiers" / "T1.json");
  ASSERT_EQ(::mkfifo((dir / "tiers" / "T5.json").c_str(), 0600), 0);
  expect_refused(run_mmaemu({"tier", "list", "--tiers", (dir / "tiers").string(), "--trust-tiers"}),
                 "T5.json");
  fs::remove(dir / "tiers" / "T5.json");
  fs::create_symlink("/dev/zero", dir / "tiers" / "T6.json");
  expect_refused(run_mmaemu({"tier", "run", "T1", "--no-log", "--tiers", (dir / "tiers").string(),
                             "--trust-tiers"}),
                 "T6.json");
  // A vector file of a public set that is a FIFO.
  const auto set = testsupport::write_set(dir / "set", {});
  fs::remove(set.c);
  ASSERT_EQ(::mkfifo(set.c.c_str(), 0600), 0);
  expect_refused(run_mmaemu({"recordings", "import-public", set.dir.string(), "--out",
                             (dir / "out.h5").string()}),
                 "FIFO");
  EXPECT_FALSE(fs::exists(dir / "out.h5"));
}

TEST(HostileCli, OutputsThatAreInputsOrSpecialFilesAreRefusedAndLeftAlone) {
  tiertest::TempDir dir;
  const fs::path rec = dir / "r.h5";
  fs::copy(committed_h5(), rec);
  const auto before = tiertest::slurp(rec);
  expect_refused(run_mmaemu({"recordings", "show", rec.string(), "--json", rec.string()}),
                 "output is the input");
  EXPECT_EQ(tiertest::slurp(rec), before);
  // --json - prints the JSON (only) on stdout; with a file it writes the file.
  const auto to_stdout = run_mmaemu({"recordings", "show", rec.string(), "--json", "-"});
  EXPECT_EQ(to_stdout.status, 0);
  EXPECT_TRUE(nlohmann::json::accept(to_stdout.out)) << to_stdout.out;
  EXPECT_EQ(
      run_mmaemu({"recordings", "show", rec.string(), "--json", (dir / "s.json").string()}).status,
      0);
  EXPECT_TRUE(fs::exists(dir / "s.json"));

  // import-public onto one of its own vector files.
  const auto set = testsupport::write_set(dir / "set", {});
  const auto a_before = tiertest::slurp(set.a);
  expect_refused(
      run_mmaemu({"recordings", "import-public", set.dir.string(), "--out", set.a.string()}),
      "output is the input");
  EXPECT_EQ(tiertest::slurp(set.a), a_before);

  // Device nodes and symlinks to them are never replaced.
  fs::create_symlink("/dev/null", dir / "null");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", "--json", "/dev/null"},
        std::vector<std::string>{"info", "--json", (dir / "null").string()},
        std::vector<std::string>{"explain", "16", "16", "32", "--splitk", "1", "--json",
                                 "/dev/null"},
        std::vector<std::string>{"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1",
                                 "--json", (dir / "null").string()},
        std::vector<std::string>{"gemm", "--from", rec.string(), "--write", rec.string()},
        std::vector<std::string>{"recordings", "import-public", set.dir.string(), "--out",
                                 "/dev/null"},
        std::vector<std::string>{"tier", "run", "T1", "--no-log", "--junit",
                                 (dir / "null").string()}}) {
    const auto r = run_mmaemu(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args[1] << ": " << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("refusing"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_symlink(dir / "null"));
  EXPECT_EQ(tiertest::slurp(rec), before);
}

TEST(HostileCli, EchoedTokensAreEscapedAndBounded) {
  const std::string evil = "\x1b[31mred\nsecond line" + std::string(5000, 'x');
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"explain", "16", "16", "32", "--out", evil},
        std::vector<std::string>{"explain", "16", "16", "32", "--scale-a", evil},
        std::vector<std::string>{"explain", "16", "16", "32", "--device", evil},
        std::vector<std::string>{"dot", "--a", evil, "--b", "00"},
        std::vector<std::string>{"tier", "run", evil, "--no-log"},
        std::vector<std::string>{"gemm", "--from", evil}}) {
    const auto r = run_mmaemu(args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 3000u) << args[0];
  }
  // The explain report (stdout) escapes a profile name too.
  const auto r = run_mmaemu({"explain", "16", "16", "32", "--profile", evil});
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
}

} // namespace
