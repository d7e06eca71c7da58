// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/support/input_file.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;

std::string unhex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

std::string message_of(const SigningError& e) {
  return e.what();
}

// Runs `f`, which must throw SigningError, within `seconds` (a FIFO or a passphrase prompt
// would block); returns the message.
template <class F> std::string refusal(F f, double seconds = 5) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const SigningError& e) {
    msg = message_of(e);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), seconds);
  return msg;
}

// RFC 8032 section 7.1, Ed25519 (pure): SECRET KEY, PUBLIC KEY, MESSAGE, SIGNATURE.
struct Rfc8032Vector {
  const char* name;
  const char* secret;
  const char* public_key;
  const char* message;
  const char* signature;
};

constexpr Rfc8032Vector kRfc8032[] = {
    {"TEST 1", "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
    {"TEST 2", "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
    {"TEST 3", "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
     "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
    {"TEST SHA(abc)", "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
     "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
     "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589"
     "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"},
};

TEST(Ed25519, Rfc8032Section71KnownAnswers) {
  for (const auto& v : kRfc8032) {
    SCOPED_TRACE(v.name);
    const Key priv = private_key_from_raw(unhex(v.secret));
    EXPECT_EQ(raw_public_key(priv), unhex(v.public_key));
    // Ed25519 signatures are deterministic: the exact bytes, not only "it verifies".
    const std::string sig = sign_bytes(priv, unhex(v.message));
    EXPECT_EQ(sig, unhex(v.signature));
    const Key pub = public_key_from_raw(unhex(v.public_key));
    EXPECT_TRUE(verify_bytes(pub, unhex(v.message), unhex(v.signature)));
    EXPECT_EQ(fingerprint(pub), fingerprint(priv));
    // The same key through PEM, as a trusted key file would hold it.
    EXPECT_EQ(raw_public_key(public_key_from_pem(public_key_pem(pub), "kat")), unhex(v.public_key));
    std::string bad = unhex(v.signature);
    bad[5] ^= 0x10;
    EXPECT_FALSE(verify_bytes(pub, unhex(v.message), bad));
    EXPECT_FALSE(verify_bytes(pub, unhex(v.message) + "x", unhex(v.signature)));
  }
}

TEST(Ed25519, RawKeysOfTheWrongSizeAreRefused) {
  EXPECT_THROW(private_key_from_raw(std::string(31, 'a')), SigningError);
  EXPECT_THROW(public_key_from_raw(std::string(33, 'a')), SigningError);
  EXPECT_THROW(public_key_from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n", "x"), SigningError);
}

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

TEST(Keygen, RefusesAPubNameForThePrivateKey) {
  testing::TempDir dir;
  for (const char* name : {"k.pub", "K.PUB", "keys.Pub"}) {
    const std::string msg = refusal([&] { generate_key(dir / name); });
    EXPECT_NE(msg.find(".pub name is for the public key"), std::string::npos) << msg;
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Keygen, RefusesAMissingFolderAndWritesNothing) {
  testing::TempDir dir;
  EXPECT_THROW(generate_key(dir / "no/such/k.pem"), SigningError);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Keygen, KeepsAnExistingPublicHalfAndLeavesNoPrivateKey) {
  testing::TempDir dir;
  testing::spit(dir / "k.pub", "someone else's\n");
  EXPECT_THROW(generate_key(dir / "k.pem"), SigningError);
  EXPECT_FALSE(fs::exists(dir / "k.pem"));
  EXPECT_EQ(testing::slurp(dir / "k.pub"), "someone else's\n");
}

TEST(PrivateKey, ReadableByGroupOrOthersIsRefusedWithChmodAdvice) {
  testing::TempDir dir;
  const auto k = generate_key(dir / "k.pem");
  for (const auto mode : {fs::perms(0644), fs::perms(0640), fs::perms(0604), fs::perms(0660)}) {
    fs::permissions(k.private_key, mode);
    const std::string msg = refusal([&] { load_private_key(k.private_key); });
    EXPECT_NE(msg.find("chmod 600 " + k.private_key.string()), std::string::npos) << msg;
  }
  fs::permissions(k.private_key, fs::perms(0600));
  EXPECT_TRUE(static_cast<bool>(load_private_key(k.private_key)));
  fs::permissions(k.private_key, fs::perms(0400));
  EXPECT_TRUE(static_cast<bool>(load_private_key(k.private_key)));
}

TEST(PrivateKey, AnEncryptedKeyFailsWithoutAskingForAPassphrase) {
  testing::TempDir dir;
  const auto k = generate_key(dir / "plain.pem");
  const Key key = load_private_key(k.private_key);
  BIO* bio = BIO_new(BIO_s_mem());
  ASSERT_NE(bio, nullptr);
  static char pass[] = "correct horse";
  ASSERT_EQ(
      PEM_write_bio_PKCS8PrivateKey(bio, key.get(), EVP_aes_256_cbc(), nullptr, 0, nullptr, pass),
      1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  const std::string pem(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  ASSERT_NE(pem.find("ENCRYPTED PRIVATE KEY"), std::string::npos);
  testing::spit(dir / "enc.pem", pem);
  fs::permissions(dir / "enc.pem", fs::perms(0600));
  const std::string msg = refusal([&] { load_private_key(dir / "enc.pem"); });
  EXPECT_NE(msg.find("encrypted"), std::string::npos) << msg;
  EXPECT_NE(msg.find("never asks for a passphrase"), std::string::npos) << msg;
}

TEST(PrivateKey, AFifoADeviceOrAHugeFileIsRefusedAtOnce) {
  testing::TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo.pem").c_str(), 0600), 0);
  std::string msg = refusal([&] { load_private_key(dir / "fifo.pem"); });
  EXPECT_NE(msg.find("FIFO"), std::string::npos) << msg;
  msg = refusal([&] { load_public_key(dir / "fifo.pem"); });
  EXPECT_NE(msg.find("FIFO"), std::string::npos) << msg;
  msg = refusal([&] { load_private_key("/dev/zero"); });
  EXPECT_NE(msg.find("character device"), std::string::npos) << msg;
  msg = refusal([&] { load_public_key("/dev/zero"); });
  EXPECT_NE(msg.find("character device"), std::string::npos) << msg;
  testing::spit(dir / "big.pem", std::string(support::kMaxKeyBytes + 1, 'A'));
  fs::permissions(dir / "big.pem", fs::perms(0600));
  msg = refusal([&] { load_private_key(dir / "big.pem"); });
  EXPECT_NE(msg.find("over the limit"), std::string::npos) << msg;
}

TEST(PrivateKey, APathWithControlCharactersIsEchoedEscaped) {
  testing::TempDir dir;
  const std::string msg = refusal([&] { load_private_key(dir / "evil\nFAKE LINE.pem"); });
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\x0a"), std::string::npos) << msg;
}

TEST(TrustedKeys, AFifoNamedPubIsRefusedNotSkipped) {
  testing::TempDir dir;
  fs::create_directory(dir / "keys");
  ASSERT_EQ(::mkfifo((dir / "keys/evil.pub").c_str(), 0600), 0);
  const std::string msg = refusal([&] { load_trusted_keys(dir / "keys"); });
  EXPECT_NE(msg.find("FIFO"), std::string::npos) << msg;
}

// A folder whose name ends in .pub (an archive of old keys, say) holds no key of its own: it
// is skipped, and the keys beside it load. A FIFO so named is refused (the test above).
TEST(TrustedKeys, AFolderNamedPubIsSkippedNotLoaded) {
  testing::TempDir dir;
  generate_key(dir / "one.pem");
  fs::create_directory(dir / "keys");
  fs::rename(dir / "one.pub", dir / "keys/one.pub");
  fs::create_directory(dir / "keys/old.pub");
  testing::spit(dir / "keys/old.pub/README.md", "keys that were retired\n");
  const TrustedKeys keys = load_trusted_keys(dir / "keys");
  ASSERT_EQ(keys.by_fingerprint.size(), 1u);
  EXPECT_EQ(keys.by_fingerprint.begin()->second.file, dir / "keys/one.pub");
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

} // namespace
} // namespace mmaemu::reports
