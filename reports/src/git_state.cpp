// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/git_state.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace mmaemu::reports {

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `cmd` through the shell; returns its stdout, or nothing if it exits non-zero.
std::optional<std::string> capture(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p)
    return std::nullopt;
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  const int status = ::pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return std::nullopt;
  return out;
}

nlohmann::json unknown(const std::string& why) {
  return {{"commit", "unknown"}, {"dirty", nullptr}, {"reason", why}};
}

} // namespace

nlohmann::json git_state(const std::optional<std::filesystem::path>& source_dir) {
  if (!source_dir)
    return unknown("no source tree (installed binary)");
  const std::string git = "git -C " + shell_quote(source_dir->string()) + " ";
  const auto head = capture(git + "rev-parse --verify HEAD 2>/dev/null");
  if (!head)
    return unknown("git is unavailable or " + source_dir->string() + " is not a repository");
  std::string commit = *head;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r'))
    commit.pop_back();
  // Tracked files only: logs written into docs/validation_logs/ are untracked until committed
  // and must not make the tree "dirty".
  const auto status = capture(git + "status --porcelain --untracked-files=no 2>/dev/null");
  nlohmann::json j;
  j["commit"] = commit;
  if (status) {
    j["dirty"] = !status->empty();
  } else {
    j["dirty"] = nullptr;
  }
  return j;
}

} // namespace mmaemu::reports
