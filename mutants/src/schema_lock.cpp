// SPDX-License-Identifier: BSD-2-Clause
#include "schema_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mmaemu/mutants/workspace.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::mutants::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStampName = ".mmaemu-schema-stamp";

void lock(int fd, int how, const fs::path& path) {
  while (::flock(fd, how) != 0) {
    if (errno == EINTR)
      continue;
    throw WorkspaceError("cannot lock " + path.string() + ": " + std::strerror(errno));
  }
}

} // namespace

SchemaLock::SchemaLock(const fs::path& path) : path_(path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw WorkspaceError("cannot open the lock " + path.string() + ": " + std::strerror(errno));
}

SchemaLock::~SchemaLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the lock
}

void SchemaLock::exclusive() {
  lock(fd_, LOCK_EX, path_);
}

void SchemaLock::shared() {
  lock(fd_, LOCK_SH, path_);
}

std::string read_schema_stamp(const fs::path& schema_dir) {
  std::error_code ec;
  if (!fs::is_regular_file(schema_dir / kStampName, ec))
    return {};
  try {
    return support::read_input_file(schema_dir / kStampName, 4096, "schema stamp");
  } catch (const std::exception&) {
    return {};
  }
}

void write_schema_stamp(const fs::path& schema_dir, const std::string& stamp) {
  support::write_file_atomic(schema_dir / kStampName, stamp);
}

void remove_schema_stamp(const fs::path& schema_dir) {
  std::error_code ec;
  fs::remove(schema_dir / kStampName, ec);
}

} // namespace mmaemu::mutants::detail
