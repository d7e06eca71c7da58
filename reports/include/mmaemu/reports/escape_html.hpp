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

// The same escaping with `apostrophe` as the entity of ' (html_escape: &#39;, xml_escape:
// &apos;): the one loop both markup formats share.
std::string entity_escape(std::string_view s, std::string_view apostrophe);

} // namespace mmaemu::reports
