// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "mmaemu/support/text.hpp"

namespace mmaemu::support {

namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m))
    return "a folder";
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISSOCK(m))
    return "a socket";
  return "not a regular file";
}

// Refuses what is not a regular file of at most `max` bytes; returns the size.
std::uint64_t check_stat(const struct stat& st, const fs::path& path, std::uint64_t max,
                         std::string_view what) {
  if (!S_ISREG(st.st_mode)) {
    throw FileError(shown_path(path) + ": " + std::string(what) + " is " + kind_of(st.st_mode) +
                    ", not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max) {
    throw FileError(shown_path(path) + ": " + std::string(what) + " is " + std::to_string(size) +
                    " bytes, over the limit of " + std::to_string(max));
  }
  return size;
}

std::atomic<std::uint64_t> g_whole_file_reads{0};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

std::uint64_t check_input_file(const fs::path& path, std::uint64_t max_bytes,
                               std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw FileError(shown_path(path) + ": " + std::string(what) + " cannot be opened (" +
                    std::strerror(errno) + ")");
  }
  return check_stat(st, path, max_bytes, what);
}

std::string read_input_file(const fs::path& path, std::uint64_t max_bytes, std::string_view what) {
  return read_input_file(path, max_bytes, what, {});
}

std::string read_input_file(const fs::path& path, std::uint64_t max_bytes, std::string_view what,
                            const std::function<void(std::string_view)>& on_bytes) {
  note_whole_file_read();
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (f.fd < 0) {
    throw FileError(shown_path(path) + ": " + std::string(what) + " cannot be opened (" +
                    std::strerror(errno) + ")");
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    throw FileError(shown_path(path) + ": " + std::string(what) + " cannot be read (" +
                    std::strerror(errno) + ")");
  }
  const std::uint64_t size = check_stat(st, path, max_bytes, what);
  std::string out;
  out.resize(static_cast<std::size_t>(size));
  std::size_t got = 0;
  // Pieces of at most 1 MiB when someone looks at them as they come (a digest stays in cache).
  const std::size_t piece = on_bytes ? std::size_t{1} << 20 : out.size();
  while (got < out.size()) {
    const ssize_t n = ::read(f.fd, out.data() + got, std::min(piece, out.size() - got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      throw FileError(shown_path(path) + ": " + std::string(what) + " cannot be read (" +
                      std::strerror(errno) + ")");
    }
    if (n == 0)
      break; // shrank while reading: keep what is there
    if (on_bytes)
      on_bytes(std::string_view(out.data() + got, static_cast<std::size_t>(n)));
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

void note_whole_file_read() {
  g_whole_file_reads.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t whole_file_reads() {
  return g_whole_file_reads.load(std::memory_order_relaxed);
}

void check_output_path(const fs::path& out, const std::vector<fs::path>& inputs) {
  struct stat st {};
  if (::lstat(out.c_str(), &st) == 0) {
    struct stat target {};
    if (S_ISLNK(st.st_mode) && ::stat(out.c_str(), &target) == 0)
      st = target;
    if (!S_ISLNK(st.st_mode) && !S_ISREG(st.st_mode)) {
      throw FileError(shown_path(out) + ": output is " + kind_of(st.st_mode) +
                      "; refusing to replace it");
    }
    for (const auto& in : inputs) {
      struct stat is {};
      if (::stat(in.c_str(), &is) == 0 && is.st_dev == st.st_dev && is.st_ino == st.st_ino) {
        throw FileError(shown_path(out) + ": output is the input " + shown_path(in) +
                        "; refusing to replace it");
      }
    }
  }
}

} // namespace mmaemu::support
