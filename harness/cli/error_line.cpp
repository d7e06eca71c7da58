// SPDX-License-Identifier: BSD-2-Clause
// error_line (commands.hpp): shared by the `mmaemu` command and `python -m mmaemu`.

#include <iostream>
#include <string>

#include "commands.hpp"

namespace mmaemu::cli {

// One line whatever the message holds: the callers escape what they echo (support::printable),
// this is the net under them: control and non-ASCII bytes as \xNN (backslashes kept, so that
// text escaped before is not escaped twice), at most kMaxErrorLine bytes.
void error_line(const std::string& message) {
  constexpr std::size_t kMaxErrorLine = 2048;
  std::string line;
  std::size_t i = 0;
  for (; i < message.size() && line.size() < kMaxErrorLine; ++i) {
    const auto c = static_cast<unsigned char>(message[i]);
    if (c < 0x20 || c >= 0x7F) {
      static const char* hex = "0123456789abcdef";
      line += "\\x";
      line += hex[c >> 4];
      line += hex[c & 15];
    } else {
      line += static_cast<char>(c);
    }
  }
  if (i < message.size())
    line += "...(" + std::to_string(message.size()) + " bytes)";
  std::cerr << "mmaemu: " << line << '\n';
}

} // namespace mmaemu::cli
