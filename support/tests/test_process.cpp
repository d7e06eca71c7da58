// SPDX-License-Identifier: BSD-2-Clause
// The process runner: exit codes, signals, captured output, environment, and a time limit
// that holds when the child closes its output and hangs.
#include <gtest/gtest.h>

#include <chrono>

#include "mmaemu/support/process.hpp"

namespace mmaemu::support {
namespace {

using Clock = std::chrono::steady_clock;

TEST(Process, CapturesOutputAndExitCode) {
  const auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.output.find("out\n"), std::string::npos);
  EXPECT_NE(r.output.find("err\n"), std::string::npos);
  EXPECT_TRUE(r.error.empty());
}

TEST(Process, ArgumentsAreNotInterpretedByAShell) {
  const auto r = run_process({"printf", "%s|", "a b", "$HOME", ";rm"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "a b|$HOME|;rm|");
}

TEST(Process, StreamsLines) {
  ProcessOptions o;
  std::vector<std::string> lines;
  o.on_line = [&](const std::string& l) { lines.push_back(l); };
  run_process({"sh", "-c", "printf 'one\\ntwo\\nthree'"}, o);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(Process, SignalGives128PlusItsNumber) {
  const auto r = run_process({"sh", "-c", "kill -9 $$"});
  EXPECT_EQ(r.exit_code, 128 + 9);
}

TEST(Process, MissingProgramIsAnErrorNotAThrow) {
  const auto r = run_process({"mmaemu-no-such-program"});
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_NE(r.error.find("not found"), std::string::npos);
  EXPECT_EQ(run_process({}).exit_code, -1);
}

TEST(Process, EnvironmentAndFolder) {
  ProcessOptions o = ProcessOptions::in_dir("/tmp");
  o.set_env["MMAEMU_PROCESS_TEST"] = "yes";
  o.unset_env.push_back("HOME");
  const auto r =
      run_process({"sh", "-c", "pwd; echo $MMAEMU_PROCESS_TEST; echo home=${HOME-unset}"}, o);
  EXPECT_EQ(r.output, "/tmp\nyes\nhome=unset\n");
}

TEST(Process, TimeoutHoldsWhileTheChildKeepsItsOutputOpen) {
  const auto t0 = Clock::now();
  const auto r =
      run_process({"sh", "-c", "echo started; sleep 30"}, ProcessOptions::with_timeout(0.5));
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.output.find("started"), std::string::npos);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
}

TEST(Process, TimeoutHoldsWhenTheChildClosesItsOutputAndHangs) {
  const auto t0 = Clock::now();
  const auto r = run_process({"sh", "-c", "exec >/dev/null 2>&1; sleep 30"},
                             ProcessOptions::with_timeout(0.5));
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
}

TEST(Process, TimeoutStopsGrandchildrenToo) {
  const auto t0 = Clock::now();
  const auto r =
      run_process({"sh", "-c", "sleep 30 & sleep 30; wait"}, ProcessOptions::with_timeout(0.5));
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
}

} // namespace
} // namespace mmaemu::support
