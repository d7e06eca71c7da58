// SPDX-License-Identifier: BSD-2-Clause
// The strict JSON reader: limits on size and nesting, duplicate keys, syntax errors by line
// and column without the input's text, and typed getters whose messages name the source, the
// key path and what was found. Expected messages are written from the rules in
// json_input.hpp (positions counted by hand), not copied from the reader's output.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "mmaemu/support/json_input.hpp"

namespace mmaemu::support {
namespace {

using nlohmann::json;

constexpr JsonLimits kLimits{1 << 20, 8};

// The message of what `f` throws as a JsonInputError, or a note that it threw nothing (or
// something else).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const JsonInputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a JsonInputError) ") + e.what();
  }
  return "(no exception)";
}

std::string parse_error(std::string_view text, const JsonLimits& limits = kLimits,
                        std::string_view source = "src.json") {
  return error_of([&] { parse_json_input(text, source, limits); });
}

TEST(JsonInput, AValidDocumentReadsAsNlohmannReadsIt) {
  const std::string text = R"({"a": [1, -2, 3.5, "x", true, null], "b": {"c": {}}})";
  EXPECT_EQ(parse_json_input(text, "src.json", kLimits), json::parse(text));
}

TEST(JsonInput, ADocumentNestedDeeperThanTheLimitIsRefusedNamingTheLimit) {
  const JsonLimits three{1 << 20, 3};
  // Three arrays or objects inside each other are the limit; a fourth is refused, empty or not.
  EXPECT_NO_THROW(parse_json_input("[[[1]]]", "src.json", three));
  EXPECT_NO_THROW(parse_json_input(R"({"a": {"b": [1, 2]}, "c": [{}]})", "src.json", three));
  EXPECT_EQ(parse_error("[[[[1]]]]", three), "src.json: nested deeper than 3 levels");
  EXPECT_EQ(parse_error("[[[[]]]]", three), "src.json: nested deeper than 3 levels");
  EXPECT_EQ(parse_error(R"({"a": {"b": {"c": {}}}})", three),
            "src.json: nested deeper than 3 levels");
  // A scalar is 0 deep; with a limit of 0 any array or object is refused.
  EXPECT_EQ(parse_json_input("7", "src.json", JsonLimits{16, 0}), json(7));
  EXPECT_EQ(parse_error("[]", JsonLimits{16, 0}), "src.json: nested deeper than 0 levels");
  // A million levels are refused at the fourth: nothing deeper is ever built.
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  EXPECT_EQ(parse_error(deep, JsonLimits{deep.size(), 3}), "src.json: nested deeper than 3 levels");
}

TEST(JsonInput, InputOverTheByteLimitIsRefusedBeforeItIsParsed) {
  const JsonLimits ten{10, 8};
  EXPECT_NO_THROW(parse_json_input("[1,2,3,45]", "src.json", ten)); // exactly 10 bytes
  // 11 bytes that would not even parse: the size is what is named.
  EXPECT_EQ(parse_error("[1,2,3,4567", ten), "src.json: JSON of 11 bytes, over the limit of 10");
}

TEST(JsonInput, SyntaxErrorsNameLineAndColumnAndNeverEchoTheInput) {
  // '@' is the 8th byte of line 2: two spaces, "a", ':', a space, then '@'.
  const std::string text = "{\n  \"a\": @SECRET-TOKEN\n}\n";
  const std::string m = parse_error(text);
  EXPECT_EQ(m.rfind("src.json:2:8: not valid JSON (", 0), 0u) << m;
  EXPECT_EQ(m.find("SECRET"), std::string::npos) << m;
  EXPECT_EQ(m.find('@'), std::string::npos) << m;
  EXPECT_EQ(m.back(), ')') << m;
  // Without a source the position is inside the parentheses.
  const std::string bare = parse_error(text, kLimits, "");
  EXPECT_EQ(bare.rfind("not valid JSON (at line 2, column 8: ", 0), 0u) << bare;
  EXPECT_EQ(bare.find("SECRET"), std::string::npos) << bare;
  // An unterminated string: the parser's "last read" would be the rest of the file.
  const std::string open = "{\"a\": \"SECRET" + std::string(100000, 'x');
  const std::string m2 = parse_error(open);
  EXPECT_EQ(m2.rfind("src.json:1:", 0), 0u) << m2.substr(0, 200);
  EXPECT_EQ(m2.find("SECRET"), std::string::npos) << m2.substr(0, 200);
  EXPECT_LT(m2.size(), 300u);
  // Empty input ends at once: line 1, column 1.
  EXPECT_EQ(parse_error("").rfind("src.json:1:1: not valid JSON (", 0), 0u);
  // Bytes that are not UTF-8 inside a string are a syntax error, not echoed.
  const std::string latin1 = parse_error("[\"caf\xe9\"]");
  EXPECT_EQ(latin1.rfind("src.json:1:", 0), 0u) << latin1;
  EXPECT_EQ(latin1.find('\xe9'), std::string::npos) << latin1;
}

TEST(JsonInput, ANumberTooLargeForADoubleIsRefused) {
  EXPECT_EQ(parse_error(R"({"a": 1e999})"),
            "src.json: not valid JSON (number overflow parsing '1e999')");
}

TEST(JsonInput, AKeyGivenTwiceIsRefusedWithItsPath) {
  EXPECT_EQ(parse_error(R"({"a": 1, "a": 2})"), "src.json: key 'a': appears twice in its object");
  EXPECT_EQ(parse_error(R"({"a": [1, {"b": 1, "c": 2, "b": 3}]})"),
            "src.json: key 'a[1].b': appears twice in its object");
  // The same key in two objects is no duplicate.
  EXPECT_NO_THROW(parse_json_input(R"([{"b": 1}, {"b": 2, "c": {"b": 3}}])", "s", kLimits));
}

TEST(JsonInput, TypeOfNamesTheTypeAndShowsNumbers) {
  EXPECT_EQ(type_of(json("x")), "string");
  EXPECT_EQ(type_of(json::array()), "array");
  EXPECT_EQ(type_of(json::object()), "object");
  EXPECT_EQ(type_of(json(true)), "boolean");
  EXPECT_EQ(type_of(json(nullptr)), "null");
  EXPECT_EQ(type_of(json(-3)), "integer -3");
  EXPECT_EQ(type_of(json(std::numeric_limits<std::uint64_t>::max())),
            "integer 18446744073709551615");
  EXPECT_EQ(type_of(json(0.5)), "number 0.5");
  EXPECT_EQ(type_of(json::parse("32e41")), "number 3.2e+42");
}

// A reader of `text`'s top object, from src.json, schema "test/1".
struct Doc {
  json value;
  JsonObjectReader reader;
  explicit Doc(const std::string& text)
      : value(parse_json_input(text, "src.json", kLimits)),
        reader(value, JsonLocation("src.json"), "test/1") {}
};

std::string read_error(const std::string& text, const std::function<void(JsonObjectReader&)>& f) {
  return error_of([&] {
    Doc d(text);
    f(d.reader);
  });
}

TEST(JsonInput, AnIntegerKeyRefusesAFloatNamingKeyAndValue) {
  auto integer = [](const std::string& value) {
    return read_error("{\"n\": " + value + "}", [](JsonObjectReader& r) { r.integer("n", 0, 10); });
  };
  EXPECT_EQ(integer("3.0"), "src.json: key 'n': expected an integer, got number 3.0");
  EXPECT_EQ(integer("32e41"), "src.json: key 'n': expected an integer, got number 3.2e+42");
  EXPECT_EQ(integer("1e1"), "src.json: key 'n': expected an integer, got number 10.0");
  EXPECT_EQ(integer("\"3\""), "src.json: key 'n': expected an integer, got string");
  EXPECT_EQ(integer("true"), "src.json: key 'n': expected an integer, got boolean");
  EXPECT_EQ(integer("-1"), "src.json: key 'n': expected an integer from 0 to 10, got integer -1");
  EXPECT_EQ(integer("11"), "src.json: key 'n': expected an integer from 0 to 10, got integer 11");
  EXPECT_EQ(integer("18446744073709551615"),
            "src.json: key 'n': expected an integer from 0 to 10, got integer "
            "18446744073709551615");
  Doc d(R"({"a": 0, "b": 10, "lo": -9223372036854775808, "hi": 9223372036854775807, "c": 3})");
  EXPECT_EQ(d.reader.integer("a", 0, 10), 0);
  EXPECT_EQ(d.reader.integer("b", 0, 10), 10);
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(d.reader.integer("lo", kMin, kMax), kMin);
  EXPECT_EQ(d.reader.integer("hi", kMin, kMax), kMax);
  // A lower bound above zero holds for the non-negative numbers too.
  EXPECT_EQ(error_of([&] { d.reader.integer("c", 5, 10); }),
            "src.json: key 'c': expected an integer from 5 to 10, got integer 3");
  EXPECT_EQ(error_of([&] { d.reader.integer("hi", kMin, kMax - 1); }),
            "src.json: key 'hi': expected an integer from -9223372036854775808 to "
            "9223372036854775806, got integer 9223372036854775807");
  EXPECT_EQ(d.reader.optional_integer("absent", 0, 1), std::nullopt);
}

TEST(JsonInput, ANumberKeyTakesFiniteNumbersInItsRange) {
  Doc d(R"({"half": 0.5, "seven": 7, "neg": -1, "text": "10", "none": null})");
  EXPECT_EQ(d.reader.number("half", 0, 1), 0.5);
  EXPECT_EQ(d.reader.number("seven", 0, 2592000), 7.0);
  EXPECT_EQ(error_of([&] { d.reader.number("neg", 0, 2592000); }),
            "src.json: key 'neg': expected a number from 0 to 2592000, got integer -1");
  EXPECT_EQ(error_of([&] { d.reader.number("half", 1, 1e300); }),
            "src.json: key 'half': expected a number from 1 to 1e+300, got number 0.5");
  EXPECT_EQ(error_of([&] { d.reader.number("text", 0, 1); }),
            "src.json: key 'text': expected a number, got string");
  // An optional key that is present is checked, null included.
  EXPECT_EQ(error_of([&] { d.reader.optional_number("none", 0, 1); }),
            "src.json: key 'none': expected a number, got null");
  EXPECT_EQ(d.reader.optional_number("absent", 0, 1), std::nullopt);
}

TEST(JsonInput, UnknownKeysAreRefusedWithTheirPath) {
  const std::string text = R"({"budget": {"seconds": 1, "minutes": 2}, "name": "x"})";
  EXPECT_EQ(read_error(text,
                       [](JsonObjectReader& r) {
                         JsonObjectReader budget(r.value("budget"), r.at("budget"), "test/1");
                         budget.number("seconds", 0, 10);
                         budget.no_other_keys();
                       }),
            "src.json: key 'budget.minutes': not a key of test/1");
  // The keys a getter read, present or not, are known; the others are refused in key order.
  EXPECT_EQ(read_error(R"({"b": 1, "a": 2, "c": 3})",
                       [](JsonObjectReader& r) {
                         r.optional_integer("b", 0, 9);
                         r.optional_integer("z", 0, 9);
                         r.no_other_keys();
                       }),
            "src.json: key 'a': not a key of test/1");
  EXPECT_EQ(read_error(text, [](JsonObjectReader& r) { r.no_other_keys("test/1 budgets"); }),
            "src.json: key 'budget': not a key of test/1 budgets");
  // only_keys refuses before anything is read.
  EXPECT_EQ(read_error(text, [](JsonObjectReader& r) { r.only_keys({"name"}); }),
            "src.json: key 'budget': not a key of test/1");
  EXPECT_EQ(read_error(text,
                       [](JsonObjectReader& r) {
                         r.only_keys({"name", "budget"});
                       }),
            "(no exception)");
  // Keys from the input are escaped in the path.
  EXPECT_EQ(read_error(R"({"a\u001b[31m": 1})", [](JsonObjectReader& r) { r.no_other_keys(); }),
            "src.json: key 'a\\x1b[31m': not a key of test/1");
}

TEST(JsonInput, EachGetterNamesTheKeyPathAndTheTypeFound) {
  const std::string text =
      R"({"s": "", "t": 7, "b": "yes", "a": {}, "o": [], "l": ["ab", false], "w": ["ok", "a b"],
          "nested": {"list": [{"x": 1}]}})";
  auto err = [&](const std::function<void(JsonObjectReader&)>& f) { return read_error(text, f); };
  EXPECT_EQ(err([](JsonObjectReader& r) { r.string("missing"); }),
            "src.json: key 'missing': missing");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.string("s"); }),
            "src.json: key 's': must not be empty");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.string("t"); }),
            "src.json: key 't': expected a string, got integer 7");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.boolean("b", false); }),
            "src.json: key 'b': expected true or false, got string");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.array("a"); }),
            "src.json: key 'a': expected an array, got object");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.object("o"); }),
            "src.json: key 'o': expected an object, got array");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.strings("t"); }),
            "src.json: key 't': expected an array of strings, got integer 7");
  EXPECT_EQ(err([](JsonObjectReader& r) { r.strings("l"); }),
            "src.json: key 'l[1]': expected a string, got boolean");
  const JsonStringRule word{[](const std::string& s) { return s.find(' ') == std::string::npos; },
                            "a word (no spaces)"};
  EXPECT_EQ(err([&](JsonObjectReader& r) { r.strings("w", word); }),
            "src.json: key 'w[1]': 'a b' is not a word (no spaces)");
  EXPECT_EQ(err([](JsonObjectReader& r) {
              JsonObjectReader n(r.object("nested"), r.at("nested"), "test/1");
              const json& list = n.array("list");
              JsonObjectReader e(list[0], n.at("list").index(0), "test/1");
              e.string("x");
            }),
            "src.json: key 'nested.list[0].x': expected a string, got integer 1");
  // A document that is not an object.
  EXPECT_EQ(error_of([] {
              const json v = json::array();
              JsonObjectReader r(v, JsonLocation("src.json"), "test/1");
            }),
            "src.json: expected a JSON object, got array");
  // What the getters return.
  Doc d(text);
  EXPECT_EQ(d.reader.string("s", true), "");
  EXPECT_EQ(d.reader.optional_string("absent"), std::nullopt);
  EXPECT_TRUE(d.reader.boolean("absent_flag", true));
  EXPECT_EQ(d.reader.strings("w"), (std::vector<std::string>{"ok", "a b"}));
  EXPECT_TRUE(d.reader.optional_strings("absent_list").empty());
  EXPECT_EQ(d.reader.optional_object("absent_object"), nullptr);
  EXPECT_EQ(d.reader.optional_array("o")->size(), 0u);
}

TEST(JsonInput, EchoedValuesAreEscapedAndCut) {
  const std::string value = "\\u001b[2J" + std::string(1000, 'z');
  const std::string m = read_error("{\"w\": \"" + value + "\"}", [](JsonObjectReader& r) {
    r.string("w", false, JsonStringRule{[](const std::string&) { return false; }, "allowed"});
  });
  // The value is ESC "[2J" and 1000 'z': 1004 bytes, cut at 64 and escaped.
  EXPECT_EQ(m, "src.json: key 'w': '\\x1b[2J" + std::string(60, 'z') +
                   "...(1004 bytes)' is not allowed");
}

TEST(JsonInput, WithoutASourceMessagesStartWithTheKey) {
  const json v = json::parse(R"({"input": {"offset": "3"}})");
  JsonObjectReader r(v, JsonLocation(), "a call");
  JsonObjectReader input(r.object("input"), r.at("input"), "a call");
  EXPECT_EQ(error_of([&] { input.integer("offset", 0, 9); }),
            "key 'input.offset': expected an integer, got string");
  EXPECT_EQ(error_of([&] { r.string("profile"); }), "key 'profile': missing");
}

TEST(JsonInput, TheErrorKeepsItsPartsForCallersThatAddContext) {
  try {
    JsonLocation("cat.json").key("mutants").index(3).key("id").fail("missing");
    FAIL() << "no exception";
  } catch (const JsonInputError& e) {
    EXPECT_STREQ(e.what(), "cat.json: key 'mutants[3].id': missing");
    EXPECT_EQ(e.source(), "cat.json");
    EXPECT_EQ(e.path(), "mutants[3].id");
    EXPECT_EQ(e.problem(), "missing");
    EXPECT_EQ(e.without_source(), "key 'mutants[3].id': missing");
  }
}

} // namespace
} // namespace mmaemu::support
