// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Parsing JSON that comes from a file anyone could have damaged (a fatbin manifest, a
// verdict): nesting is bounded before nlohmann sees the text, and every parse error becomes
// one message.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels::detail {

inline constexpr std::size_t kMaxJsonDepth = 16;

// The parsed value, or nothing with `why` set: invalid JSON, or arrays and objects nested
// deeper than kMaxJsonDepth (checked by a scan that skips strings, before parsing).
inline std::optional<nlohmann::json> parse_bounded_json(std::string_view text, std::string& why) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        why = "nested deeper than " + std::to_string(kMaxJsonDepth);
        return std::nullopt;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    why = "not valid JSON (" + support::printable(e.what(), 200) + ")";
    return std::nullopt;
  }
}

// Lower-case hex of `digits` characters.
inline bool is_lower_hex(std::string_view s, std::size_t digits) {
  if (s.size() != digits)
    return false;
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  }
  return true;
}

} // namespace mmaemu::kernels::detail
