// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/stale_temps.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::support {

namespace fs = std::filesystem;

namespace {

fs::path folder_of(const fs::path& path) {
  fs::path dir = path.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// ".<name>.tmp.<pid>.<n>.<host>" beside `path`. Those a killed writer of the same target left
// behind (their process is gone) are removed first (stale_temps.hpp).
fs::path temp_beside(const fs::path& path) {
  const std::string prefix = "." + path.filename().string() + ".tmp.";
  remove_stale_temps(folder_of(path), prefix);
  return folder_of(path) / temp_file_name(prefix);
}

void check_folder(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(folder_of(path), ec)) {
    throw FileError(shown_path(path) + ": folder " + shown_path(folder_of(path)) +
                    " does not exist");
  }
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    return;
  ::fsync(fd);
  ::close(fd);
}

// Renames `tmp` onto `path` after syncing it; removes `tmp` on failure.
void commit(const fs::path& tmp, const fs::path& path) {
  fsync_path(tmp, O_RDONLY);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw FileError(shown_path(path) + ": cannot be written (" + why + ")");
  }
  fsync_path(folder_of(path), O_RDONLY | O_DIRECTORY);
}

// A complete, synced temporary file beside `path` holding `content`.
fs::path write_temp(const fs::path& path, std::string_view content, unsigned mode) {
  const fs::path tmp = temp_beside(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    throw FileError(shown_path(path) + ": cannot be written (" + std::strerror(errno) + ")");
  }
  std::size_t done = 0;
  int err = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!err && ::fsync(fd) != 0)
    err = errno;
  if (::close(fd) != 0 && !err)
    err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    throw FileError(shown_path(path) + ": write failed (" + std::strerror(err) + ")");
  }
  return tmp;
}

} // namespace

void write_file_atomic(const fs::path& path, std::string_view content, unsigned mode,
                       const std::vector<fs::path>& inputs) {
  check_output_path(path, inputs);
  check_folder(path);
  commit(write_temp(path, content, mode), path);
}

bool write_file_exclusive(const fs::path& path, std::string_view content, unsigned mode) {
  check_folder(path);
  const fs::path tmp = write_temp(path, content, mode);
  if (::link(tmp.c_str(), path.c_str()) == 0) {
    ::unlink(tmp.c_str());
    fsync_path(folder_of(path), O_RDONLY | O_DIRECTORY);
    return true;
  }
  const int e = errno;
  if (e == EEXIST) {
    ::unlink(tmp.c_str());
    return false;
  }
  if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP && e != EXDEV) {
    ::unlink(tmp.c_str());
    throw FileError(shown_path(path) + ": cannot be written (" + std::strerror(e) + ")");
  }
  // Filesystems without hard links: reserve the name exclusively, then replace the empty
  // reservation by the complete file in one rename.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    const int e2 = errno;
    ::unlink(tmp.c_str());
    if (e2 == EEXIST)
      return false;
    throw FileError(shown_path(path) + ": cannot be created (" + std::strerror(e2) + ")");
  }
  ::close(fd);
  commit(tmp, path);
  return true;
}

void write_file_atomic_with(const fs::path& path,
                            const std::function<void(const fs::path& tmp)>& write,
                            const std::vector<fs::path>& inputs) {
  check_output_path(path, inputs);
  check_folder(path);
  const fs::path tmp = temp_beside(path);
  try {
    write(tmp);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  commit(tmp, path);
}

} // namespace mmaemu::support
