// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/escape_markdown.hpp"

#include <cstring>

#include "mmaemu/reports/display_text.hpp"

namespace mmaemu::reports {

std::string markdown_escape(std::string_view s) {
  const std::string t = display_text(s);
  std::string out;
  out.reserve(t.size() + 8);
  std::size_t i = 0;
  // Leading spaces: four would open an indented code block inside a list item.
  for (; i < t.size() && t[i] == ' '; ++i)
    out += "&#32;";
  // Block syntax is only recognised at the start of the field.
  if (i < t.size() && std::strchr("#+-=", t[i]) != nullptr) {
    out += '\\';
  } else {
    std::size_t d = i;
    while (d < t.size() && d - i < 10 && t[d] >= '0' && t[d] <= '9')
      ++d;
    if (d > i && d < t.size() && (t[d] == '.' || t[d] == ')')) {
      out.append(t, i, d - i);
      out += '\\';
      i = d;
    }
  }
  for (; i < t.size(); ++i) {
    if (std::strchr("\\`*_[]<>|&~!$", t[i]) != nullptr && t[i] != '\0')
      out += '\\';
    out += t[i];
  }
  return out;
}

} // namespace mmaemu::reports
