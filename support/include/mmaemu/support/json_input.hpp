// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The one strict reader of JSON that comes from outside (tier files, gemm_call descriptions,
// the mutant catalogue, the fatbin manifest, verdict files): bounded in size and nesting,
// duplicate keys refused, and every problem one line that names the source, the key path and
// what was found there, with echoed text escaped (text.hpp). Callers turn JsonInputError into
// their own error class, so that their contracts and the CLI's exit codes stay theirs.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mmaemu::support {

// A JSON input that breaks its format. what() is "<source>: key '<path>': <problem>", the
// source left out when there is none (the caller names it itself) and the key when the
// problem is the whole document ("<source>:<line>:<column>: not valid JSON (...)").
class JsonInputError : public std::runtime_error {
public:
  JsonInputError(std::string source, std::string path, std::string problem);
  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  // what() without the source: "key '<path>': <problem>", or the problem alone.
  std::string without_source() const;

private:
  std::string source_, path_, problem_;
};

// What a parse accepts. Depth counts arrays and objects nested in each other: `1` is 0 deep,
// `[]` 1, `{"a": [1]}` 2.
struct JsonLimits {
  std::uint64_t max_bytes;
  std::size_t max_depth;
};

// Where a value sits: its source, as shown in messages (a file name passed through
// shown_path, or "" when the caller prefixes its own), and its key path ("budget.seconds",
// "modules[0].sass[2]"; "" for the document). Keys from the input are escaped (printable).
class JsonLocation {
public:
  JsonLocation() = default;
  explicit JsonLocation(std::string source, std::string path = "")
      : source_(std::move(source)), path_(std::move(path)) {}
  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }
  JsonLocation key(std::string_view k) const;
  JsonLocation index(std::size_t i) const;
  // Throws JsonInputError(source, path, problem).
  [[noreturn]] void fail(std::string problem) const;

private:
  std::string source_, path_;
};

// Parses `text` under `limits`; `source` names it in messages ("" for none). Throws
// JsonInputError: over max_bytes ("<source>: N bytes, over the limit of M"), a syntax error
// ("<source>:<line>:<column>: not valid JSON (<what the parser expected>)", never the input's
// text; without a source "not valid JSON (at line L, column C: ...)"), a number too large for
// a double ("not valid JSON (number overflow parsing '1e999')"), nesting deeper than
// max_depth ("nested deeper than N levels", refused before anything deeper is built) or a key
// that appears twice in one object ("key 'a.b': appears twice in its object").
nlohmann::json parse_json_input(std::string_view text, std::string_view source,
                                const JsonLimits& limits);

// A value's JSON type for messages: "string", "array", "object", "boolean", "null",
// "integer 7", "number 3.2e+42" (numbers shown, escaped and cut).
std::string type_of(const nlohmann::json& v);

// A rule that a string must follow, named in the message: "'a|b' is not <what>".
struct JsonStringRule {
  bool (*valid)(const std::string&) = nullptr; // nullptr: any string
  const char* what = "";
};

// The checks of one value at `at` (an element of an array, a member read by hand); each
// throws JsonInputError naming `at` and the value's type.
const nlohmann::json& json_object(const nlohmann::json& v, const JsonLocation& at);
const nlohmann::json& json_array(const nlohmann::json& v, const JsonLocation& at);
// A string; "must not be empty" unless `empty_allowed`; a broken `rule` is named.
const std::string& json_string(const nlohmann::json& v, const JsonLocation& at,
                               bool empty_allowed = false, const JsonStringRule& rule = {});
bool json_boolean(const nlohmann::json& v, const JsonLocation& at);
// A finite number in [lo, hi] (an integer JSON number too).
double json_number(const nlohmann::json& v, const JsonLocation& at, double lo, double hi);
// An integer in [lo, hi], from an integer JSON number only: 2.0 and 1e3 are refused, never
// converted.
std::int64_t json_integer(const nlohmann::json& v, const JsonLocation& at, std::int64_t lo,
                          std::int64_t hi);
// An array of strings, each checked as json_string (empty strings allowed unless the rule
// refuses them).
std::vector<std::string> json_strings(const nlohmann::json& v, const JsonLocation& at,
                                      const JsonStringRule& rule = {});

// Reads the members of one JSON object by key, each getter checking the member's type and
// range and naming "<source>: key '<path>.<key>'" when it does not hold. It records the keys
// read, so that no_other_keys() refuses every other key ("not a key of <schema>"): a misspelt
// key is never ignored. The object must outlive the reader.
class JsonObjectReader {
public:
  // Throws JsonInputError unless `v` is an object ("expected an object, got array").
  JsonObjectReader(const nlohmann::json& v, JsonLocation at, std::string schema);

  const JsonLocation& at() const { return at_; }
  JsonLocation at(std::string_view key) const { return at_.key(key); }
  [[noreturn]] void fail(std::string_view key, std::string problem) const;

  // The member, or nullptr when absent; marks `key` as read.
  const nlohmann::json* find(std::string_view key);
  // The member; "missing" when absent.
  const nlohmann::json& value(std::string_view key);

  // Required members ("missing" when absent) and optional ones (nullopt or nullptr when
  // absent; a member that is present is checked all the same, null included).
  std::string string(std::string_view key, bool empty_allowed = false,
                     const JsonStringRule& rule = {});
  std::optional<std::string> optional_string(std::string_view key, bool empty_allowed = false,
                                             const JsonStringRule& rule = {});
  bool boolean(std::string_view key, bool fallback);
  double number(std::string_view key, double lo, double hi);
  std::optional<double> optional_number(std::string_view key, double lo, double hi);
  std::int64_t integer(std::string_view key, std::int64_t lo, std::int64_t hi);
  std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t lo,
                                               std::int64_t hi);
  const nlohmann::json& array(std::string_view key);
  const nlohmann::json* optional_array(std::string_view key);
  std::vector<std::string> strings(std::string_view key, const JsonStringRule& rule = {});
  std::vector<std::string> optional_strings(std::string_view key, const JsonStringRule& rule = {});
  const nlohmann::json& object(std::string_view key);
  const nlohmann::json* optional_object(std::string_view key);

  // Refuses, at once, a member whose key is not in `keys` (before any is read: the first
  // problem reported is then the unknown key, not what its absence caused).
  void only_keys(std::initializer_list<std::string_view> keys) const;
  // Refuses the first member (in key order) that no getter has read: "not a key of <schema>",
  // the reader's schema unless another is named.
  void no_other_keys(std::string_view schema = {}) const;

private:
  const nlohmann::json& obj_;
  JsonLocation at_;
  std::string schema_;
  std::set<std::string, std::less<>> read_;
};

} // namespace mmaemu::support
