// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/cache_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

namespace {

namespace fs = std::filesystem;

std::string shown(const fs::path& p) {
  return support::printable(p.string(), 256);
}

std::string octal(unsigned mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777u);
  return buf;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Creates `dir` (0700) if it does not exist, then refuses it unless it is a folder owned by
// the effective user that neither group nor others can write.
void ensure_private_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    const int e = errno;
    if (e == ENOENT) {
      std::error_code ec;
      fs::create_directories(dir.parent_path(), ec);
      if (!ec && ::mkdir(dir.c_str(), 0700) == 0)
        return ensure_private_dir(dir);
    }
    throw CacheDirError("cache folder " + shown(dir) + " cannot be created (" + std::strerror(e) +
                        ")");
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw CacheDirError("cache folder " + shown(dir) + " cannot be examined (" +
                        std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode))
    throw CacheDirError("cache folder " + shown(dir) + " is not a folder");
  if (st.st_uid != ::geteuid()) {
    throw CacheDirError("cache folder " + shown(dir) + " is refused: owned by uid " +
                        std::to_string(st.st_uid) + ", not by this user (uid " +
                        std::to_string(::geteuid()) + ")");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw CacheDirError("cache folder " + shown(dir) + " is refused: mode " + octal(st.st_mode) +
                        " is writable by group or others (chmod go-w, or set MMAEMU_CACHE_DIR)");
  }
}

} // namespace

fs::path cache_dir_path() {
  if (const char* d = env("MMAEMU_CACHE_DIR"))
    return fs::path(d);
  if (const char* x = env("XDG_CACHE_HOME"))
    return fs::path(x) / "mmaemu";
  if (const char* h = env("HOME"))
    return fs::path(h) / ".cache" / "mmaemu";
  throw CacheDirError("no cache folder: none of MMAEMU_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
}

fs::path cache_dir() {
  const fs::path dir = cache_dir_path();
  ensure_private_dir(dir);
  return dir;
}

fs::path cache_subdir(std::string_view name) {
  if (name.empty() ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos) {
    throw ValueError("cache subfolder '" + support::printable(name) + "' is not a plain word");
  }
  const fs::path sub = cache_dir() / std::string(name);
  ensure_private_dir(sub);
  return sub;
}

} // namespace mmaemu::kernels
