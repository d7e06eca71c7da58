// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The one process runner (Boost.Process): an argument vector, no shell, stdout and stderr
// captured together and streamed line by line, a time limit that holds even when the child
// closes its output and hangs, and its whole process group stopped on timeout.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mmaemu::support {

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
  std::size_t max_output = 64u << 20;              // output kept beyond this is dropped

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

// Runs argv[0] (looked up in PATH if it has no '/') with argv, stdin from /dev/null. Never
// throws for a failing program; the result says what happened.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opt = {});

// The full path of `name` in PATH, if any.
std::optional<std::filesystem::path> find_program(const std::string& name);

} // namespace mmaemu::support
