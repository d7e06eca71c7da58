// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/stale_temps.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

namespace mmaemu::support {

namespace fs = std::filesystem;

namespace {

constexpr std::time_t kHostlessAgeS = 3600;

// Whether process `pid` exists on this host (EPERM: it exists, another user's).
bool alive(long pid) {
  if (pid <= 0 || pid > 0x3FFFFFFF)
    return true; // not a pid: never ours to judge
  if (pid == static_cast<long>(::getpid()))
    return true;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

// Parses "<pid>.<rest>"; false if it is not that.
bool split_pid(std::string_view s, long& pid, std::string_view& rest) {
  std::size_t i = 0;
  pid = 0;
  while (i < s.size() && i < 10 && s[i] >= '0' && s[i] <= '9')
    pid = pid * 10 + (s[i++] - '0');
  if (i == 0 || i >= s.size() || s[i] != '.')
    return false;
  rest = s.substr(i + 1);
  return true;
}

} // namespace

const std::string& temp_host_tag() {
  static const std::string tag = [] {
    char buf[256] = {};
    std::string t;
    if (::gethostname(buf, sizeof buf - 1) == 0) {
      for (const char* c = buf; *c && t.size() < 32; ++c) {
        const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                        (*c >= '0' && *c <= '9') || *c == '-';
        if (ok)
          t += *c;
      }
    }
    return t.empty() ? std::string("host") : t;
  }();
  return tag;
}

std::string temp_file_name(std::string_view prefix) {
  static std::atomic<unsigned> counter{0};
  return std::string(prefix) + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
         temp_host_tag();
}

std::size_t remove_stale_temps(const fs::path& dir, std::string_view prefix) {
  const fs::path folder = dir.empty() ? fs::path(".") : dir;
  const int dfd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
  if (dfd < 0)
    return 0;
  DIR* d = ::fdopendir(dfd);
  if (!d) {
    ::close(dfd);
    return 0;
  }
  const std::string& host = temp_host_tag();
  const std::time_t now = std::time(nullptr);
  std::size_t removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
      continue;
    long pid = 0;
    std::string_view rest;
    if (!split_pid(name.substr(prefix.size()), pid, rest))
      continue;
    // rest: "<n>.<host>" (this writer) or "<n>" (an older one, no host).
    const std::size_t dot = rest.find('.');
    const bool hostless = dot == std::string_view::npos;
    if (!hostless && rest.substr(dot + 1) != host)
      continue; // another machine's process: its pid means nothing here
    if (alive(pid))
      continue;
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (hostless && now - st.st_mtime < kHostlessAgeS)
      continue;
    if (::unlinkat(dfd, e->d_name, 0) == 0)
      ++removed;
  }
  ::closedir(d);
  return removed;
}

} // namespace mmaemu::support
