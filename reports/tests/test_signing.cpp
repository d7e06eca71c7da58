// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "mmaemu/support/digest.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

TEST(Keygen, WritesPrivateKeyMode0600AndPemPublicKeyBesideIt) {
  testing::TempDir dir;
  const KeyFiles k = generate_key(dir / "maint.pem");
  EXPECT_EQ(k.public_key, dir / "maint.pub");
  struct stat st {};
  ASSERT_EQ(::stat(k.private_key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(testing::slurp(k.public_key).rfind("-----BEGIN PUBLIC KEY-----", 0), 0u);
  const Key priv = load_private_key(k.private_key);
  const Key pub = load_public_key(k.public_key);
  EXPECT_EQ(fingerprint(priv), fingerprint(pub));
  EXPECT_EQ(fingerprint(pub).size(), 7u + 64u);
  EXPECT_EQ(fingerprint(pub).rfind("sha256:", 0), 0u);
}

TEST(Keygen, RefusesToOverwriteAnExistingKey) {
  testing::TempDir dir;
  generate_key(dir / "k.pem");
  const std::string before = testing::slurp(dir / "k.pem");
  EXPECT_THROW(generate_key(dir / "k.pem"), SigningError);
  EXPECT_EQ(testing::slurp(dir / "k.pem"), before);
}

TEST(Keygen, TwoKeysHaveDifferentFingerprints) {
  testing::TempDir dir;
  const auto a = generate_key(dir / "a.pem");
  const auto b = generate_key(dir / "b.pem");
  EXPECT_NE(fingerprint(load_public_key(a.public_key)), fingerprint(load_public_key(b.public_key)));
}

TEST(Ed25519, SignatureVerifiesOnlyForTheSameBytesAndKey) {
  testing::TempDir dir;
  const auto a = generate_key(dir / "a.pem");
  const auto b = generate_key(dir / "b.pem");
  const Key priv = load_private_key(a.private_key);
  const std::string msg = "{\"verdict\": \"PASS\"}\n";
  const std::string sig = sign_bytes(priv, msg);
  ASSERT_EQ(sig.size(), kSignatureBytes);
  EXPECT_TRUE(verify_bytes(load_public_key(a.public_key), msg, sig));
  std::string flipped = msg;
  flipped[3] ^= 0x01;
  EXPECT_FALSE(verify_bytes(load_public_key(a.public_key), flipped, sig));
  EXPECT_FALSE(verify_bytes(load_public_key(b.public_key), msg, sig));
  EXPECT_FALSE(verify_bytes(load_public_key(a.public_key), msg, sig.substr(0, 63)));
}

TEST(Ed25519, LoadingSomethingElseNamesTheFile) {
  testing::TempDir dir;
  testing::spit(dir / "junk.pub", "not a key\n");
  try {
    load_public_key(dir / "junk.pub");
    FAIL() << "no exception";
  } catch (const SigningError& e) {
    EXPECT_NE(std::string(e.what()).find("junk.pub"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_private_key(dir / "missing.pem"), SigningError);
}

TEST(TrustedKeys, ReadsEveryPubFileAndRejectsABadOne) {
  testing::TempDir dir;
  generate_key(dir / "one.pem");
  generate_key(dir / "two.pem");
  std::filesystem::create_directory(dir / "keys");
  std::filesystem::rename(dir / "one.pub", dir / "keys/one.pub");
  std::filesystem::rename(dir / "two.pub", dir / "keys/two.pub");
  testing::spit(dir / "keys/README.md", "ignored\n");
  EXPECT_EQ(load_trusted_keys(dir / "keys").by_fingerprint.size(), 2u);
  testing::spit(dir / "keys/bad.pub", "garbage\n");
  EXPECT_THROW(load_trusted_keys(dir / "keys"), SigningError);
  EXPECT_THROW(load_trusted_keys(dir / "nowhere"), SigningError);
}

TEST(Base64, RoundTripsEveryLengthAndRejectsTruncation) {
  std::string bytes;
  for (int n = 0; n < 70; ++n) {
    const std::string enc = support::base64_encode(bytes);
    const auto dec = support::base64_decode(enc);
    ASSERT_TRUE(dec.has_value()) << n;
    EXPECT_EQ(*dec, bytes) << n;
    bytes += static_cast<char>(n * 37 + 11);
  }
  const std::string enc = support::base64_encode(std::string(64, '\xA5'));
  EXPECT_EQ(enc.size(), 88u);
  EXPECT_FALSE(support::base64_decode(enc.substr(0, 87)).has_value());
  EXPECT_FALSE(support::base64_decode(enc.substr(0, 40) + "!" + enc.substr(41)).has_value());
  EXPECT_EQ(support::base64_decode(enc.substr(0, 40))->size(), 30u); // valid but short: caught by size
}

} // namespace
} // namespace mmaemu::reports
