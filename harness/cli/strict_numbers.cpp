// SPDX-License-Identifier: BSD-2-Clause
#include "strict_numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "mmaemu/support/text.hpp"

namespace mmaemu::cli {

namespace {

// The name strict_numbers gives its check, so that a second call adds none.
constexpr const char* kCheckName = "mmaemu-strict-number";

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

void add_checks(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    // The type name without the descriptions of its validators ("INT:..." is still INT).
    std::string type = opt->get_type_name();
    if (const auto colon = type.find(':'); colon != std::string::npos)
      type.erase(colon);
    if (type != "INT" && type != "UINT" && type != "FLOAT")
      continue;
    try {
      (void)opt->get_validator(kCheckName);
      continue; // checked already
    } catch (const CLI::OptionNotFound&) {
    }
    // transform() puts it first, before a Range or NonNegativeNumber the option has (those
    // read '' as 0 themselves); it changes nothing, it only refuses.
    opt->transform(CLI::Validator(
        [type](std::string& text) { return strict_number_error(type, text); }, "", kCheckName));
  }
  for (CLI::App* sub : app.get_subcommands(std::function<bool(CLI::App*)>{}))
    add_checks(*sub);
}

} // namespace

std::string strict_number_error(const std::string& type, const std::string& text) {
  const std::string given = "'" + support::printable(text, 64) + "'";
  if (type == "INT" || type == "UINT") {
    const bool negative = type == "INT" && !text.empty() && text[0] == '-';
    const std::string_view digits = std::string_view(text).substr(negative ? 1 : 0);
    if (!all_digits(digits))
      return given + " is not a decimal integer";
    if (type == "INT") {
      std::int64_t v = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size())
        return given + " is out of range (from -2^63 to 2^63-1)";
    } else {
      std::uint64_t v = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size())
        return given + " is out of range (from 0 to 2^64-1)";
    }
    return {};
  }
  // FLOAT: the whole text one finite number (strtod also takes "nan", "inf" and hex floats;
  // those are refused as not finite or not decimal).
  if (text.empty() || text.find_first_of(" \t\n\r\f\vxXpP") != std::string::npos)
    return given + " is not a decimal number";
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size())
    return given + " is not a decimal number";
  if (!std::isfinite(v))
    return given + " is not a finite number";
  return {};
}

void strict_numbers(CLI::App& app) {
  add_checks(app);
}

std::optional<std::uint64_t> parse_hex_strict(std::string_view text, std::size_t max_digits) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  if (text.empty() || text.size() > max_digits || max_digits > 16)
    return std::nullopt;
  std::uint64_t v = 0;
  for (const char ch : text) {
    const int d = ch >= '0' && ch <= '9'   ? ch - '0'
                  : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                           : -1;
    if (d < 0)
      return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) {
        return text.empty() ? "'' is not " + what + " (the empty string is not one)"
                            : std::string();
      },
      "", "mmaemu-non-empty");
}

} // namespace mmaemu::cli
