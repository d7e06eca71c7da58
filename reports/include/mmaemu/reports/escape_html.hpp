// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Escaping text for release.html: what a log says is shown as text, in element content and
// in quoted attribute values alike, never read as markup.

#include <string>
#include <string_view>

namespace mmaemu::reports {

// `s` after display_text() (one line, no control characters, invalid UTF-8 as \xNN), with
// & < > " ' as &amp; &lt; &gt; &quot; &#39;.
std::string html_escape(std::string_view s);

} // namespace mmaemu::reports
