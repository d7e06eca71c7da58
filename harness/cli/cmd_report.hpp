// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// `mmaemu report` (cmd_report*.cpp): the arguments of its subcommands and the run of each.
// cmd_report.cpp adds the subcommands and runs keygen and verify; release, merge, compare and
// publish each have their own file (cmd_report_<name>.cpp).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "output.hpp"

namespace mmaemu::cli::report {

struct ReportArgs {
  std::string out, keys, date, log_dir, tiers;
  std::vector<std::string> paths;
  bool allow_other_commit = false; // report release
  bool trust_tiers = false;        // report release --trust-tiers
  std::size_t shards = 0;          // report merge: the run's shard count (collect mode)
  std::string name;                // report merge --shards: the logs' stem (T1, mutants)
  std::vector<std::string> why;    // report merge --shards: K=TEXT, the engine's word
  JsonOption json;
};

// --keys, else the source tree's trusted keys (docs/validation_logs/keys).
std::filesystem::path keys_dir(const ReportArgs& a);

int run_keygen(const ReportArgs& a);
// One line per log: OK, FAIL (a log that does not verify) or ERROR (a file that is not a
// readable validation log, or an argument that names nothing: a missing path, a dangling
// link, a folder that cannot be searched, a folder without logs). Every argument is checked,
// whatever an earlier one was; the exit status is the worst: 2 if any was an ERROR, else 1 if
// any FAILed, else 0.
int run_verify(const ReportArgs& a);
// The sign-off report (release.md, release.html) of one date's logs.
int run_release(const ReportArgs& a);
// The logs of --shard k/N runs combined into one (--shards: the run's verdict).
int run_merge(const ReportArgs& a);
// Whether two logs hold the same result, and each difference.
int run_compare(const ReportArgs& a);
// Copies each log, with its signature, into the committed folder: only logs that verify against
// the keys trusted there (an unsigned log, or one of an untrusted key, would make
// committed_validation_logs_verify fail), each under its date, and says which commit each is
// of. Every log is checked before any is copied.
int run_publish(const ReportArgs& a);

} // namespace mmaemu::cli::report
