// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/cublaslt_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "library_ladder.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels::cublaslt {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPathVar = "MMAEMU_CUBLASLT_PATH";
constexpr const char* kLibPrefix = "libcublasLt.so";

struct State {
  std::mutex mu;
  std::atomic<bool> loaded{false};
  std::unique_ptr<Library> lib;
  std::vector<std::string> site_dirs;
};

State& state() {
  static State* s = new State; // never destroyed: the library outlives static destructors
  return *s;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

void add_unique(std::vector<std::string>& out, const std::string& c) {
  if (!c.empty() && std::find(out.begin(), out.end(), c) == out.end())
    out.push_back(c);
}

// libcublasLt.so* in `dir` that are regular files, highest name first (libcublasLt.so.13
// before libcublasLt.so).
void add_glob(const fs::path& dir, std::vector<std::string>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(kLibPrefix, 0) == 0 && fs::is_regular_file(e.path(), ec))
      found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  for (const auto& f : found)
    add_unique(out, f);
}

// <base>/lib/python3*/<leaf> folders, newest-looking first.
void add_python_dirs(const fs::path& base, const char* leaf, std::vector<std::string>& out) {
  std::error_code ec;
  const fs::path lib = base / "lib";
  if (!fs::is_directory(lib, ec))
    return;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(lib, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("python3", 0) == 0 && fs::is_directory(e.path() / leaf, ec))
      found.push_back((e.path() / leaf).string());
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  for (const auto& f : found)
    add_unique(out, f);
}

std::vector<std::string> site_dirs(const std::vector<std::string>& from_python) {
  std::vector<std::string> dirs;
  for (const auto& d : from_python)
    add_unique(dirs, d);
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const std::string v = env_or_empty(var);
    if (!v.empty())
      add_python_dirs(v, "site-packages", dirs);
  }
  const std::string pp = env_or_empty("PYTHONPATH");
  for (std::size_t start = 0; start <= pp.size();) {
    const std::size_t colon = pp.find(':', start);
    const std::size_t end = colon == std::string::npos ? pp.size() : colon;
    add_unique(dirs, pp.substr(start, end - start));
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  const std::string home = env_or_empty("HOME");
  if (!home.empty())
    add_python_dirs(fs::path(home) / ".local", "site-packages", dirs);
  add_python_dirs("/usr/local", "dist-packages", dirs);
  add_python_dirs("/usr/local", "site-packages", dirs);
  add_unique(dirs, "/usr/lib/python3/dist-packages");
  return dirs;
}

// A libcublasLt already mapped into this process (torch's), by the path the kernel reports.
std::vector<std::string> mapped_libraries() {
  std::vector<std::string> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos)
      continue;
    const std::string path = line.substr(slash);
    const auto base = path.rfind('/');
    if (path.compare(base + 1, std::strlen(kLibPrefix), kLibPrefix) == 0 &&
        path.find(" (deleted)") == std::string::npos)
      add_unique(out, path);
  }
  return out;
}

std::vector<std::string> ladder(const std::vector<std::string>& from_python) {
  const std::string forced = env_or_empty(kPathVar);
  if (!forced.empty())
    return {forced};
  std::vector<std::string> out = mapped_libraries();
  for (const auto& site : site_dirs(from_python)) {
    add_glob(fs::path(site) / "nvidia" / "cu13" / "lib", out);
    add_glob(fs::path(site) / "nvidia" / "cublas" / "lib", out);
  }
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
    add_unique(out, name);
  const std::string cuda_home = env_or_empty("CUDA_HOME");
  if (!cuda_home.empty())
    add_glob(fs::path(cuda_home) / "lib64", out);
  add_glob("/usr/local/cuda/lib64", out);
  return out;
}

} // namespace

std::string not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? "not found"
                           : std::string("cannot be examined: ") + std::strerror(errno);
  if (S_ISREG(st.st_mode))
    return {};
  if (S_ISDIR(st.st_mode))
    return "a folder, not a regular file";
  if (S_ISFIFO(st.st_mode))
    return "a FIFO, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return "a device, not a regular file";
  if (S_ISSOCK(st.st_mode))
    return "a socket, not a regular file";
  return "not a regular file";
}

bool cublaslt_loaded() {
  return state().loaded.load();
}

std::vector<std::string> candidates() {
  State& s = state();
  std::vector<std::string> dirs;
  {
    std::lock_guard lock(s.mu);
    dirs = s.site_dirs;
  }
  return ladder(dirs);
}

void set_site_dirs(std::vector<std::string> dirs) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.site_dirs = std::move(dirs);
}

const Library* try_library(std::string* why) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.lib)
    return s.lib.get();
  const bool forced = !env_or_empty(kPathVar).empty();
  std::string tried;
  for (const std::string& path : ladder(s.site_dirs)) {
    if (forced && path.find('/') == std::string::npos) {
      // A bare name would be searched for by the loader, in folders nobody examined.
      tried = std::string(kPathVar) + " '" + support::printable(path, 256) +
              "': not a path (name the library's file, e.g. .../libcublasLt.so.13)";
      break;
    }
    if (path.find('/') != std::string::npos) {
      // A path is examined before dlopen: opening a FIFO would block, a folder or a device
      // is never a library.
      const std::string bad = not_a_regular_file(path);
      if (!bad.empty()) {
        tried += (tried.empty() ? "" : "; ") + std::string(forced ? kPathVar : "") +
                 (forced ? " " : "") + support::printable(path, 256) + ": " + bad;
        continue;
      }
    }
    const bool taken = detail::open_first_library(
        {path}, tried, [&] { s.loaded = true; },
        [&](void* handle, const std::string& p) -> std::string {
          auto lib = std::make_unique<Library>();
          const std::string missing = resolve_symbols(handle, lib->api);
          if (!missing.empty())
            return "missing symbols " + missing;
          lib->path = p;
          lib->version = lib->api.get_version();
          lib->version_text = version_text(lib->version);
          s.lib = std::move(lib);
          return {};
        });
    if (taken)
      return s.lib.get();
  }
  if (why)
    *why = "no usable cuBLASLt (" + (tried.empty() ? std::string("no candidate") : tried) + ")";
  return nullptr;
}

} // namespace mmaemu::kernels::cublaslt
