// SPDX-License-Identifier: BSD-2-Clause
// Every report format escapes what it copies: one table of hostile strings through each
// format's one escaping function (Markdown, HTML, XML, terminal), judged by decoders and
// scanners written here, independently of the escapers; then whole reports made from a signed
// log whose every copied field is hostile.

#include <gtest/gtest.h>
#include <iconv.h>
#include <tinyxml2.h>

#include <cstring>
#include <string>
#include <vector>

#include "log_fixtures.hpp"
#include "mmaemu/reports/display_text.hpp"
#include "mmaemu/reports/escape_html.hpp"
#include "mmaemu/reports/escape_markdown.hpp"
#include "mmaemu/reports/escape_xml.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "mmaemu/support/text.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

const std::vector<std::string>& hostile() {
  static const std::vector<std::string> t = {
      "<script>alert(1)</script>",
      "</style><svg onload=alert(1)>",
      "[x](javascript:alert(1))",
      "![i](javascript:alert(1))",
      "<javascript:alert(1)>",
      "a\rb",
      "\r",
      "line\nnext",
      "\r\n# Heading",
      "# Heading",
      "## h2",
      "- item",
      "+ item",
      "= setext",
      "---",
      "***",
      "___",
      "> quote",
      "1. ordered",
      "12) ordered",
      "    indented code",
      "\tindented by a tab",
      "`code`",
      "``` fence",
      "a | b | c",
      "|",
      "\\|",
      "nul\0byte"s,
      "\x1b[31mred\x1b[0m\x1b]0;title\x07",
      "\x7f",
      "\xff\xfe",
      "\xc3\x28",
      "\xe2\x82",
      "\xed\xa0\x80",
      "\xc0\xaf",
      "\xf4\x90\x80\x80",
      "\xc2\x85 NEL",
      "\xe2\x80\xae RLO",
      "\xe2\x80\xa8 LS",
      "\xef\xbb\xbf BOM",
      "\xef\xbf\xbe U+FFFE",
      "&lt;entity&gt; &amp; &#60; &#x3c;",
      "*em* _em_ **strong** ~~del~~",
      "$x^2$",
      "\\ backslash \\\\",
      "\\x41 looks escaped \\u0041",
      "<!-- comment",
      "<![CDATA[ x ]]>",
      "\" onmouseover=\"x",
      "' onerror='x",
      "https://example.com <https://evil>",
      "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xe6\x97\xa5\xf0\x9f\x98\x80",
      "",
      " ",
  };
  return t;
}

// Independent judges -------------------------------------------------------------------------

bool valid_utf8(const std::string& s) {
  iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
  if (cd == reinterpret_cast<iconv_t>(-1))
    return false;
  std::string in = s;
  std::vector<char> out(4 * s.size() + 8);
  char* ip = in.data();
  char* op = out.data();
  std::size_t il = in.size(), ol = out.size();
  const std::size_t r = iconv(cd, &ip, &il, &op, &ol);
  iconv_close(cd);
  return r != static_cast<std::size_t>(-1) && il == 0;
}

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The inverse of the documented display form: \\, \xNN, \uXXXX.
std::string undisplay(const std::string& t) {
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '\\') {
      out += t[i];
      continue;
    }
    if (t.compare(i, 2, "\\\\") == 0) {
      out += '\\';
      i += 1;
    } else if (t.compare(i, 2, "\\x") == 0) {
      out += static_cast<char>(std::stoi(t.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else if (t.compare(i, 2, "\\u") == 0) {
      append_utf8(out, static_cast<unsigned>(std::stoi(t.substr(i + 2, 4), nullptr, 16)));
      i += 5;
    } else {
      ADD_FAILURE() << "a lone backslash in the display form: " << t;
    }
  }
  return out;
}

// No byte a terminal or parser would act on, and no invisible or reordering code point.
void expect_plain_line(const std::string& t, const std::string& what) {
  EXPECT_TRUE(valid_utf8(t)) << what;
  for (unsigned char c : t)
    EXPECT_TRUE(c >= 0x20 && c != 0x7F) << what << ": byte " << int(c);
  for (const char* bad :
       {"\xc2\x85", "\xe2\x80\xae", "\xe2\x80\xa8", "\xef\xbb\xbf", "\xef\xbf\xbe"})
    EXPECT_EQ(t.find(bad), std::string::npos) << what;
}

// Reads release.md's field back the way CommonMark treats it, failing on anything that would
// be syntax rather than text; returns the text it shows.
std::string markdown_text(const std::string& m, const std::string& what) {
  const std::string specials = "\\`*_[]<>|&~!$";
  const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::string out;
  std::size_t i = 0;
  while (m.compare(i, 5, "&#32;") == 0) {
    out += ' ';
    i += 5;
  }
  EXPECT_TRUE(i >= m.size() || m[i] != ' ') << what << ": a leading space";
  const std::size_t first = i;
  bool leading_digits = true;
  for (; i < m.size(); ++i) {
    const char c = m[i];
    if (c == '\\') {
      EXPECT_LT(i + 1, m.size()) << what << ": a trailing backslash";
      if (i + 1 < m.size()) {
        EXPECT_NE(punct.find(m[i + 1]), std::string::npos) << what << ": \\ before a letter";
        out += m[++i];
      }
      leading_digits = false;
      continue;
    }
    EXPECT_EQ(specials.find(c), std::string::npos) << what << ": unescaped '" << c << "'";
    if (i == first) {
      EXPECT_EQ(std::string("#+-=").find(c), std::string::npos) << what << ": block at start";
    }
    if (leading_digits && (c == '.' || c == ')') && i > first) {
      ADD_FAILURE() << what << ": an ordered-list marker at the start";
    }
    if (c < '0' || c > '9')
      leading_digits = false;
    out += c;
  }
  return out;
}

std::string entities_text(const std::string& h, const std::string& apos, const std::string& what) {
  const std::pair<std::string, char> ents[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {apos, '\''}};
  std::string out;
  for (std::size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(std::string("<>\"'").find(h[i]), std::string::npos) << what << ": raw " << h[i];
    if (h[i] != '&') {
      out += h[i];
      continue;
    }
    bool known = false;
    for (const auto& [e, c] : ents) {
      if (h.compare(i, e.size(), e) == 0) {
        out += c;
        i += e.size() - 1;
        known = true;
        break;
      }
    }
    EXPECT_TRUE(known) << what << ": '&' starts no entity of the five";
  }
  return out;
}

// The table through each function -------------------------------------------------------------

TEST(ReportEscaping, DisplayTextIsOnePlainLineAndLosesNothing) {
  for (const auto& s : hostile()) {
    const std::string t = display_text(s);
    expect_plain_line(t, support::printable(s));
    EXPECT_EQ(undisplay(t), s) << support::printable(s);
  }
  // Printable UTF-8 is kept as it is (names in other scripts stay readable).
  EXPECT_EQ(display_text("h\xc3\xa9llo \xe6\x97\xa5"), "h\xc3\xa9llo \xe6\x97\xa5");
}

TEST(ReportEscaping, MarkdownEscapeLeavesNoSyntaxAndShowsTheDisplayText) {
  for (const auto& s : hostile()) {
    const std::string m = markdown_escape(s);
    const std::string what = "markdown of " + support::printable(s) + " = " + m;
    expect_plain_line(m, what);
    EXPECT_EQ(markdown_text(m, what), display_text(s)) << what;
  }
}

TEST(ReportEscaping, HtmlEscapeLeavesNoMarkupAndShowsTheDisplayText) {
  for (const auto& s : hostile()) {
    const std::string h = html_escape(s);
    const std::string what = "html of " + support::printable(s) + " = " + h;
    expect_plain_line(h, what);
    EXPECT_EQ(entities_text(h, "&#39;", what), display_text(s)) << what;
  }
}

TEST(ReportEscaping, XmlEscapeKeepsTheDocumentWellFormedInTextAndAttributes) {
  for (const auto& s : hostile()) {
    const std::string x = xml_escape(s);
    const std::string what = "xml of " + support::printable(s) + " = " + x;
    expect_plain_line(x, what);
    EXPECT_EQ(entities_text(x, "&apos;", what), display_text(s)) << what;
    const std::string doc = "<r a=\"" + x + "\" b='" + x + "'>" + x + "</r>";
    tinyxml2::XMLDocument d;
    ASSERT_EQ(d.Parse(doc.c_str(), doc.size()), tinyxml2::XML_SUCCESS) << what;
    const auto* r = d.FirstChildElement("r");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(std::string(r->Attribute("a")), display_text(s)) << what;
    EXPECT_EQ(std::string(r->Attribute("b")), display_text(s)) << what;
    // (tinyxml2 drops a text node of spaces only.)
    if (display_text(s).find_first_not_of(' ') != std::string::npos) {
      EXPECT_EQ(std::string(r->GetText() ? r->GetText() : ""), display_text(s)) << what;
    }
  }
}

TEST(ReportEscaping, TerminalTextIsPrintableAsciiAndLosesNothing) {
  for (const auto& s : hostile()) {
    const std::string p = support::printable(s, 1 << 20);
    for (unsigned char c : p)
      EXPECT_TRUE(c >= 0x20 && c < 0x7F) << p;
    std::string back;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p.compare(i, 2, "\\\\") == 0) {
        back += '\\';
        ++i;
      } else if (p.compare(i, 2, "\\x") == 0) {
        back += static_cast<char>(std::stoi(p.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else {
        back += p[i];
      }
    }
    EXPECT_EQ(back, s) << p;
  }
}

// Whole reports ------------------------------------------------------------------------------

class HostileRelease : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directory(tmp / "keys");
    const auto kf = generate_key(tmp / "k.pem");
    fs::rename(kf.public_key, tmp / "keys/k.pub");
    key = load_private_key(kf.private_key);
    keys = load_trusted_keys(tmp / "keys");
    dir = prepare_log_dir(tmp / "logs", date);
  }
  const std::string date = "2026-01-02";
  testing::TempDir tmp;
  Key key;
  TrustedKeys keys;
  fs::path dir;
};

// A signed, valid log in which every string a report copies is hostile text #k of the table
// (those a JSON log can hold: every one, since \u0000 and the controls are JSON escapes; the
// invalid UTF-8 ones are not JSON and are left out).
nlohmann::json hostile_log(const std::string& tier, std::size_t k) {
  std::vector<std::string> ok;
  for (const auto& s : hostile()) {
    if (valid_utf8(s))
      ok.push_back(s);
  }
  const auto at = [&](std::size_t i) { return ok[(k + i) % ok.size()]; };
  auto j = testing::tiny_log(tier, "FAIL", 2, 1);
  if (tier.empty())
    j["tier"] = at(10);
  j["verdict"] = at(0);
  j["reason"] = at(1);
  j["git"] = {{"commit", at(2)}, {"dirty", false}};
  j["mmaemu"] = {{"version", at(3)}};
  j["host"] = {{"hostname", at(4)}, {"cpu_model", at(5)}, {"cores", 2}, {"os", at(6)}};
  j["benchmarks"] = nlohmann::json::array(
      {{{"name", at(7)}, {"value", 1.0}, {"unit", at(8)}, {"target", 2.0}, {"better", at(9)}}});
  return j;
}

TEST_F(HostileRelease, NoFieldOfASignedLogBecomesMarkdownOrHtml) {
  const std::size_t n = hostile().size();
  for (std::size_t k = 0; k < n; k += 3) {
    // The tier row is found by name; a second log carries a hostile tier name.
    publish_log(hostile_log("T0", k), dir, "T0", &key);
    publish_log(hostile_log("", k + 1), dir, "other", &key);
  }
  // A log file of a hostile name (its signature beside it, under the same name).
  const std::string odd = "a|b <b>`x`\\r# [l](javascript:1)";
  fs::copy_file(dir / "T0.json", dir / (odd + ".json"));
  fs::copy_file(dir / "T0.json.sig", dir / (odd + ".json.sig"));
  ReleaseOptions opt{"0123456789abcdef", "", true};
  const auto r =
      build_release_report(tmp / "logs", date, {{"T0", "unit </title><b>", true}}, keys, opt);
  ASSERT_FALSE(r.notes.empty()); // the hostile commits were taken, and are listed
  const std::string md = release_markdown(r);
  EXPECT_TRUE(valid_utf8(md));
  // Only the report's own structure starts a line, and every table row has its own cells.
  std::size_t pos = 0;
  std::size_t columns = 0;
  while (pos < md.size()) {
    const std::size_t end = md.find('\n', pos);
    ASSERT_NE(end, std::string::npos);
    const std::string line = md.substr(pos, end - pos);
    pos = end + 1;
    EXPECT_EQ(line.find('\r'), std::string::npos);
    if (line.empty())
      continue;
    if (line[0] == '#') {
      EXPECT_TRUE(line.rfind("# mmaemu release sign-off, ", 0) == 0 || line.rfind("## ", 0) == 0)
          << line;
      EXPECT_TRUE(line[0] != '#' || line.find('<') == std::string::npos) << line;
      continue;
    }
    if (line[0] == '|') {
      std::size_t pipes = 0;
      for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\\') {
          ++i;
          continue;
        }
        pipes += line[i] == '|';
      }
      if (line.rfind("| ---", 0) == 0 || columns == 0)
        columns = pipes;
      EXPECT_EQ(pipes, columns) << line;
      continue;
    }
    columns = 0;
    EXPECT_TRUE(line.rfind("- ", 0) == 0 || line.rfind("Verdict: ", 0) == 0 ||
                line.rfind("Commit: ", 0) == 0 || line.rfind("PASS requires", 0) == 0 ||
                line.rfind("Logs NOT", 0) == 0 || line.rfind("Why not PASS", 0) == 0 ||
                line.rfind("The status", 0) == 0)
        << line;
  }
  // Markdown syntax is only syntax where no backslash escapes its first character.
  const auto unescaped = [&md](const std::string& raw) {
    for (auto at = md.find(raw); at != std::string::npos; at = md.find(raw, at + 1)) {
      std::size_t slashes = 0;
      while (slashes < at && md[at - 1 - slashes] == '\\')
        ++slashes;
      if (slashes % 2 == 0)
        return true;
    }
    return false;
  };
  for (const char* raw : {"<script", "<svg", "</style", "](javascript", "[x]", "`code`", "*em*"})
    EXPECT_FALSE(unescaped(raw)) << raw;
  EXPECT_EQ(md.find("\n# Heading"), std::string::npos);

  const std::string html = release_html(r);
  EXPECT_TRUE(valid_utf8(html));
  for (const char* raw : {"<script", "<svg onload", "<b>", "onmouseover=\"", "onerror='", "<!--",
                          "<![CDATA", "class=\"st-#", "\r"})
    EXPECT_EQ(html.find(raw), std::string::npos) << raw;
  EXPECT_EQ(html.find("</style>"), html.rfind("</style>")); // the report's own, once
}

} // namespace
} // namespace mmaemu::reports
