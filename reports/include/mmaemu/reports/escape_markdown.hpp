// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Escaping text for release.md (CommonMark and GitHub's tables): what a log says is shown as
// text, never read as Markdown.

#include <string>
#include <string_view>

namespace mmaemu::reports {

// `s` as one inline field of release.md (a table cell or a list item's text): display_text()
// first (one line, no control characters, invalid UTF-8 as \xNN), then a backslash before
// every \ ` * _ [ ] < > | & ~ ! $ (no emphasis, code span, link, image, raw HTML, entity,
// strikethrough, math or table cell break can start), and at the start of the field a
// backslash before # + - = (no heading, list or thematic break) and before the . or ) of a
// leading number (no ordered list); leading spaces become &#32; (no indented code).
std::string markdown_escape(std::string_view s);

} // namespace mmaemu::reports
