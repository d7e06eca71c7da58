// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>

#include <string>

#include "mmaemu/reports/ctest_junit.hpp"

namespace mmaemu::reports {
namespace {

// What `ctest --output-junit` (CMake 3.25) wrote for a passing, a failing, a GTEST_SKIP-style
// skipped, a disabled and a not-run test.
const char* kCtestJunit = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)"
	tests="5"
	failures="1"
	disabled="1"
	skipped="2"
	hostname=""
	time="0"
	timestamp="2026-12-01T03:07:47"
	>
	<testcase name="ok" classname="ok" time="0.0121849" status="run">
		<system-out></system-out>
	</testcase>
	<testcase name="bad" classname="bad" time="0.00227455" status="fail">
		<failure message=""/>
		<system-out>oops &lt;&amp;&gt;
</system-out>
	</testcase>
	<testcase name="skip" classname="skip" time="0.00158116" status="notrun">
		<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
		<system-out>[  SKIPPED ] x
</system-out>
	</testcase>
	<testcase name="dis" classname="dis" time="0" status="disabled">
		<system-out>Disabled</system-out>
	</testcase>
	<testcase name="missing" classname="missing" time="0" status="notrun">
		<skipped message="Unable to find executable"/>
		<system-out>Unable to find executable: /nonexistent/prog</system-out>
	</testcase>
</testsuite>
)xml";

std::string error_of(const std::string& xml) {
  try {
    parse_ctest_junit(xml, "junit.xml");
  } catch (const JunitError& e) {
    return e.what();
  }
  return "";
}

TEST(CtestJunit, ReadsEveryTestcaseOfCtestsOutput) {
  const auto cases = parse_ctest_junit(kCtestJunit, "junit.xml");
  ASSERT_EQ(cases.size(), 5u);
  EXPECT_EQ(cases[0].name, "ok");
  EXPECT_EQ(cases[0].status, "run");
  EXPECT_NEAR(cases[0].seconds, 0.0121849, 1e-12); // a parsed duration, not a bit claim
  EXPECT_FALSE(cases[0].failure);
  EXPECT_EQ(cases[1].status, "fail");
  EXPECT_TRUE(cases[1].failure);
  EXPECT_EQ(cases[1].system_out, "oops <&>\n");
  EXPECT_EQ(cases[2].status, "notrun");
  EXPECT_TRUE(cases[2].skipped);
  EXPECT_EQ(cases[2].skipped_message, "SKIP_REGULAR_EXPRESSION_MATCHED");
  EXPECT_EQ(cases[3].status, "disabled");
  EXPECT_EQ(cases[4].skipped_message, "Unable to find executable");
  EXPECT_EQ(cases[4].system_out, "Unable to find executable: /nonexistent/prog");
}

TEST(CtestJunit, ReadsATestsuitesRootAndCdata) {
  const auto cases = parse_ctest_junit(
      "<testsuites><testsuite><testcase name=\"a\" status=\"run\"/></testsuite>"
      "<testsuite><testcase name=\"b\" status=\"fail\"><system-out>x<![CDATA[<y>]]>z"
      "</system-out></testcase></testsuite></testsuites>",
      "j");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].name, "b");
  EXPECT_EQ(cases[1].system_out, "x<y>z");
}

TEST(CtestJunit, MalformedXmlIsACleanErrorNamingTheFile) {
  for (const std::string& xml :
       {std::string(""), std::string("not xml at all"), std::string("<testsuite>"),
        std::string("<testsuite><testcase name=\"a\" status=\"run\"></testsuite>"),
        std::string("<testsuite><testcase name=\"a></testcase></testsuite>"),
        std::string(kCtestJunit).substr(0, 700), std::string("<a>\0<b/></a>", 11)}) {
    const std::string e = error_of(xml);
    EXPECT_EQ(e.rfind("junit.xml", 0), 0u) << "input: " << xml << "\nerror: " << e;
  }
}

TEST(CtestJunit, CraftedXmlIsRefusedOrReadLiterally) {
  // Another root element, a testcase without a name, nesting beyond tinyxml2's limit.
  EXPECT_NE(error_of("<html><testcase name=\"a\"/></html>").find("not a JUnit test suite"),
            std::string::npos);
  EXPECT_NE(error_of("<testsuite><testcase status=\"run\"/></testsuite>").find("without a name"),
            std::string::npos);
  std::string deep = "<testsuite>";
  for (int i = 0; i < 100000; ++i)
    deep += "<x>";
  EXPECT_NE(error_of(deep), "");
  // Entities declared in a DTD are never expanded (no "billion laughs"), external ones never
  // fetched; the text stays as written.
  const std::string laughs = R"xml(<?xml version="1.0"?>
<!DOCTYPE testsuite [
 <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY ext SYSTEM "file:///etc/passwd">
]>
<testsuite><testcase name="t&c;" status="run"><system-out>&ext;&#10;</system-out></testcase>
</testsuite>)xml";
  std::vector<JunitCase> cases;
  try {
    cases = parse_ctest_junit(laughs, "j");
  } catch (const JunitError&) {
    // Refusing it is as good as reading it literally.
  }
  for (const auto& c : cases) {
    EXPECT_LT(c.name.size(), 16u);
    EXPECT_EQ(c.system_out.find("root:"), std::string::npos);
  }
  // Odd attribute values: no crash, a time that is not a finite non-negative number is 0.
  const auto odd = parse_ctest_junit(
      "<testsuite><testcase name=\"a&#10;b\" time=\"nan\"/><testcase name=\"c\" time=\"-4\"/>"
      "<testcase name=\"d\" time=\"1e999\"/><testcase name=\"e\" time=\"abc\"/></testsuite>",
      "j");
  ASSERT_EQ(odd.size(), 4u);
  EXPECT_EQ(odd[0].name, "a\nb");
  for (const auto& c : odd)
    EXPECT_EQ(c.seconds, 0.0) << c.name;
  EXPECT_EQ(odd[0].status, "");
}

TEST(CtestJunit, AnErrorMessageEscapesTheFileName) {
  try {
    parse_ctest_junit("<", "evil\nname\x1b[2J");
    FAIL() << "no exception";
  } catch (const JunitError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  }
}

} // namespace
} // namespace mmaemu::reports
