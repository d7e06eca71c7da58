// SPDX-License-Identifier: BSD-2-Clause
// `python -m mmaemu info | selftest | explain`: the command line's own subcommands
// (harness/cli/cmd_info.cpp, cmd_selftest.cpp, cmd_explain.cpp, compiled into this module), with
// the parsing and exit statuses of harness/cli/main.cpp.

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::cli {} // namespace mmaemu::cli

namespace mmaemu::py_bridge {

// argv[0] is the program name shown in help ("python -m mmaemu").
int run_cli(const std::vector<std::string>& argv) {
  using namespace mmaemu::cli;
  CLI::App app{"mmaemu: bit-exact FP8 tensor-core GEMM emulator (info, selftest, explain)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mmaemu ") + MMAEMU_VERSION);
  int exit_code = kOk;
  add_info(app, exit_code);
  add_explain(app, exit_code);
  add_selftest(app, exit_code);
  std::vector<std::string> args(argv.rbegin(), argv.rend());
  if (!args.empty()) {
    app.name(args.back());
    args.pop_back();
  }
  int code = kOk;
  try {
    app.parse(args);
    code = exit_code;
  } catch (const CLI::CallForHelp& e) {
    code = app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    code = app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    code = app.exit(e);
  } catch (const CLI::ParseError& e) {
    error_line(e.what());
    code = kUsage;
  } catch (const mmaemu::MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    code = kUsage;
  } catch (const std::exception& e) {
    error_line(e.what());
    code = kUsage;
  }
  std::fflush(stdout);
  std::cout.flush();
  std::cerr.flush();
  return code;
}

} // namespace mmaemu::py_bridge
