// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Escaping text for HTML and XML (release.html, JUnit XML): & < > " ' become entities and
// the control characters XML 1.0 forbids even escaped become '?'.

#include <string>

namespace mmaemu::reports {

inline std::string markup_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
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
      out += (c < 0x20 && c != '\n' && c != '\t') ? '?' : static_cast<char>(c);
    }
  }
  return out;
}

} // namespace mmaemu::reports
