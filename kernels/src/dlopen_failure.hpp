// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// One entry of the "tried" list of a library ladder (libcuda, libnvrtc): the path and why
// dlopen refused it, the path only once (dlerror's text usually starts with it).

#include <string>

#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels::detail {

inline std::string dlopen_failure(const std::string& path, const char* dlerror_text) {
  const std::string why = dlerror_text ? dlerror_text : "dlopen failed";
  if (why.rfind(path + ": ", 0) == 0)
    return support::printable(why, 512);
  return support::printable(path, 256) + ": " + support::printable(why, 256);
}

} // namespace mmaemu::kernels::detail
