// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/canonical_json.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mmaemu::reports {

std::string canonical_dump(const nlohmann::json& value) {
  // ensure_ascii keeps the bytes independent of how a reader decodes them; strict UTF-8
  // handling throws on invalid sequences instead of writing bytes no parser accepts.
  return value.dump(2, ' ', true, nlohmann::json::error_handler_t::strict) + "\n";
}

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the position of the offending character.
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // Keep nlohmann's description, not its "[json.exception...] parse error at ...: " prefix.
    if (const auto p = what.find(": "); p != std::string::npos)
      what = what.substr(p + 2);
    throw std::runtime_error(where + ":" + std::to_string(line) + ":" + std::to_string(column) +
                             ": not valid JSON (" + what + ")");
  }
}

std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(path.string() + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad())
    throw std::runtime_error(path.string() + ": read failed");
  return s.str();
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_file_bytes(path), path.string());
}

} // namespace mmaemu::reports
