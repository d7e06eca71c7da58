// SPDX-License-Identifier: BSD-2-Clause
// `report release` escapes what it copies from a signed log in every output: its terminal
// lines (support::printable), release.md (markdown_escape) and release.html (html_escape).
// The hostile log is made and signed at run time.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "log_fixtures.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "tier_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ReportReleaseCli, FieldsOfASignedLogAreEscapedOnTheTerminalAndInBothFiles) {
  tiertest::TempDir tmp;
  fs::create_directory(tmp / "keys");
  const auto kf = mmaemu::reports::generate_key(tmp / "k.pem");
  fs::rename(kf.public_key, tmp / "keys/k.pub");
  const auto key = mmaemu::reports::load_private_key(kf.private_key);
  const std::string date = "2026-01-02";
  const fs::path dir = mmaemu::reports::prepare_log_dir(tmp / "logs", date);
  auto log = mmaemu::testing::tiny_log("T0", "FAIL\x1b]0;owned\x07", 2, 1);
  log["reason"] = "\r# Heading <script>alert(1)</script> [x](javascript:alert(1)) \x1b[2J";
  log["git"] = {{"commit", "</style><svg onload=alert(1)>\n- forged"}, {"dirty", false}};
  mmaemu::reports::publish_log(log, dir, "T0", &key);

  const auto r = tiertest::run_mmaemu({"report", "release", "--date", date, "--log-dir",
                                       (tmp / "logs").string(), "--keys", (tmp / "keys").string(),
                                       "--tiers", tiertest::committed_tiers().string(),
                                       "--allow-other-commit", "--out", (tmp / "out").string()});
  EXPECT_EQ(r.status, 1) << r.out << r.err; // not PASS
  for (unsigned char c : r.out)
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7F)) << "byte " << int(c) << " in " << r.out;
  EXPECT_THAT(r.out, HasSubstr("\\x1b]0;owned\\x07"));
  EXPECT_THAT(r.out, Not(HasSubstr("\n- forged")));

  const std::string md = tiertest::slurp(tmp / "out/release.md");
  EXPECT_THAT(md, Not(HasSubstr("\r")));
  EXPECT_THAT(md, Not(HasSubstr("\x1b")));
  EXPECT_THAT(md, Not(HasSubstr("\n# Heading")));
  EXPECT_THAT(md, Not(HasSubstr("\n- forged")));
  EXPECT_THAT(md, HasSubstr("\\<script\\>"));
  EXPECT_THAT(md, HasSubstr("\\[x\\](javascript:alert(1))"));
  const std::string html = tiertest::slurp(tmp / "out/release.html");
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<svg onload")));
  EXPECT_THAT(html, Not(HasSubstr("\x1b")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;"));
}

} // namespace
