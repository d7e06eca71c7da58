// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What the run kinds share for the work they start (private to the harness library): a work
// folder under $TMPDIR, and the last lines of a process's output as a one-line reason. Its own
// file, below both the runner and the kinds, so that calls go one way: tier_runner.cpp calls
// the kinds (kinds/*.cpp), which call this.

#include <cstddef>
#include <filesystem>
#include <string>

namespace mmaemu::harness::detail {

// A folder under $TMPDIR that is removed with its contents when this object goes, unless
// keep() was called.
class WorkDir {
public:
  explicit WorkDir(const std::string& hint);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// The last `lines` lines of `text`, joined by " | " (for one-line reasons).
std::string tail_lines(const std::string& text, std::size_t lines);

} // namespace mmaemu::harness::detail
