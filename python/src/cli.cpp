// SPDX-License-Identifier: BSD-2-Clause
// `python -m mmaemu info | selftest | explain`: the command line's own subcommands
// (harness/cli/cmd_info.cpp, cmd_selftest.cpp, cmd_explain.cpp, compiled into this module), with
// the parsing and exit statuses of harness/cli/run_app.cpp.

#include <string>
#include <vector>

#include "commands.hpp"

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
  return run_app(app, argv, exit_code);
}

} // namespace mmaemu::py_bridge
