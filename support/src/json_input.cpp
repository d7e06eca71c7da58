// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/support/json_input.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "mmaemu/support/text.hpp"

namespace mmaemu::support {

using nlohmann::json;

JsonInputError::JsonInputError(std::string source, std::string path, std::string problem)
    : std::runtime_error((source.empty() ? std::string() : source + ": ") +
                         (path.empty() ? std::string() : "key '" + path + "': ") + problem),
      source_(std::move(source)), path_(std::move(path)), problem_(std::move(problem)) {}

std::string JsonInputError::without_source() const {
  return (path_.empty() ? std::string() : "key '" + path_ + "': ") + problem_;
}

JsonLocation JsonLocation::key(std::string_view k) const {
  return JsonLocation(source_, path_.empty() ? printable(k) : path_ + "." + printable(k));
}

JsonLocation JsonLocation::index(std::size_t i) const {
  return JsonLocation(source_, path_ + "[" + std::to_string(i) + "]");
}

void JsonLocation::fail(std::string problem) const {
  throw JsonInputError(source_, path_, std::move(problem));
}

namespace {

// What the parse has open, for the depth bound and for naming a duplicate key by its path.
struct JsonFrame {
  bool object = false;
  std::size_t elements = 0; // of an array: the elements begun so far
  std::string key;          // of an object: the member being read
  std::unordered_set<std::string> keys;
};

std::string frames_path(const std::vector<JsonFrame>& frames) {
  std::string path;
  for (const JsonFrame& f : frames) {
    if (f.object)
      path += (path.empty() ? "" : ".") + printable(f.key);
    else
      path += "[" + std::to_string(f.elements - 1) + "]";
  }
  return path;
}

// nlohmann's description of a syntax error without its "[json.exception.parse_error.101]
// parse error at line L, column C: " prefix (the position is computed here from the byte
// offset) and without the token it echoes ("; last read: '...'"), which may be the rest of
// the input.
std::string syntax_error_text(const char* what) {
  std::string s = what;
  if (const auto p = s.find(": "); p != std::string::npos)
    s.erase(0, p + 2);
  if (const auto p = s.find("; last read"); p != std::string::npos)
    s.erase(p);
  return printable(s, 160);
}

// A number for a range message: shortest round trip, "2592000" rather than "2592000.0".
std::string shown_number(double d) {
  std::string s = json(d).dump();
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0)
    s.erase(s.size() - 2);
  return s;
}

} // namespace

json parse_json_input(std::string_view text, std::string_view source_view,
                      const JsonLimits& limits) {
  const std::string source(source_view);
  if (text.size() > limits.max_bytes) {
    throw JsonInputError(source, "",
                         "JSON of " + std::to_string(text.size()) + " bytes, over the limit of " +
                             std::to_string(limits.max_bytes));
  }
  std::vector<JsonFrame> frames;
  // A container's elements begin with a value or with a nested container.
  auto begin_element = [&] {
    if (!frames.empty() && !frames.back().object)
      ++frames.back().elements;
  };
  const auto bound = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      begin_element();
      // Refused as soon as it opens: nothing deeper is ever built, and every later step
      // (destruction, dump, the readers) sees a bounded tree.
      if (frames.size() + 1 > limits.max_depth) {
        throw JsonInputError(source, "",
                             "nested deeper than " + std::to_string(limits.max_depth) + " levels");
      }
      frames.push_back(JsonFrame{event == json::parse_event_t::object_start, 0, {}, {}});
      break;
    case json::parse_event_t::key:
      // nlohmann keeps the last of two equal keys: a second "seconds" would silently replace
      // the first, so a duplicate is refused.
      frames.back().key = parsed.get_ref<const std::string&>();
      if (!frames.back().keys.insert(frames.back().key).second)
        throw JsonInputError(source, frames_path(frames), "appears twice in its object");
      break;
    case json::parse_event_t::value:
      begin_element();
      break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      frames.pop_back();
      break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), bound);
  } catch (const json::parse_error& e) {
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
    const std::string what = syntax_error_text(e.what());
    if (source.empty()) {
      throw JsonInputError("", "",
                           "not valid JSON (at line " + std::to_string(line) + ", column " +
                               std::to_string(column) + ": " + what + ")");
    }
    throw JsonInputError(source + ":" + std::to_string(line) + ":" + std::to_string(column), "",
                         "not valid JSON (" + what + ")");
  } catch (const json::exception& e) {
    // Errors without a position: a number out of range ("number overflow parsing '1e999'").
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos)
      what.erase(0, p + 2);
    throw JsonInputError(source, "", "not valid JSON (" + printable(what, 160) + ")");
  }
}

std::string type_of(const json& v) {
  if (v.is_number_float())
    return "number " + printable(v.dump(), 32);
  if (v.is_number())
    return "integer " + v.dump();
  return v.type_name();
}

const json& json_object(const json& v, const JsonLocation& at) {
  if (!v.is_object())
    at.fail("expected an object, got " + type_of(v));
  return v;
}

const json& json_array(const json& v, const JsonLocation& at) {
  if (!v.is_array())
    at.fail("expected an array, got " + type_of(v));
  return v;
}

const std::string& json_string(const json& v, const JsonLocation& at, bool empty_allowed,
                               const JsonStringRule& rule) {
  if (!v.is_string())
    at.fail("expected a string, got " + type_of(v));
  const std::string& s = v.get_ref<const std::string&>();
  if (!empty_allowed && s.empty())
    at.fail("must not be empty");
  if (rule.valid && !rule.valid(s))
    at.fail("'" + printable(s) + "' is not " + rule.what);
  return s;
}

bool json_boolean(const json& v, const JsonLocation& at) {
  if (!v.is_boolean())
    at.fail("expected true or false, got " + type_of(v));
  return v.get<bool>();
}

double json_number(const json& v, const JsonLocation& at, double lo, double hi) {
  if (!v.is_number())
    at.fail("expected a number, got " + type_of(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    at.fail("expected a number from " + shown_number(lo) + " to " + shown_number(hi) + ", got " +
            type_of(v));
  }
  return d;
}

std::int64_t json_integer(const json& v, const JsonLocation& at, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer())
    at.fail("expected an integer, got " + type_of(v));
  // nlohmann holds a non-negative integer as unsigned (up to 2^64-1), a negative one as
  // signed: each is compared in its own type, never converted out of range.
  bool in_range;
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.get<std::uint64_t>();
    in_range = hi >= 0 && u <= static_cast<std::uint64_t>(hi) &&
               (lo <= 0 || u >= static_cast<std::uint64_t>(lo));
  } else {
    const std::int64_t s = v.get<std::int64_t>();
    in_range = s >= lo && s <= hi;
  }
  if (!in_range) {
    at.fail("expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
            ", got " + type_of(v));
  }
  return v.get<std::int64_t>();
}

std::vector<std::string> json_strings(const json& v, const JsonLocation& at,
                                      const JsonStringRule& rule) {
  if (!v.is_array())
    at.fail("expected an array of strings, got " + type_of(v));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(json_string(v[i], at.index(i), true, rule));
  return out;
}

JsonObjectReader::JsonObjectReader(const json& v, JsonLocation at, std::string schema)
    : obj_(v), at_(std::move(at)), schema_(std::move(schema)) {
  if (!obj_.is_object()) {
    at_.fail((at_.path().empty() ? "expected a JSON object, got " : "expected an object, got ") +
             type_of(obj_));
  }
}

void JsonObjectReader::fail(std::string_view key, std::string problem) const {
  at(key).fail(std::move(problem));
}

const json* JsonObjectReader::find(std::string_view key) {
  read_.emplace(key);
  const auto it = obj_.find(key);
  return it == obj_.end() ? nullptr : &*it;
}

const json& JsonObjectReader::value(std::string_view key) {
  const json* v = find(key);
  if (!v)
    fail(key, "missing");
  return *v;
}

std::string JsonObjectReader::string(std::string_view key, bool empty_allowed,
                                     const JsonStringRule& rule) {
  return json_string(value(key), at(key), empty_allowed, rule);
}

std::optional<std::string> JsonObjectReader::optional_string(std::string_view key,
                                                             bool empty_allowed,
                                                             const JsonStringRule& rule) {
  const json* v = find(key);
  if (!v)
    return std::nullopt;
  return json_string(*v, at(key), empty_allowed, rule);
}

bool JsonObjectReader::boolean(std::string_view key, bool fallback) {
  const json* v = find(key);
  return v ? json_boolean(*v, at(key)) : fallback;
}

double JsonObjectReader::number(std::string_view key, double lo, double hi) {
  return json_number(value(key), at(key), lo, hi);
}

std::optional<double> JsonObjectReader::optional_number(std::string_view key, double lo,
                                                        double hi) {
  const json* v = find(key);
  if (!v)
    return std::nullopt;
  return json_number(*v, at(key), lo, hi);
}

std::int64_t JsonObjectReader::integer(std::string_view key, std::int64_t lo, std::int64_t hi) {
  return json_integer(value(key), at(key), lo, hi);
}

std::optional<std::int64_t> JsonObjectReader::optional_integer(std::string_view key,
                                                               std::int64_t lo, std::int64_t hi) {
  const json* v = find(key);
  if (!v)
    return std::nullopt;
  return json_integer(*v, at(key), lo, hi);
}

const json& JsonObjectReader::array(std::string_view key) {
  return json_array(value(key), at(key));
}

const json* JsonObjectReader::optional_array(std::string_view key) {
  const json* v = find(key);
  return v ? &json_array(*v, at(key)) : nullptr;
}

std::vector<std::string> JsonObjectReader::strings(std::string_view key,
                                                   const JsonStringRule& rule) {
  return json_strings(value(key), at(key), rule);
}

std::vector<std::string> JsonObjectReader::optional_strings(std::string_view key,
                                                            const JsonStringRule& rule) {
  const json* v = find(key);
  return v ? json_strings(*v, at(key), rule) : std::vector<std::string>{};
}

const json& JsonObjectReader::object(std::string_view key) {
  return json_object(value(key), at(key));
}

const json* JsonObjectReader::optional_object(std::string_view key) {
  const json* v = find(key);
  return v ? &json_object(*v, at(key)) : nullptr;
}

void JsonObjectReader::only_keys(std::initializer_list<std::string_view> keys) const {
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
      fail(it.key(), "not a key of " + schema_);
  }
}

void JsonObjectReader::no_other_keys(std::string_view schema) const {
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (read_.find(it.key()) == read_.end())
      fail(it.key(), "not a key of " + (schema.empty() ? schema_ : std::string(schema)));
  }
}

} // namespace mmaemu::support
