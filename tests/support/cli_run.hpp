// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Runs a command (the built mmaemu) as a separate process for CLI tests: stdout and stderr
// captured apart, stdin empty, and an environment without mmaemu's variables except those
// the test sets, so that the caller's MMAEMU_* settings never leak into a test.

#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace mmaemu::testing {

struct CliResult {
  int status = -1; // exit status, or -1 if the process did not exit normally
  std::string out, err;
  std::string all() const { return out + err; }
};

using CliEnv = std::map<std::string, std::string>;

// The variables mmaemu reads (and the fake libcuda's and libcublasLt's), unset for every run.
inline const std::vector<std::string>& cli_cleared_variables() {
  static const std::vector<std::string> v{"MMAEMU_BACKEND",
                                          "MMAEMU_DISABLE_CUDA",
                                          "MMAEMU_ALLOW_GATED_KERNELS",
                                          "MMAEMU_CACHE_DIR",
                                          "MMAEMU_LIBCUDA_PATH",
                                          "MMAEMU_NVRTC_PATH",
                                          "MMAEMU_FATBIN_DIR",
                                          "MMAEMU_TEST_FORCE_FAIL",
                                          "MMAEMU_PROFILE",
                                          "MMAEMU_FAKE_CUDA_DEVICES",
                                          "MMAEMU_FAKE_CUDA_CC",
                                          "MMAEMU_FAKE_CUDA_SMEM_OPTIN",
                                          "MMAEMU_FAKE_CUDA_UUID",
                                          "MMAEMU_FAKE_CUDA_WRONG",
                                          "MMAEMU_FAKE_CUDA_MAX_GRID_Y",
                                          "MMAEMU_FAKE_NVRTC_FAIL",
                                          "MMAEMU_CUBLASLT_PATH",
                                          "MMAEMU_FAKE_CUDA_NAME",
                                          "MMAEMU_FAKE_CUDA_SMS",
                                          "MMAEMU_SPLITK_STRICT",
                                          "MMAEMU_FAKE_CUBLASLT_VERSION",
                                          "MMAEMU_FAKE_CUBLASLT_ANSWER",
                                          "MMAEMU_FAKE_CUBLASLT_RESULTS",
                                          "MMAEMU_FAKE_CUBLASLT_HEURISTIC_STATUS",
                                          "MMAEMU_FAKE_CUBLASLT_CREATE_STATUS",
                                          "MMAEMU_SIGNING_KEY",
                                          "MMAEMU_LOG_DIR",
                                          "MMAEMU_TRUTH_DIR"};
  return v;
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) {
    if (ch == '\'')
      q += "'\\''";
    else
      q += ch;
  }
  return q + "'";
}

// Runs `program` with `args`; the variables of cli_cleared_variables() are unset, then `env`
// is set.
inline CliResult run_command(const std::string& program, const CliEnv& env,
                             const std::vector<std::string>& args) {
  TempDir io("cli_run_io");
  std::string cmd = "env";
  for (const auto& v : cli_cleared_variables())
    cmd += " -u " + v;
  for (const auto& [k, v] : env)
    cmd += " " + shell_quote(k + "=" + v);
  cmd += " " + shell_quote(program);
  for (const auto& a : args)
    cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((io / "out").string()) + " 2>" + shell_quote((io / "err").string()) +
         " </dev/null";
  const int raw = std::system(cmd.c_str());
  CliResult r;
  if (raw != -1 && WIFEXITED(raw))
    r.status = WEXITSTATUS(raw);
  r.out = slurp(io / "out");
  r.err = slurp(io / "err");
  return r;
}

} // namespace mmaemu::testing
