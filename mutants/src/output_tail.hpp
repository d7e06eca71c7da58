// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The end of a child's output, for one-line reasons (private to libmmaemu_mutants).

#include <string>

namespace mmaemu::mutants::detail {

// The last `lines` lines of `text`, at most 4000 bytes.
inline std::string last_lines(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  for (std::size_t i = 0; i <= lines && pos > 0; ++i) {
    const auto nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) {
      pos = 0;
      break;
    }
    pos = nl;
  }
  std::string s = text.substr(pos);
  return s.size() > 4000 ? s.substr(s.size() - 4000) : s;
}

} // namespace mmaemu::mutants::detail
