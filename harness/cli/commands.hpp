// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The `mmaemu` subcommands. Each adds itself to the app and sets `exit_code` when it runs.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "mmaemu/support/text.hpp"

namespace mmaemu::cli {

// Exit statuses shared by every command (docs/api.md, "Conventions").
inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;      // a bit mismatch, a failed check, or a call that raises
inline constexpr int kUsage = 2;       // bad arguments or bad input (unknown names included)
inline constexpr int kUnavailable = 4; // a backend or device that is not here; nothing tested

// Parses `argv` (argv[0]: the program's name in messages) into `app`, whose subcommands set
// `exit_code` when they run, and returns the exit status: 0 for --help and --version; 2 for a
// usage error, as one line on stderr that names the option and the subcommand's --help; 2 for
// an exception a subcommand let through (one line naming its class); else exit_code.
int run_app(CLI::App& app, const std::vector<std::string>& argv, const int& exit_code);

void add_replay(CLI::App& app, int& exit_code);
void add_recordings(CLI::App& app, int& exit_code);
void add_info(CLI::App& app, int& exit_code);
void add_dot(CLI::App& app, int& exit_code);
void add_explain(CLI::App& app, int& exit_code);
void add_gemm(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);
// `bench kernels` under the `bench` subcommand (cmd_bench_kernels.cpp).
void add_bench_kernels(CLI::App& bench, int& exit_code);
void add_tier(CLI::App& app, int& exit_code);
void add_report(CLI::App& app, int& exit_code);
void add_selftest(CLI::App& app, int& exit_code);
void add_fatbin(CLI::App& app, int& exit_code);
void add_mutants(CLI::App& app, int& exit_code);
void add_cluster(CLI::App& app, int& exit_code);
void add_evidence(CLI::App& app, int& exit_code);

// Prints "mmaemu: <message>" to stderr.
void error_line(const std::string& message);

// A value echoed in a message or a table: control and non-ASCII bytes escaped, cut to `max`
// characters (support::printable). The one helper of every subcommand (a file-local copy would
// also clash in the unity build, MMAEMU_UNITY).
inline std::string shown(const std::string& s, std::size_t max = 256) {
  return support::printable(s, max);
}
inline std::string shown(const std::filesystem::path& p, std::size_t max = 256) {
  return support::printable(p.string(), max);
}

} // namespace mmaemu::cli
