// SPDX-License-Identifier: BSD-2-Clause
// run_app (commands.hpp): the parse and the exit statuses of `mmaemu` and `python -m mmaemu`.

#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "strict_numbers.hpp"

namespace mmaemu::cli {

namespace {

// "mmaemu tier run": the program and the subcommands that were parsed, deepest last.
std::string parsed_path(const CLI::App& app) {
  std::string path = app.get_name();
  const CLI::App* at = &app;
  for (;;) {
    const auto subs = at->get_subcommands();
    if (subs.empty())
      break;
    at = subs.front();
    path += " " + at->get_name();
  }
  return path;
}

// The last subcommand that was parsed (the app itself when none was).
const CLI::App& deepest(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty())
    at = at->get_subcommands().front();
  return *at;
}

} // namespace

int run_app(CLI::App& app, const std::vector<std::string>& argv, const int& exit_code) {
  std::vector<std::string> args(argv.rbegin(), argv.rend()); // CLI11 takes them reversed
  if (!args.empty()) {
    app.name(args.back());
    args.pop_back();
  }
  // A word where a subcommand must be that is none: say so (CLI11 only says that a
  // subcommand is required).
  const CLI::App* at = &app;
  std::string path = app.get_name();
  for (auto it = args.rbegin(); it != args.rend() && at->get_require_subcommand_min() > 0; ++it) {
    if (it->empty() || (*it)[0] == '-')
      break;
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : at->get_subcommands(std::function<bool(const CLI::App*)>{})) {
      if (s->get_name() == *it)
        sub = s;
    }
    if (!sub) {
      error_line("'" + support::printable(*it) + "' is not a subcommand of " + path + " (" + path +
                 " --help lists them)");
      return kUsage;
    }
    at = sub;
    path += " " + *it;
  }
  // Every number is read strictly (no empty value as 0, no saturation at 2^63-1).
  strict_numbers(app);
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
    // One line: what was wrong, then where the options are listed.
    error_line(std::string(e.what()) + " (" + parsed_path(app) + " --help lists the " +
               (deepest(app).get_require_subcommand_min() > 0 ? "subcommands" : "options") + ")");
    code = kUsage;
  } catch (const mmaemu::MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    code = kUsage;
  } catch (const std::exception& e) {
    error_line(e.what());
    code = kUsage;
  }
  restore_stdout();
  std::fflush(stdout);
  std::cout.flush();
  std::cerr.flush();
  return code;
}

} // namespace mmaemu::cli
