// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Echoing what came from a file or an argument back in a message: control characters
// escaped, length bounded, so that a crafted input cannot forge lines or flood a terminal.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace mmaemu::support {

inline constexpr std::size_t kEchoMax = 64;

// `s` with bytes < 0x20, 0x7F and non-ASCII bytes written as \xNN (backslash as \\), cut to
// at most `max` source bytes with "...(N bytes)" appended when cut.
std::string printable(std::string_view s, std::size_t max = kEchoMax);

// A path named in a message: printable(p.string(), max).
inline std::string shown_path(const std::filesystem::path& p, std::size_t max = 256) {
  return printable(p.string(), max);
}

} // namespace mmaemu::support
