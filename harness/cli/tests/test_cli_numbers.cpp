// SPDX-License-Identifier: BSD-2-Clause
// Numbers on the command line are read strictly, in every subcommand: an empty value,
// trailing junk, another base, a sign where none belongs, or a value out of range is a usage
// error (exit 2) of one line on stderr naming the option and the text as given, with nothing
// on stdout; never M = 0 for '' or M = 2^63-1 for 10^23 (CLI11 2.1's own conversions).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {

using mmaemu::testing::run_command;

struct Case {
  std::vector<std::string> args;
  std::string names; // what the one stderr line must hold: the option and the text as given
};

const std::vector<Case>& cases() {
  static const std::vector<Case> v{
      {{"explain", "", "16", "32"}, "M: '' is not a decimal integer"},
      {{"explain", "2", "16", "99999999999999999999999"},
       "K: '99999999999999999999999' is out of range"},
      {{"explain", "2", "16x", "32"}, "N: '16x' is not a decimal integer"},
      {{"explain", "2", "16", "32", "--scale-a", ""}, "--scale-a: '' is not a number"},
      {{"gemm", "--M", "", "--N", "16", "--K", "32"}, "--M: '' is not a decimal integer"},
      {{"gemm", "--M", "99999999999999999999999", "--N", "16", "--K", "32"},
       "--M: '99999999999999999999999' is out of range"},
      {{"gemm", "--M", "0x10", "--N", "16", "--K", "32"}, "--M: '0x10' is not a decimal integer"},
      {{"gemm", "--M", " 2", "--N", "16", "--K", "32"}, "--M: ' 2' is not a decimal integer"},
      {{"gemm", "--M", "+2", "--N", "16", "--K", "32"}, "--M: '+2' is not a decimal integer"},
      {{"gemm", "--M", "2", "--N", "16", "--K", "32", "--seed", "-1"},
       "--seed: '-1' is not a decimal integer"},
      {{"gemm", "--M", "2", "--N", "16", "--K", "32", "--threads", ""},
       "--threads: '' is not a decimal integer"},
      {{"gemm", "--M", "2", "--N", "16", "--K", "32", "--threads", "99999999999"},
       "--threads = 99999999999"},
      {{"dot", "--a", "", "--b", ""}, "--a: '' is not an e4m3 code"},
      {{"dot", "--a", "38", "--b", "-1"}, "--b: '-1' is not an e4m3 code"},
      {{"dot", "--a", "38", "--b", "38", "--c", ""}, "--c: '' is not a binary32 bit pattern"},
      {{"dot", "--a", "38", "--b", "38", "--c", "+3f800000"},
       "--c: '+3f800000' is not a binary32 bit pattern"},
      {{"tier", "run", "T1", "--shard", ""}, "--shard: '' is not a shard k/N"},
      {{"tier", "run", "T1", "--jobs", "4x"}, "--jobs: '4x' is not a decimal integer"},
      {{"bench", "gemm", "--sweep", "--shard", ""}, "--shard: '' is not a shard k/N"},
      {{"bench", "gemm", "--M", "", "--N", "16", "--K", "32"}, "--M: '' is not a decimal integer"},
      {{"bench", "gemm", "--repeat", "1e3"}, "--repeat: '1e3' is not a decimal integer"},
      {{"recordings", "fill", "x.h5", "--json", "-", "--digest-over", ""},
       "--digest-over: '' is not a decimal integer"},
      {{"cluster", "slurm", "T1", "--shards", "2", "--out", "x", "--gpus", ""},
       "--gpus: '' is not a decimal integer"},
      {{"cluster", "slurm", "T1", "--shards", "2", "--out", "x", "--time-factor", "2x"},
       "--time-factor: '2x' is not a decimal number"},
  };
  return v;
}

TEST(CliNumbers, EveryBadNumberIsOneUsageLineNamingTheOptionAndTheText) {
  for (const Case& c : cases()) {
    std::string what;
    for (const auto& a : c.args)
      what += " '" + a + "'";
    const auto r = run_command(MMAEMU_BIN, {}, c.args);
    EXPECT_EQ(r.status, 2) << what << "\n" << r.all();
    EXPECT_TRUE(r.out.empty()) << what << "\n" << r.out;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << what << "\n" << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << what << ": not one line\n" << r.err;
  }
}

TEST(CliNumbers, GoodNumbersStillParse) {
  const auto r = run_command(MMAEMU_BIN, {}, {"explain", "2", "16", "32", "--splitk", "1"});
  EXPECT_NE(r.status, 2) << r.all();
  const auto d = run_command(MMAEMU_BIN, {}, {"dot", "--a", "0x38", "--b", "38", "--c", "0"});
  EXPECT_EQ(d.status, 0) << d.all();
}

} // namespace
