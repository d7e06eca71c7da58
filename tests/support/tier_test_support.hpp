// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Helpers of the tier and report tests: temporary folders, files, running the built mmaemu
// with a chosen environment, and the committed tier files.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/support/process.hpp"
#include "temp_dir.hpp"

namespace tiertest {

namespace fs = std::filesystem;

// The one temporary-folder helper of the tests (temp_dir.hpp).
using TempDir = mmaemu::testing::TempDir;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void spit(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

inline fs::path source_dir() {
  return MMAEMU_SOURCE_DIR;
}
inline fs::path committed_tiers() {
  return source_dir() / "tiers";
}
inline fs::path committed_recordings() {
  return source_dir() / "recordings" / "data";
}

inline mmaemu::harness::TierSpec committed_tier(const std::string& name) {
  return mmaemu::harness::load_tier_file(committed_tiers() / (name + ".json"));
}

struct CliResult {
  int status = -1;
  std::string out, err;
};

// Runs the built mmaemu with `args` and an environment: `set` added, `unset` removed, and
// MMAEMU_SIGNING_KEY, MMAEMU_LOG_DIR and MMAEMU_TRUTH_DIR removed unless set explicitly, so
// that the caller's shell never leaks in. stdout and stderr are kept apart.
inline CliResult run_mmaemu(const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& set = {},
                            const std::string& cwd = "") {
  TempDir io;
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" >\"$OUT\" 2>\"$ERR\"", "sh",
                                   MMAEMU_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  mmaemu::support::ProcessOptions po;
  po.set_env = set;
  po.set_env["OUT"] = (io / "out").string();
  po.set_env["ERR"] = (io / "err").string();
  for (const char* v : {"MMAEMU_SIGNING_KEY", "MMAEMU_LOG_DIR", "MMAEMU_TRUTH_DIR",
                        "MMAEMU_TRUTH_MANIFEST_SHA256"}) {
    if (!set.count(v))
      po.unset_env.push_back(v);
  }
  if (!cwd.empty())
    po.cwd = cwd;
  po.timeout_s = 600;
  const auto r = mmaemu::support::run_process(argv, po);
  return {r.exit_code, slurp(io / "out"), slurp(io / "err")};
}

} // namespace tiertest
