// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/escape_html.hpp"

#include "mmaemu/reports/display_text.hpp"

namespace mmaemu::reports {

std::string html_escape(std::string_view s) {
  const std::string t = display_text(s);
  std::string out;
  out.reserve(t.size() + 16);
  for (char c : t) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace mmaemu::reports
