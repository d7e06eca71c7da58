// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The library ladder of libcuda and libnvrtc: each candidate path in turn is dlopen'ed and
// offered to `use`, which resolves its entry points; the first it accepts wins. Every refusal
// is one entry of `tried`, the path named once (dlerror's text usually starts with it). A
// library that was opened stays mapped: closing a CUDA library is never safe.

#include <dlfcn.h>

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

// `opened` is called after every successful dlopen; `use(lib, path)` returns why it refuses
// the library, or an empty string when it takes it. Returns whether one was taken.
template <class Opened, class Use>
bool open_first_library(const std::vector<std::string>& candidates, std::string& tried,
                        Opened opened, Use use) {
  for (const std::string& path : candidates) {
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
