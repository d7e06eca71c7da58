// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stdexcept>

namespace mmaemu::harness {

namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, const std::string& content) {
  static std::atomic<unsigned> counter{0};
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error(path.string() + ": folder " + dir.string() + " does not exist");
  }
  const fs::path tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()) +
                              "." + std::to_string(counter++));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path.string() + ": cannot be written");
    out << content;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      throw std::runtime_error(path.string() + ": write failed");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ec2;
    fs::remove(tmp, ec2);
    throw std::runtime_error(path.string() + ": cannot be written (" + ec.message() + ")");
  }
}

}  // namespace mmaemu::harness
