// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Canonical JSON: the bytes that a validation log is signed over. The same value always
// serialises to the same bytes, so a log can be re-serialised and compared.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace mmaemu::reports {

// Keys sorted (nlohmann::json objects are std::map), two-space indent, every non-ASCII
// character escaped as \uXXXX, LF line ends, one trailing newline. Numbers use nlohmann's
// shortest round-trip form.
std::string canonical_dump(const nlohmann::json& value);

// Arrays and objects nested deeper than this are refused by parse_json_text (no mmaemu file
// comes near it; canonical_dump recurses once per level).
inline constexpr std::size_t kMaxJsonDepth = 256;

// Parses `text` with support::parse_json_input (at most support::kMaxTextBytes, kMaxJsonDepth
// levels, no key twice in one object); throws support::JsonInputError (a std::runtime_error):
// "<where>:<line>:<column>: not valid JSON (...)" for a syntax error, "<where>: nested deeper
// than 256 levels", "<where>: key 'a.b': appears twice in its object" (`where` echoed through
// support::printable).
nlohmann::json parse_json_text(const std::string& text, const std::string& where);

// Reads a whole file under support::read_input_file's rules (a regular file of at most
// support::kMaxTextBytes; a FIFO or a device is refused without blocking). Throws
// support::FileError (a std::runtime_error) naming the file.
std::string read_file_bytes(const std::filesystem::path& path);

// read_file_bytes + parse_json_text.
nlohmann::json read_json_file(const std::filesystem::path& path);

} // namespace mmaemu::reports
