// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_layout.hpp"

#include <cstdlib>
#include <fstream>

namespace mmaemu::harness {

namespace fs = std::filesystem;

fs::path self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

std::optional<fs::path> source_dir_of_build(const fs::path& build_dir) {
  std::ifstream in(build_dir / "CMakeCache.txt");
  if (!in)
    return std::nullopt;
  std::string line;
  const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      fs::path src = line.substr(key.size());
      std::error_code ec;
      if (fs::is_directory(src, ec))
        return src;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Layout discover_layout(const LayoutOverrides& o, const fs::path& exe_in) {
  Layout l;
  l.exe = exe_in.empty() ? self_exe() : exe_in;
  std::error_code ec;
  const fs::path up = l.exe.parent_path().parent_path();
  const fs::path share = up / "share" / "mmaemu";
  if (!l.exe.empty() && fs::is_directory(share / "tiers", ec)) {
    // Installed: everything from the prefix, nothing from any source tree.
    l.origin = "installed";
    l.prefix = up;
    l.tiers_dir = share / "tiers";
    l.recordings_dir = share / "recordings";
    l.keys_dir = share / "keys";
    l.log_root = fs::current_path(ec) / "validation_logs";
  } else if (!l.exe.empty() && fs::exists(up / "CMakeCache.txt", ec)) {
    l.origin = "build tree";
    l.build_dir = up;
    l.source_dir = source_dir_of_build(up);
  } else {
    l.origin = "working directory";
  }
  if (!o.build_dir.empty()) {
    l.build_dir = fs::absolute(o.build_dir);
    if (auto src = source_dir_of_build(*l.build_dir))
      l.source_dir = src;
  }
  if (l.origin != "installed") {
    const fs::path base = l.source_dir ? *l.source_dir : fs::current_path(ec);
    l.tiers_dir = base / "tiers";
    l.recordings_dir = base / "recordings" / "data";
    l.keys_dir = base / "docs" / "validation_logs" / "keys";
    l.log_root =
        l.build_dir ? *l.build_dir / "validation_logs" : fs::current_path(ec) / "validation_logs";
    if (l.source_dir)
      l.publish_root = *l.source_dir / "docs" / "validation_logs";
  }
  if (const char* env = std::getenv("MMAEMU_LOG_DIR"); env && *env)
    l.log_root = env;
  if (!o.tiers_dir.empty())
    l.tiers_dir = o.tiers_dir;
  if (!o.recordings_dir.empty())
    l.recordings_dir = o.recordings_dir;
  if (!o.keys_dir.empty())
    l.keys_dir = o.keys_dir;
  if (!o.log_root.empty())
    l.log_root = o.log_root;
  return l;
}

} // namespace mmaemu::harness
