// SPDX-License-Identifier: BSD-2-Clause
#include "hdf5_guard.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include "mmaemu/recordings/recording.hpp"

// Present only when a sanitizer runtime is linked (ASan, UBSan, libFuzzer builds): the child
// must not run the runtime's death callback (libFuzzer's writes a crash artifact for what is
// libhdf5's crash in a child), and must not limit its address space (ASan reserves terabytes
// of shadow memory).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace mmaemu::recordings::detail {

namespace {

constexpr std::size_t kMaxReport = 64 * 1024;

void write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<std::size_t>(n);
  }
}

// The address space in use now, in bytes (0 if unknown).
std::uint64_t current_address_space() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  unsigned long long pages = 0;
  const int got = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  if (got != 1)
    return 0;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// The child's side: never returns.
[[noreturn]] void child_main(int out_fd, const std::function<std::string()>& parse,
                             std::uint64_t memory_budget, pid_t parent) {
  // The child must not outlive its parent (killed at a fuzzer's time limit, say) while
  // libhdf5 loops.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent)
    ::_exit(5);
  // A crash must end the child by its signal: handlers inherited from the parent (a test
  // framework's, a fuzzer's, a sanitizer's) would report it as the parent's own crash.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
  sigset_t all;
  ::sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  // glibc's heap-corruption aborts and libhdf5's own prints would interleave with the
  // caller's output; the parent reports the outcome in one line instead.
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
  }
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (__sanitizer_set_death_callback) {
    __sanitizer_set_death_callback(nullptr);
  } else if (memory_budget) {
    const std::uint64_t now = current_address_space();
    struct rlimit lim {};
    if (now && ::getrlimit(RLIMIT_AS, &lim) == 0) {
      const auto want = static_cast<rlim_t>(now + memory_budget);
      if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > want)
        lim.rlim_cur = want;
      ::setrlimit(RLIMIT_AS, &lim);
    }
  }
  int code = 4;
  std::string report;
  try {
    report = "K" + parse();
    code = 0;
  } catch (const RecordingError& e) {
    code = 2;
    report = std::string("E") + e.what();
  } catch (const std::bad_alloc&) {
    code = 3;
    report = "M";
  } catch (const std::exception& e) {
    report = std::string("X") + e.what();
  } catch (...) {
    report = "X";
  }
  if (code != 0 && report.size() > kMaxReport)
    report.resize(kMaxReport);
  write_all(out_fd, report);
  ::_exit(code);
}

std::string signal_text(int sig) {
  const char* s = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (s ? std::string(", ") + s : std::string());
}

} // namespace

GuardOutcome run_in_child(const std::string& name, const std::function<std::string()>& parse,
                          std::uint64_t memory_budget, double timeout_s, std::uint64_t max_result) {
  const std::uint64_t max_report = 1 + std::max<std::uint64_t>(max_result, kMaxReport);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw RecordingError(name +
                         ": cannot start the reading process (pipe: " + std::strerror(errno) + ")");
  }
  std::fflush(nullptr); // nothing buffered is written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw RecordingError(name + ": cannot start the reading process (fork: " + std::strerror(e) +
                         ")");
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], parse, memory_budget, parent);
  }
  ::close(fds[1]);

  using clock = std::chrono::steady_clock;
  const auto deadline =
      clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  std::string report;
  bool timed_out = false;
  bool oversized = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p {};
    p.fd = fds[0];
    p.events = POLLIN;
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000 * 1000)));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      break;
    if (r == 0)
      continue;
    char buf[65536];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      break; // end of file: the child has exited (or closed the pipe)
    if (report.size() + static_cast<std::uint64_t>(n) <= max_report) {
      report.append(buf, static_cast<std::size_t>(n));
    } else {
      oversized = true; // keep draining, so that the child is not blocked writing
    }
  }
  ::close(fds[0]);
  if (timed_out)
    ::kill(pid, SIGKILL);
  int status = 0;
  pid_t w;
  do {
    w = ::waitpid(pid, &status, 0);
  } while (w < 0 && errno == EINTR);
  const bool have_status = w == pid;

  GuardOutcome out;
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", timeout_s);
    out.message =
        name + ": reading it took longer than " + limit +
        " s (corrupt data can make the HDF5 library loop or inflate without end); refused";
    return out;
  }
  const bool exited = have_status && WIFEXITED(status);
  const int code = exited ? WEXITSTATUS(status) : -1;
  const char tag = report.empty() ? '\0' : report[0];
  // Without a status (SIGCHLD ignored by the caller: the child was reaped elsewhere) the
  // report alone decides; it is written only after `parse` has returned or thrown.
  if (oversized) {
    out.message = name + ": the reading process sent more than " + std::to_string(max_report) +
                  " bytes; refused";
    return out;
  }
  if (tag == 'K' && (!have_status || code == 0)) {
    out.kind = GuardOutcome::ok;
    out.result = report.substr(1);
    return out;
  }
  if (tag == 'E' && (!have_status || code == 2)) {
    out.kind = GuardOutcome::clean_error;
    out.message = report.substr(1);
    return out;
  }
  if (tag == 'M' && (!have_status || code == 3)) {
    out.message = name + ": reading it needs more memory than the reader allows (" +
                  std::to_string(memory_budget >> 20) + " MiB; corrupt or hostile sizes?)";
    return out;
  }
  if (tag == 'X' && (!have_status || code == 4)) {
    out.message = name + ": unexpected error reading it: " + report.substr(1);
    return out;
  }
  if (have_status && WIFSIGNALED(status)) {
    out.message = name + ": the HDF5 library crashed reading it (" + signal_text(WTERMSIG(status)) +
                  "); the file is corrupt";
  } else if (exited) {
    out.message = name + ": the HDF5 library crashed reading it (exit status " +
                  std::to_string(code) + "); the file is corrupt";
  } else {
    out.message = name + ": the reading process ended without a report; the file is corrupt";
  }
  return out;
}

} // namespace mmaemu::recordings::detail
