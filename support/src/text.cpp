// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/text.hpp"

#include <cstdio>

namespace mmaemu::support {

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  const std::size_t n = s.size() < max ? s.size() : max;
  out.reserve(n + 16);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (n < s.size())
    out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

} // namespace mmaemu::support
