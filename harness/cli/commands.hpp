// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The `mmaemu` subcommands. Each adds itself to the app and sets `exit_code` when it runs.

#include <CLI/CLI.hpp>

namespace mmaemu::cli {

// Exit statuses shared by every command.
inline constexpr int kOk = 0;
inline constexpr int kFailed = 1;      // a bit mismatch or a failed check
inline constexpr int kUsage = 2;       // bad arguments or bad input
inline constexpr int kUnavailable = 4; // nothing could be tested

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

} // namespace mmaemu::cli
