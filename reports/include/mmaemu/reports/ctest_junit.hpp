// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Reading back ctest's JUnit XML (`ctest --output-junit`, CMake >= 3.21): one entry per
// <testcase>, parsed with tinyxml2 (no DTD, no external entities, nesting bounded).

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu::reports {

// A JUnit file that is not well-formed XML or not a ctest test suite; the message names the
// file (escaped), the line where known, and what is wrong.
class JunitError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct JunitCase {
  std::string name;     // the ctest test name (never empty)
  double seconds = 0;   // the "time" attribute; 0 when absent, not a number or negative
  std::string status;   // ctest's "status": run, fail, disabled, notrun ("" if absent)
  bool failure = false; // a <failure> element is present
  std::string failure_message;
  bool skipped = false;        // a <skipped> element is present
  std::string skipped_message; // "SKIP_REGULAR_EXPRESSION_MATCHED" for a GTEST_SKIP
  std::string system_out;      // the text of <system-out>, entities decoded
};

// The <testcase> elements of a <testsuite> root (or of the <testsuite> elements of a
// <testsuites> root), in document order. `where` names the file in messages. Throws
// JunitError for malformed XML, another root element, or a <testcase> without a name.
std::vector<JunitCase> parse_ctest_junit(std::string_view xml, std::string_view where);

} // namespace mmaemu::reports
