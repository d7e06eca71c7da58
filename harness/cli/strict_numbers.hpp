// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Numbers on the command line are read strictly: CLI11 2.1 turns an empty value into 0,
// accepts octal and hex (strtoll base 0) and saturates an out-of-range value at INT64_MAX, so
// `--M ''` would run with M = 0 and `--M 99999999999999999999999` with M = 2^63-1.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::cli {

// Adds to every integer and floating-point option and positional of `app` and its
// subcommands (by CLI11's type name INT, UINT, FLOAT) a check that runs before CLI11's
// conversion: an integer is optional '-' (INT only) and decimal digits, within int64 (INT)
// or uint64 (UINT); a float is a finite decimal number, the whole text. A refusal is a
// usage error "<option>: '<text as given, escaped>' is not ...". Narrower types are checked
// by CLI11's own conversion afterwards. Idempotent.
void strict_numbers(CLI::App& app);

// The message for `text` as a value of CLI11 type `type` ("INT", "UINT", "FLOAT"), or empty
// when it is one.
std::string strict_number_error(const std::string& type, const std::string& text);

// A hex token of at most `max_digits` digits (an optional 0x prefix), nothing else: no sign,
// no space, not empty. std::stoul takes " +1f" and "-1" (wrapped); this does not.
std::optional<std::uint64_t> parse_hex_strict(std::string_view text, std::size_t max_digits = 16);

// A CLI11 check that refuses the empty string: "<what> (the empty string is not one)".
CLI::Validator non_empty(const std::string& what);

} // namespace mmaemu::cli
