// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/escape_html.hpp"

#include "mmaemu/reports/display_text.hpp"

namespace mmaemu::reports {

std::string entity_escape(std::string_view s, std::string_view apostrophe) {
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
      out += apostrophe;
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string html_escape(std::string_view s) {
  return entity_escape(s, "&#39;");
}

} // namespace mmaemu::reports
