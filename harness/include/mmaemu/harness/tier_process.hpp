// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Running a program for a tier (ctest, cpack, cmake, an installed mmaemu): no shell, output
// streamed line by line, an optional time limit.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mmaemu::harness {

struct ProcessResult {
  int exit_code = -1; // the exit status; 128 + signal if killed; -1 if it could not start
  bool timed_out = false;
  std::string output; // stdout and stderr, interleaved as written
  std::string error;  // why it could not start, if it could not
};

struct ProcessOptions {
  std::filesystem::path cwd; // empty: inherit
  std::map<std::string, std::string> set_env;
  std::vector<std::string> unset_env;
  double timeout_s = 0;                            // 0: none
  std::function<void(const std::string&)> on_line; // each output line, without '\n'

  static ProcessOptions in_dir(const std::filesystem::path& dir) {
    ProcessOptions o;
    o.cwd = dir;
    return o;
  }
  static ProcessOptions with_timeout(double seconds) {
    ProcessOptions o;
    o.timeout_s = seconds;
    return o;
  }
};

// Runs argv[0] (looked up in PATH if it has no '/') with argv. Never throws for a failing
// program; the result says what happened.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opt = {});

// The full path of `name` in PATH, if any.
std::optional<std::filesystem::path> find_program(const std::string& name);

} // namespace mmaemu::harness
