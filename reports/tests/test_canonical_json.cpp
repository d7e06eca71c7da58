// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

#include "mmaemu/reports/canonical_json.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

TEST(CanonicalJson, SameValueGivesSameBytesWhateverTheInsertionOrder) {
  nlohmann::json a, b;
  a["zeta"] = 1;
  a["alpha"] = {{"y", 2}, {"x", 3}};
  b["alpha"] = {{"x", 3}, {"y", 2}};
  b["zeta"] = 1;
  EXPECT_EQ(canonical_dump(a), canonical_dump(b));
  EXPECT_LT(canonical_dump(a).find("\"alpha\""), canonical_dump(a).find("\"zeta\""));
}

TEST(CanonicalJson, NonAsciiIsEscapedAndOutputEndsWithOneNewline) {
  const std::string s = canonical_dump(nlohmann::json{{"cpu", "Caf\xc3\xa9"}});
  EXPECT_NE(s.find("Caf\\u00e9"), std::string::npos) << s;
  for (char c : s)
    EXPECT_LT(static_cast<unsigned char>(c), 0x80u);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.back(), '\n');
  EXPECT_NE(s[s.size() - 2], '\n');
}

TEST(CanonicalJson, ReparsingCanonicalBytesGivesTheSameBytes) {
  nlohmann::json j = {{"seconds", 0.1},        {"tiny", 1e-300},  {"n", -7},
                      {"list", {1, 2.5, "x"}}, {"none", nullptr}, {"flag", true}};
  const std::string once = canonical_dump(j);
  EXPECT_EQ(canonical_dump(nlohmann::json::parse(once)), once);
}

TEST(CanonicalJson, ParseErrorNamesFileLineAndColumn) {
  try {
    parse_json_text("{\n  \"a\": tru\n}\n", "tiers/T9.json");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("tiers/T9.json:2:", 0), 0u) << m;
    EXPECT_NE(m.find("not valid JSON"), std::string::npos) << m;
  }
}

// The column is the editor's: the first character of a line is column 1. Here the bad '@'
// follows `  "a": ` (7 characters) on line 2, so it stands at 2:8.
TEST(CanonicalJson, ParseErrorColumnsCountFromOneOnEveryLine) {
  try {
    parse_json_text("{\n  \"a\": @\n}\n", "log.json");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("log.json:2:8: not valid JSON", 0), 0u) << m;
  }
}

std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// kMaxJsonDepth levels are accepted, one more is refused, naming the file and the limit.
TEST(CanonicalJson, NestingUpToTheLimitIsAcceptedAndOneMoreIsRefused) {
  EXPECT_NO_THROW(parse_json_text(nested(kMaxJsonDepth), "deep.json"));
  EXPECT_NO_THROW(parse_json_text("{\"a\": " + nested(kMaxJsonDepth - 1) + "}", "deep.json"));
  for (const std::string& text :
       {nested(kMaxJsonDepth + 1), "{\"a\": " + nested(kMaxJsonDepth) + "}"}) {
    try {
      parse_json_text(text, "deep.json");
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()),
                "deep.json: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
  }
}

// A log whose object names a key twice is refused: nlohmann keeps the last value, so a verdict
// written twice ("PASS", then "FAIL") would read as one of them in silence.
TEST(CanonicalJson, AKeyGivenTwiceIsRefusedWithItsPath) {
  try {
    parse_json_text("{\"totals\": {\"pass\": 1, \"fail\": 0, \"pass\": 2}}", "log.json");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "log.json: key 'totals.pass': appears twice in its object");
  }
  EXPECT_NO_THROW(parse_json_text("[{\"pass\": 1}, {\"pass\": 2}]", "log.json"));
}

// Brackets inside strings are text, not nesting: a log whose message quotes "[[[[..." (and
// an escaped quote before them, which does not end the string) is an ordinary log.
TEST(CanonicalJson, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string many(2 * kMaxJsonDepth, '[');
  const nlohmann::json plain = parse_json_text("{\"message\": \"" + many + "\"}", "m.json");
  EXPECT_EQ(plain["message"].get<std::string>(), many);
  const nlohmann::json quoted =
      parse_json_text("{\"message\": \"say \\\" " + many + "\"}", "m.json");
  EXPECT_EQ(quoted["message"].get<std::string>(), "say \" " + many);
  const nlohmann::json braces =
      parse_json_text("[\"" + std::string(2 * kMaxJsonDepth, '{') + "\", 1]", "m.json");
  EXPECT_EQ(braces.size(), 2u);
}

TEST(CanonicalJson, ReadingAMissingFileNamesIt) {
  testing::TempDir dir;
  try {
    read_json_file(dir / "absent.json");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("absent.json"), std::string::npos);
  }
}

} // namespace
} // namespace mmaemu::reports
