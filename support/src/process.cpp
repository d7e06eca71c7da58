// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

extern char** environ;

namespace mmaemu::support {

namespace fs = std::filesystem;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

std::optional<fs::path> find_program(const std::string& name) {
  if (name.empty())
    return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0)
      return fs::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  const std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
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

namespace {

// Feeds output to the result and to on_line, one line at a time.
struct Collector {
  const ProcessOptions& opt;
  ProcessResult& r;
  std::string pending;

  void add(const char* p, std::size_t n) {
    if (r.output.size() < opt.max_output) {
      r.output.append(p, std::min(n, opt.max_output - r.output.size()));
    }
    if (!opt.on_line)
      return;
    pending.append(p, n);
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      opt.on_line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  }
  void finish() {
    if (!pending.empty() && opt.on_line)
      opt.on_line(pending);
    pending.clear();
  }
};

} // namespace

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
  // The child's environment, built here and handed to execve. Not bp::environment: its
  // find() in Boost 1.74 compares past the end of shorter names (AddressSanitizer shows it).
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const std::string key = kv.substr(0, kv.find('='));
    bool drop = opt.set_env.count(key) > 0;
    for (const auto& u : opt.unset_env)
      drop = drop || u == key;
    if (!drop)
      env_strings.push_back(kv);
  }
  for (const auto& [k, v] : opt.set_env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  const std::vector<std::string> args(argv.begin() + 1, argv.end());

  boost::asio::io_context ioc;
  bp::async_pipe pipe(ioc);
  bp::group group;
  std::error_code ec;
  bp::child child;
  try {
    const std::string dir = opt.cwd.empty() ? fs::current_path().string() : opt.cwd.string();
    child = bp::child(
        bp::exe = prog->string(), bp::args = args,
        bp::extend::on_setup = [&](auto& exec) { exec.env = envp.data(); }, bp::start_dir = dir,
        (bp::std_out & bp::std_err) > pipe, bp::std_in < bp::null, group, ec);
  } catch (const std::exception& e) {
    r.error = "cannot start " + prog->string() + ": " + e.what();
    return r;
  }
  if (ec) {
    r.error = "cannot start " + prog->string() + ": " + ec.message();
    return r;
  }

  Collector out{opt, r, {}};
  std::array<char, 8192> buf{};
  bool eof = false;
  std::function<void()> read_more = [&] {
    pipe.async_read_some(boost::asio::buffer(buf),
                         [&](const boost::system::error_code& e, std::size_t n) {
                           if (n)
                             out.add(buf.data(), n);
                           if (e) {
                             eof = true;
                             return;
                           }
                           read_more();
                         });
  };
  read_more();

  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(opt.timeout_s));
  std::optional<Clock::time_point> exited_at;
  for (;;) {
    const bool running = child.running(ec);
    if (!running && !exited_at)
      exited_at = Clock::now();
    if (eof && !running)
      break;
    // The child is gone but something it started still holds the pipe: stop reading soon.
    if (exited_at && Clock::now() - *exited_at > std::chrono::seconds(2))
      break;
    if (opt.timeout_s > 0 && Clock::now() >= deadline) {
      r.timed_out = true;
      break;
    }
    ioc.restart();
    ioc.run_for(std::chrono::milliseconds(50));
    if (eof)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (r.timed_out || child.running(ec)) {
    group.terminate(ec);
  } else {
    // Leftovers of the group (a grandchild that kept the pipe) do not outlive the call.
    group.terminate(ec);
  }
  child.wait(ec);
  out.finish();
  const int status = child.native_exit_code();
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  return r;
}

} // namespace mmaemu::support
