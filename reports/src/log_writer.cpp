// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/log_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "mmaemu/support/digest.hpp"
#include "mmaemu/reports/canonical_json.hpp"

namespace mmaemu::reports {

namespace fs = std::filesystem;

namespace {

std::atomic<unsigned> g_counter{0};

std::string errno_text(int e) {
  return std::strerror(e);
}

// A complete file under a hidden temporary name in `dir`; removed by the destructor.
class TempFile {
public:
  TempFile(const fs::path& dir, const std::string& hint, const std::string& content) {
    path_ = dir /
            ("." + hint + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_counter++));
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int e = errno;
      path_.clear();
      throw LogWriteError(dir.string() + ": cannot create a file there (" + errno_text(e) + ")");
    }
    const char* p = content.data();
    std::size_t left = content.size();
    int err = 0;
    while (left > 0) {
      const ssize_t w = ::write(fd, p, left);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        err = errno ? errno : EIO;
        break;
      }
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    if (err == 0 && ::fsync(fd) != 0)
      err = errno;
    if (::close(fd) != 0 && err == 0)
      err = errno;
    if (err != 0) {
      ::unlink(path_.c_str());
      path_.clear();
      throw LogWriteError(dir.string() + ": write failed (" + errno_text(err) + ")");
    }
  }
  ~TempFile() {
    if (!path_.empty())
      ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

// Gives `tmp` the name `target` unless `target` exists. Returns false if it exists.
bool link_new(const fs::path& tmp, const fs::path& target) {
  if (::link(tmp.c_str(), target.c_str()) == 0)
    return true;
  const int e = errno;
  if (e == EEXIST)
    return false;
  if (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == EXDEV) {
    // Filesystems without hard links: reserve the name exclusively, then replace the empty
    // reservation by the complete file in one rename.
    const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == EEXIST)
        return false;
      throw LogWriteError(target.string() + ": cannot be created (" + errno_text(errno) + ")");
    }
    ::close(fd);
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      const int e2 = errno;
      ::unlink(target.c_str());
      throw LogWriteError(target.string() + ": cannot be written (" + errno_text(e2) + ")");
    }
    return true;
  }
  throw LogWriteError(target.string() + ": cannot be written (" + errno_text(e) + ")");
}

} // namespace

fs::path prepare_log_dir(const fs::path& root, const std::string& date) {
  const fs::path dir = root / date;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw LogWriteError("log folder '" + dir.string() + "' cannot be created (" +
                        (ec ? ec.message() : "not a folder") + ")");
  }
  // Probe: can a file be created there? Checking permission bits is not enough (read-only
  // mounts, root squash, ACLs).
  try {
    TempFile probe(dir, "probe", "");
  } catch (const LogWriteError& e) {
    throw LogWriteError("log folder '" + dir.string() + "' is not writable (" + e.what() + ")");
  }
  return dir;
}

fs::path signature_path(const fs::path& log) {
  return fs::path(log.string() + ".sig");
}

std::string signature_file_text(const std::string& raw_signature) {
  return support::base64_encode(raw_signature) + "\n";
}

PublishedLog publish_log(nlohmann::json log, const fs::path& dir, const std::string& stem,
                         const Key* signing_key) {
  PublishedLog out;
  if (signing_key) {
    out.fingerprint = fingerprint(*signing_key);
    log["signed"] = true;
    log["signing"] = {{"algorithm", "Ed25519"},
                      {"key_fingerprint", out.fingerprint},
                      {"signature_file", "<log file name>.sig: base64 of the 64-byte signature"}};
  } else {
    log["signed"] = false;
    log.erase("signing");
  }
  const std::string bytes = canonical_dump(log);
  TempFile log_tmp(dir, stem + ".json", bytes);
  std::unique_ptr<TempFile> sig_tmp;
  if (signing_key) {
    sig_tmp = std::make_unique<TempFile>(dir, stem + ".json.sig",
                                         signature_file_text(sign_bytes(*signing_key, bytes)));
  }
  for (int n = 1; n < 10000; ++n) {
    const std::string name = stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".json";
    const fs::path target = dir / name;
    const fs::path sig_target = signature_path(target);
    if (sig_tmp) {
      // The signature first: a log never appears without it. A stale .sig of a name whose
      // log is missing belongs to another run (or a crash): skip that name too.
      if (!link_new(sig_tmp->path(), sig_target))
        continue;
      if (!link_new(log_tmp.path(), target)) {
        ::unlink(sig_target.c_str());
        continue;
      }
      out.signature = sig_target;
    } else {
      std::error_code ec;
      if (fs::exists(sig_target, ec))
        continue;
      if (!link_new(log_tmp.path(), target))
        continue;
    }
    out.log = target;
    return out;
  }
  throw LogWriteError(dir.string() + ": no free name for " + stem + ".json");
}

void write_file_replacing(const fs::path& path, const std::string& content) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  TempFile tmp(dir, path.filename().string(), content);
  if (::rename(tmp.path().c_str(), path.c_str()) != 0) {
    throw LogWriteError(path.string() + ": cannot be written (" + errno_text(errno) + ")");
  }
}

} // namespace mmaemu::reports
