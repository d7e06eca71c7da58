// SPDX-License-Identifier: BSD-2-Clause
// A key file holds exactly one key and nothing else: keys made at run time (keygen), then
// rewritten with trailing junk, a second key, text before, headers, an extra DER object in
// the body, a wrong label, or cut short. Each is refused naming the file; the key as
// written, with CRLF lines or trailing blank lines, still loads.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>

#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/pem_block.hpp"
#include "mmaemu/support/digest.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

std::string crlf(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += '\r';
    out += c;
  }
  return out;
}

// The PEM text with `extra` bytes appended inside its DER body (re-encoded as base64).
std::string with_der_tail(const std::string& pem, const std::string& extra) {
  const auto b = pem.find('\n') + 1;
  const auto e = pem.find("-----END");
  std::string body;
  for (std::size_t i = b; i < e; ++i) {
    if (pem[i] != '\n')
      body += pem[i];
  }
  const auto der = support::base64_decode(body);
  EXPECT_TRUE(der.has_value());
  return pem.substr(0, b) + support::base64_encode(*der + extra) + "\n" + pem.substr(e);
}

class KeyFile : public ::testing::Test {
protected:
  void SetUp() override {
    const auto a = generate_key(tmp / "a.pem");
    const auto b = generate_key(tmp / "b.pem");
    priv_a = testing::slurp(a.private_key);
    priv_b = testing::slurp(b.private_key);
    pub_a = testing::slurp(a.public_key);
    pub_b = testing::slurp(b.public_key);
    fp_a = fingerprint(load_public_key(a.public_key));
  }
  // Writes `text` as a private key (mode 0600) and loads it.
  Key private_key(const std::string& text) {
    const fs::path p = tmp / "case.pem";
    fs::remove(p);
    testing::spit(p, text);
    ::chmod(p.c_str(), 0600);
    return load_private_key(p);
  }
  Key public_key(const std::string& text) {
    const fs::path p = tmp / "case.pub";
    testing::spit(p, text);
    return load_public_key(p);
  }
  // `load` must refuse, naming the file and saying `why`.
  void expect_refused(const std::function<Key()>& load, const std::string& file,
                      const std::string& why, const std::string& what) {
    try {
      load();
      ADD_FAILURE() << what << ": accepted";
    } catch (const SigningError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(file), std::string::npos) << what << ": " << m;
      EXPECT_NE(m.find(why), std::string::npos) << what << ": " << m;
    }
  }
  testing::TempDir tmp;
  std::string priv_a, priv_b, pub_a, pub_b, fp_a;
};

TEST_F(KeyFile, TheKeyAsWrittenWithCrlfOrTrailingBlankLinesLoads) {
  for (const std::string& t : {priv_a, crlf(priv_a), priv_a + "\n\n", "\n" + priv_a + " \n"})
    EXPECT_EQ(fingerprint(private_key(t)), fp_a);
  for (const std::string& t : {pub_a, crlf(pub_a), pub_a + "\r\n\n"})
    EXPECT_EQ(fingerprint(public_key(t)), fp_a);
}

TEST_F(KeyFile, TrailingJunkIsRefusedNamingTheFile) {
  for (const std::string& junk : {"junk\n"s, "x"s, "\0"s, "-----END PRIVATE KEY-----\n"s}) {
    expect_refused([&] { return private_key(priv_a + junk); }, "case.pem", "after its PEM block",
                   "private + junk");
    expect_refused([&] { return public_key(pub_a + junk); }, "case.pub", "after its PEM block",
                   "public + junk");
  }
  // Junk on the END line itself.
  std::string glued = priv_a;
  glued.insert(glued.rfind("-----") + 5, "junk");
  expect_refused([&] { return private_key(glued); }, "case.pem", "not base64", "END line + junk");
}

TEST_F(KeyFile, TwoKeysAreRefusedNeverSignedWithTheFirst) {
  for (const std::string& t : {priv_a + priv_b, priv_a + priv_a, priv_a + pub_a, pub_a + priv_a})
    expect_refused([&] { return private_key(t); }, "case.pem", "holds 2 PEM blocks", "two keys");
  expect_refused([&] { return public_key(pub_a + pub_b); }, "case.pub", "holds 2 PEM blocks",
                 "two public keys");
}

TEST_F(KeyFile, TextBeforeTheBlockOrHeadersInItAreRefused) {
  expect_refused([&] { return private_key("Bag Attributes\n" + priv_a); }, "case.pem",
                 "before its PEM block", "text before");
  // '#' comment lines before the block (a licence header) are not key data.
  EXPECT_EQ(fingerprint(public_key("# SPDX-License-Identifier: BSD-2-Clause\n# k\n" + pub_a)),
            fp_a);
  expect_refused([&] { return public_key("# c\n" + pub_a + "# after\n"); }, "case.pub",
                 "after its PEM block", "a comment after");
  std::string headers = priv_a;
  headers.insert(headers.find('\n') + 1, "Proc-Type: 4,ENCRYPTED\n\n");
  expect_refused([&] { return private_key(headers); }, "case.pem", "not base64", "headers");
}

TEST_F(KeyFile, AnExtraDerObjectInTheBodyIsRefused) {
  expect_refused([&] { return private_key(with_der_tail(priv_a, std::string("\x05\x00", 2))); },
                 "case.pem", "not exactly one DER object", "private DER tail");
  expect_refused([&] { return public_key(with_der_tail(pub_a, "\x30\x00")); }, "case.pub",
                 "not exactly one DER object", "public DER tail");
  // The control: the body re-encoded without a tail still loads.
  EXPECT_EQ(fingerprint(public_key(with_der_tail(pub_a, ""))), fp_a);
}

TEST_F(KeyFile, AWrongLabelATruncatedBlockOrNoBlockIsRefused) {
  expect_refused([&] { return private_key(pub_a); }, "case.pem", "not PRIVATE KEY",
                 "public as private");
  expect_refused([&] { return public_key(priv_a); }, "case.pub", "not PUBLIC KEY",
                 "private as public");
  expect_refused([&] { return private_key(priv_a.substr(0, priv_a.find("-----END"))); }, "case.pem",
                 "no END line", "truncated");
  std::string mislabelled = priv_a;
  mislabelled.replace(mislabelled.rfind("PRIVATE KEY"), 11, "PUBLIC KEY");
  expect_refused([&] { return private_key(mislabelled); }, "case.pem", "its END line names",
                 "END of another label");
  expect_refused([&] { return private_key(""); }, "case.pem", "holds no PEM block", "empty");
}

} // namespace
} // namespace mmaemu::reports
