// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/git_state.hpp"

#include <string>
#include <vector>

#include "mmaemu/support/process.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace {

// A hung git (a lock, a network file system) must not hold a tier run forever.
constexpr double kGitTimeoutS = 20;

// Runs `git -C <dir> <args...>` (no shell) with a time limit.
support::ProcessResult git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  support::ProcessOptions opt = support::ProcessOptions::with_timeout(kGitTimeoutS);
  // Output in the C locale and never a pager or a credential prompt.
  opt.set_env = {{"LC_ALL", "C"}, {"GIT_PAGER", "cat"}, {"GIT_TERMINAL_PROMPT", "0"}};
  opt.max_output = 1u << 20;
  return support::run_process(argv, opt);
}

nlohmann::json unknown(const std::string& why) {
  return {{"commit", "unknown"}, {"dirty", nullptr}, {"reason", why}};
}

bool is_sha1(const std::string& s) {
  if (s.size() != 40 && s.size() != 64)
    return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  }
  return true;
}

} // namespace

nlohmann::json git_state(const std::optional<std::filesystem::path>& source_dir) {
  if (!source_dir)
    return unknown("no source tree (installed binary)");
  const auto head = git(*source_dir, {"rev-parse", "--verify", "--quiet", "HEAD"});
  std::string commit = head.output;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r'))
    commit.pop_back();
  // The output is stdout and stderr together: anything but a hash means no usable HEAD.
  if (head.exit_code != 0 || head.timed_out || !is_sha1(commit)) {
    return unknown("git is unavailable or " + support::printable(source_dir->string(), 256) +
                   " is not a repository");
  }
  // Tracked files only: logs written into docs/validation_logs/ are untracked until committed
  // and must not make the tree "dirty". The exit status says it (0 same as HEAD, 1 differs),
  // so a warning git prints does not count as a change.
  const auto diff = git(*source_dir, {"diff", "--quiet", "--no-ext-diff", "HEAD", "--"});
  nlohmann::json j;
  j["commit"] = commit;
  if (!diff.timed_out && (diff.exit_code == 0 || diff.exit_code == 1)) {
    j["dirty"] = diff.exit_code == 1;
  } else {
    j["dirty"] = nullptr;
  }
  return j;
}

LogRevision log_revision(const nlohmann::json& log) {
  LogRevision r;
  const auto g = log.find("git");
  if (!log.is_object() || g == log.end() || !g->is_object())
    return r;
  if (const auto c = g->find("commit"); c != g->end() && c->is_string())
    r.commit = c->get<std::string>();
  if (const auto d = g->find("dirty"); d != g->end() && d->is_boolean())
    r.dirty = d->get<bool>();
  return r;
}

} // namespace mmaemu::reports
