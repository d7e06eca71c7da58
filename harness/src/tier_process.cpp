// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace mmaemu::harness {

namespace fs = std::filesystem;

std::optional<fs::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0)
      return fs::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t end = p.find(':', start);
    const std::string dir =
        p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty()) {
      const fs::path cand = fs::path(dir) / name;
      std::error_code ec;
      if (fs::is_regular_file(cand, ec) && ::access(cand.c_str(), X_OK) == 0)
        return cand;
    }
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return std::nullopt;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opt) {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  const auto prog = find_program(argv[0]);
  if (!prog) {
    r.error = "'" + argv[0] + "' not found (PATH)";
    return r;
  }
  // Build the child's environment before fork: only async-signal-safe calls after it.
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const std::string name = kv.substr(0, kv.find('='));
    bool drop = opt.set_env.count(name) > 0;
    for (const auto& u : opt.unset_env)
      drop = drop || u == name;
    if (!drop)
      env_strings.push_back(kv);
  }
  for (const auto& [k, v] : opt.set_env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string prog_s = prog->string();
  const std::string cwd = opt.cwd.string();

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0); // its own process group, so a timeout can stop its children too
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      _exit(127);
    ::execve(prog_s.c_str(), cargv.data(), envp.data());
    _exit(127);
  }
  ::setpgid(pid, pid);
  ::close(fds[1]);
  const auto t0 = std::chrono::steady_clock::now();
  std::string pending;
  char buf[8192];
  bool open = true;
  while (open) {
    int wait_ms = -1;
    if (opt.timeout_s > 0) {
      const double left =
          opt.timeout_s -
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (left <= 0) {
        r.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int pr = ::poll(&p, 1, wait_ms);
    if (pr < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (pr == 0)
      continue; // the loop head handles the timeout
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      open = false;
      break;
    }
    r.output.append(buf, static_cast<std::size_t>(n));
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      if (opt.on_line)
        opt.on_line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty() && opt.on_line)
    opt.on_line(pending);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    if (r.exit_code == 127 && r.output.empty())
      r.error = "could not execute " + prog_s;
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  return r;
}

} // namespace mmaemu::harness
