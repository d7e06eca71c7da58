// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The library ladder of libcuda and libnvrtc: each candidate path in turn is dlopen'ed and
// offered to `use`, which resolves its entry points; the first it accepts wins. Every refusal
// is one entry of `tried`, the path named once (dlerror's text usually starts with it). A
// library that was opened stays mapped: closing a CUDA library is never safe.

#include <dlfcn.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels::detail {

inline std::string dlopen_failure(const std::string& path, const char* dlerror_text) {
  const std::string why = dlerror_text ? dlerror_text : "dlopen failed";
  if (why.rfind(path + ": ", 0) == 0)
    return support::printable(why, 512);
  return support::printable(path, 256) + ": " + support::printable(why, 256);
}

// Why a candidate that names a file (it holds a '/': MMAEMU_LIBCUDA_PATH, MMAEMU_NVRTC_PATH,
// $CONDA_PREFIX/lib/..., $CUDA_HOME/lib64/...) is not dlopen'ed, or "": only a regular file
// (after symlinks) is. dlopen of a FIFO blocks for ever, a device or a folder is no library.
// Bare names are searched by the loader itself, in its own folders.
inline std::string not_a_library_file(const std::string& path) {
  if (path.find('/') == std::string::npos)
    return {};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return {}; // dlopen says why (no such file) in its own words
  if (S_ISREG(st.st_mode))
    return {};
  const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  return std::string("is ") + kind + ", not a regular file (not opened)";
}

// `opened` is called after every successful dlopen; `use(lib, path)` returns why it refuses
// the library, or an empty string when it takes it. Returns whether one was taken.
template <class Opened, class Use>
bool open_first_library(const std::vector<std::string>& candidates, std::string& tried,
                        Opened opened, Use use) {
  for (const std::string& path : candidates) {
    if (const std::string bad = not_a_library_file(path); !bad.empty()) {
      tried += (tried.empty() ? "" : "; ") + support::printable(path, 256) + ": " + bad;
      continue;
    }
    ::dlerror();
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      tried += (tried.empty() ? "" : "; ") + dlopen_failure(path, ::dlerror());
      continue;
    }
    opened();
    const std::string refused = use(lib, path);
    if (refused.empty())
      return true;
    tried += (tried.empty() ? "" : "; ") + support::printable(path, 256) + ": " + refused;
  }
  return false;
}

} // namespace mmaemu::kernels::detail
