// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/canonical_json.hpp"

#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/json_input.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

std::string canonical_dump(const nlohmann::json& value) {
  // ensure_ascii keeps the bytes independent of how a reader decodes them; strict UTF-8
  // handling throws on invalid sequences instead of writing bytes no parser accepts.
  return value.dump(2, ' ', true, nlohmann::json::error_handler_t::strict) + "\n";
}

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  // The project's one strict JSON reader (support/json_input.hpp): the byte and depth bounds
  // refused while parsing (canonical_dump recurses once per level), a key given twice refused
  // (nlohmann would keep the last one in silence), syntax errors at their line and column
  // without the input's text.
  return support::parse_json_input(text, support::printable(where, 256),
                                   support::JsonLimits{support::kMaxTextBytes, kMaxJsonDepth});
}

std::string read_file_bytes(const std::filesystem::path& path) {
  return support::read_input_file(path, support::kMaxTextBytes, "file");
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_file_bytes(path), path.string());
}

} // namespace mmaemu::reports
