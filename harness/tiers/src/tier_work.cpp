// SPDX-License-Identifier: BSD-2-Clause
#include "tier_work.hpp"

#include <stdlib.h>

#include <cstdlib>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;

WorkDir::WorkDir(const std::string& hint) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/mmaemu-" + hint + "-XXXXXX";
  if (!::mkdtemp(templ.data())) {
    throw std::runtime_error("cannot create a work folder " + templ + " (TMPDIR?)");
  }
  path_ = templ;
}

WorkDir::~WorkDir() {
  if (keep_)
    return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string tail_lines(const std::string& text, std::size_t lines) {
  std::vector<std::string> all;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      nl = text.size();
    std::string line = text.substr(start, nl - start);
    if (!line.empty())
      all.push_back(line);
    start = nl + 1;
  }
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += (out.empty() ? "" : " | ") + all[i];
  }
  return out;
}

} // namespace mmaemu::harness::detail
