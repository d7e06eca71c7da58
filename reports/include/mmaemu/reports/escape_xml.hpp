// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Escaping text for XML 1.0 (the tiers' JUnit files): what a log or a case says is character
// data, in element content and in quoted attributes alike, and the file stays well-formed
// (XML forbids most control characters even as references, and invalid UTF-8).

#include <string>
#include <string_view>

namespace mmaemu::reports {

// `s` after display_text() (one line, no control characters, invalid UTF-8 as \xNN, U+FFFE
// and U+FFFF as \uXXXX), with & < > " ' as &amp; &lt; &gt; &quot; &apos;.
std::string xml_escape(std::string_view s);

} // namespace mmaemu::reports
