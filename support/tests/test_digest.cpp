// SPDX-License-Identifier: BSD-2-Clause
// Known-answer vectors: SHA-256 from FIPS 180-2 appendix B, base64 from RFC 4648 section 10.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::support {
namespace {

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(sha256_hex(std::string_view("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string_view("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(
      sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, RawIsTheHexDigestsBytes) {
  const std::string raw = sha256_raw("abc");
  ASSERT_EQ(raw.size(), 32u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0xbau);
  EXPECT_EQ(static_cast<unsigned char>(raw[31]), 0xadu);
}

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> v[] = {{"", ""},
                                                   {"f", "Zg=="},
                                                   {"fo", "Zm8="},
                                                   {"foo", "Zm9v"},
                                                   {"foob", "Zm9vYg=="},
                                                   {"fooba", "Zm9vYmE="},
                                                   {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : v) {
    EXPECT_EQ(base64_encode(plain), coded) << plain;
    const auto back = base64_decode(coded);
    ASSERT_TRUE(back.has_value()) << coded;
    EXPECT_EQ(*back, plain);
  }
}

TEST(Base64, RefusesNonCanonicalText) {
  for (const char* bad : {"Zg=", "Zg", "Zh==", "Zm9=", "Z===", "=Zg=", "Zg==Zg==", "Zm 9v",
                          "Zm9v\n", "Zm-v", "Zm_v", "Zm9vY===", "===="}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

TEST(Base64, BinaryRoundTrip) {
  std::string all;
  for (int i = 0; i < 256; ++i)
    all += static_cast<char>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37) {
    const auto back = base64_decode(base64_encode(all.substr(0, n)));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, all.substr(0, n));
  }
}

// A file read once with its digest computed on the way: the same bytes and the digest of
// those bytes (FIPS 180-2 for "abc"; for a file of several read pieces, the digest of the
// whole content), one whole-file read each.
TEST(Sha256, AFileHashedWhileReadIsReadOnceAndGivesItsBytesDigest) {
  char tmpl[] = "/tmp/mmaemu-digest-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  auto write = [&](const char* name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
  };
  const auto abc = write("abc", "abc");
  std::string big;
  std::uint32_t x = 12345;
  for (std::size_t i = 0; i < (std::size_t{3} << 20) + 7; ++i) {
    x = x * 1664525u + 1013904223u;
    big += static_cast<char>(x >> 24);
  }
  const auto large = write("large", big);

  const std::uint64_t before = whole_file_reads();
  const HashedFile a = read_input_file_hashed(abc, 1 << 20, "test file");
  EXPECT_EQ(a.bytes, "abc");
  EXPECT_EQ(a.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const HashedFile b = read_input_file_hashed(large, 64 << 20, "test file");
  EXPECT_EQ(b.bytes, big);
  EXPECT_EQ(b.sha256, sha256_hex(big));
  EXPECT_EQ(whole_file_reads() - before, 2u);
  EXPECT_EQ(sha256_file(large), b.sha256);
  EXPECT_EQ(whole_file_reads() - before, 3u);
  EXPECT_THROW(read_input_file_hashed(large, 1 << 20, "test file"), FileError);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace mmaemu::support
