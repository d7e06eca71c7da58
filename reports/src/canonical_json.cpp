// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/canonical_json.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

std::string canonical_dump(const nlohmann::json& value) {
  // ensure_ascii keeps the bytes independent of how a reader decodes them; strict UTF-8
  // handling throws on invalid sequences instead of writing bytes no parser accepts.
  return value.dump(2, ' ', true, nlohmann::json::error_handler_t::strict) + "\n";
}

namespace {

// Where `text` first nests arrays and objects deeper than kMaxJsonDepth, if it does.
// nlohmann parses iteratively but dumps recursively: a log of a million '[' would parse and
// then overflow the stack when canonical_dump re-serialises it.
std::optional<std::size_t> too_deep(const std::string& text) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string position(const std::string& text, std::size_t end, const std::string& where) {
  std::size_t line = 1, column = 1;
  end = std::min(end, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return support::printable(where, 256) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

} // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  if (const auto at = too_deep(text)) {
    throw std::runtime_error(position(text, *at, where) + ": not accepted (arrays and objects " +
                             "nested deeper than " + std::to_string(kMaxJsonDepth) + ")");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the position of the offending character.
    const std::size_t end = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    // Keep nlohmann's description, not its "[json.exception...] parse error at ...: " prefix.
    if (const auto p = what.find(": "); p != std::string::npos)
      what = what.substr(p + 2);
    // nlohmann quotes the bytes it last read: escaped, so a crafted file cannot forge lines.
    throw std::runtime_error(position(text, end, where) + ": not valid JSON (" +
                             support::printable(what, 200) + ")");
  } catch (const nlohmann::json::exception& e) {
    // Errors without a position: a number out of range ("number overflow parsing '1e999'").
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos)
      what = what.substr(p + 2);
    throw std::runtime_error(support::printable(where, 256) + ": not valid JSON (" +
                             support::printable(what, 200) + ")");
  }
}

std::string read_file_bytes(const std::filesystem::path& path) {
  return support::read_input_file(path, support::kMaxTextBytes, "file");
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_file_bytes(path), path.string());
}

} // namespace mmaemu::reports
