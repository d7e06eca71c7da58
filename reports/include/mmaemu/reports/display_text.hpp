// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The step every report format shares before its own escaping: text copied from a log (a
// signed log is signed, not trusted) made visible and one line. Valid UTF-8 is kept; what a
// reader could not see, or what could forge lines, reorder text or break a parser, becomes a
// visible escape.

#include <string>
#include <string_view>

namespace mmaemu::reports {

// `s` with: a backslash as \\; each byte of a C0 control (CR, LF and TAB included), DEL or
// invalid UTF-8 (stray continuation bytes, overlong forms, surrogates, beyond U+10FFFF, a
// truncated sequence) as \xNN; the C1 controls U+0080..U+009F, the bidirectional controls
// (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), U+2028, U+2029, U+FEFF and the
// noncharacters U+FFFE, U+FFFF as \uXXXX. The result is valid UTF-8 without control
// characters, so every format's escaping deals with printable text only.
std::string display_text(std::string_view s);

} // namespace mmaemu::reports
