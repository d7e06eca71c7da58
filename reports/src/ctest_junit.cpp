// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/ctest_junit.hpp"

#include <tinyxml2.h>

#include <cmath>
#include <cstring>

#include "mmaemu/support/text.hpp"

namespace mmaemu::reports {

namespace {

using tinyxml2::XMLElement;

std::string attribute(const XMLElement& e, const char* name) {
  const char* v = e.Attribute(name);
  return v ? std::string(v) : std::string();
}

std::string text_of(const XMLElement* e) {
  if (!e)
    return {};
  std::string out;
  // GetText() gives only the first text node; CDATA sections and text around comments are
  // separate nodes.
  for (const tinyxml2::XMLNode* n = e->FirstChild(); n; n = n->NextSibling()) {
    if (const auto* t = n->ToText())
      out += t->Value();
  }
  return out;
}

void add_cases(const XMLElement& suite, std::string_view where, std::vector<JunitCase>& out) {
  for (const XMLElement* tc = suite.FirstChildElement("testcase"); tc;
       tc = tc->NextSiblingElement("testcase")) {
    JunitCase c;
    c.name = attribute(*tc, "name");
    if (c.name.empty()) {
      throw JunitError(support::printable(where, 256) + ":" + std::to_string(tc->GetLineNum()) +
                       ": <testcase> without a name");
    }
    double t = 0;
    if (tc->QueryDoubleAttribute("time", &t) == tinyxml2::XML_SUCCESS && std::isfinite(t) &&
        t >= 0) {
      c.seconds = t;
    }
    c.status = attribute(*tc, "status");
    if (const XMLElement* f = tc->FirstChildElement("failure")) {
      c.failure = true;
      c.failure_message = attribute(*f, "message");
    }
    if (const XMLElement* s = tc->FirstChildElement("skipped")) {
      c.skipped = true;
      c.skipped_message = attribute(*s, "message");
    }
    c.system_out = text_of(tc->FirstChildElement("system-out"));
    out.push_back(std::move(c));
  }
}

} // namespace

std::vector<JunitCase> parse_ctest_junit(std::string_view xml, std::string_view where) {
  const std::string shown = support::printable(where, 256);
  tinyxml2::XMLDocument doc(true, tinyxml2::PRESERVE_WHITESPACE);
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
    // ErrorStr() quotes part of the input: escaped like every other echoed text.
    throw JunitError(shown + ":" + std::to_string(doc.ErrorLineNum()) + ": not well-formed XML (" +
                     support::printable(doc.ErrorStr() ? doc.ErrorStr() : "?", 160) + ")");
  }
  const XMLElement* root = doc.RootElement();
  std::vector<JunitCase> out;
  if (root && std::strcmp(root->Name(), "testsuite") == 0) {
    add_cases(*root, where, out);
  } else if (root && std::strcmp(root->Name(), "testsuites") == 0) {
    for (const XMLElement* s = root->FirstChildElement("testsuite"); s;
         s = s->NextSiblingElement("testsuite")) {
      add_cases(*s, where, out);
    }
  } else {
    throw JunitError(shown + ": not a JUnit test suite (root element " +
                     (root ? "<" + support::printable(root->Name()) + ">" : std::string("none")) +
                     ", not <testsuite>)");
  }
  return out;
}

} // namespace mmaemu::reports
