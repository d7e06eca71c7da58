// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "log_fixtures.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/verify_log.hpp"
#include "temp_dir.hpp"

namespace mmaemu::reports {
namespace {

namespace fs = std::filesystem;

class VerifyLog : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directory(tmp / "keys");
    const auto kf = generate_key(tmp / "trusted.pem");
    fs::rename(kf.public_key, tmp / "keys/trusted.pub");
    key = load_private_key(kf.private_key);
    keys = load_trusted_keys(tmp / "keys");
    dir = prepare_log_dir(tmp / "logs", "2026-01-02");
  }
  PublishedLog signed_log(const std::string& tier, const std::string& verdict = "PASS") {
    return publish_log(testing::tiny_log(tier, verdict), dir, tier, &key);
  }
  testing::TempDir tmp;
  Key key;
  TrustedKeys keys;
  fs::path dir;
};

TEST_F(VerifyLog, AnUntouchedSignedLogVerifies) {
  const auto p = signed_log("T0");
  const auto v = verify_log(p.log, keys);
  EXPECT_TRUE(v.ok) << v.reason;
  EXPECT_EQ(v.reason, "signed by trusted.pub");
}

TEST_F(VerifyLog, AFlippedByteFails) {
  const auto p = signed_log("T0");
  std::string bytes = testing::slurp(p.log);
  const auto at = bytes.find("\"PASS\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 2] ^= 0x02; // "PCSS": still canonical JSON, so only the signature catches it
  testing::spit(p.log, bytes);
  const auto v = verify_log(p.log, keys);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("signature does not match"), std::string::npos) << v.reason;
  EXPECT_FALSE(v.error) << v.reason;
}

// A log edited after it was written is a log that does not verify (FAIL), not a file that is
// no log (ERROR): the verdict must tell tampering from damage.
TEST_F(VerifyLog, AnEditThatBreaksCanonicalFormFailsAndIsNoError) {
  const auto p = signed_log("T0");
  const std::string original = testing::slurp(p.log);
  std::string spaced = original;
  spaced.insert(spaced.size() - 1, " ");
  // The same object re-indented (canonical form indents by 2), as an editor would save it.
  const std::string indented = nlohmann::json::parse(original).dump(4) + "\n";
  for (const std::string& bytes : {spaced, indented}) {
    testing::spit(p.log, bytes);
    const auto v = verify_log(p.log, keys);
    EXPECT_FALSE(v.ok);
    EXPECT_FALSE(v.error) << v.reason;
    EXPECT_NE(v.reason.find("canonical"), std::string::npos) << v.reason;
  }
}

TEST_F(VerifyLog, SwappedSignaturesFail) {
  const auto a = signed_log("T0");
  const auto b = signed_log("T1", "FAIL");
  const std::string sa = testing::slurp(a.signature), sb = testing::slurp(b.signature);
  ASSERT_NE(sa, sb);
  testing::spit(a.signature, sb);
  testing::spit(b.signature, sa);
  EXPECT_FALSE(verify_log(a.log, keys).ok);
  EXPECT_FALSE(verify_log(b.log, keys).ok);
}

TEST_F(VerifyLog, AKeyOutsideTheTrustedFolderFails) {
  const auto other = generate_key(tmp / "other.pem");
  const Key other_key = load_private_key(other.private_key);
  const auto p = publish_log(testing::tiny_log("T0", "PASS"), dir, "T0", &other_key);
  const auto v = verify_log(p.log, keys);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("not among the trusted keys"), std::string::npos) << v.reason;
  EXPECT_EQ(v.fingerprint, fingerprint(other_key));
}

TEST_F(VerifyLog, AMissingSignatureFails) {
  const auto p = signed_log("T0");
  fs::remove(p.signature);
  const auto v = verify_log(p.log, keys);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("missing"), std::string::npos) << v.reason;
}

TEST_F(VerifyLog, ATruncatedSignatureFileFails) {
  const auto p = signed_log("T0");
  const std::string sig = testing::slurp(p.signature);
  for (std::size_t keep : {0ul, 40ul, 60ul, 87ul}) {
    testing::spit(p.signature, sig.substr(0, keep));
    const auto v = verify_log(p.log, keys);
    EXPECT_FALSE(v.ok) << keep;
    EXPECT_NE(v.reason.find("truncated"), std::string::npos) << keep << ": " << v.reason;
  }
}

TEST_F(VerifyLog, AnUnsignedLogFails) {
  const auto p = publish_log(testing::tiny_log("T0", "PASS"), dir, "T0");
  const auto v = verify_log(p.log, keys);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("unsigned"), std::string::npos) << v.reason;
  EXPECT_FALSE(v.error) << v.reason;
}

TEST_F(VerifyLog, AFileThatIsNotALogIsAnError) {
  const std::pair<const char*, std::string> cases[] = {
      {"other.json", "{\"format\": \"something-else\"}\n"},
      {"broken.json", "{\"format\": "},
      {"number.json", "{\"format\": 1}\n"},
      {"array.json", "[\"mmaemu-validation-log/1\"]\n"},
      {"empty.json", ""},
      {"binary.json", std::string("\x00\xff\xfe{", 4)},
      {"deep.json", std::string(100000, '[') + std::string(100000, ']') + "\n"},
      {"overflow.json", "{\"format\": \"mmaemu-validation-log/1\", \"x\": 1e999}\n"},
  };
  for (const auto& [name, text] : cases) {
    testing::spit(dir / name, text);
    const auto v = verify_log(dir / name, keys);
    EXPECT_FALSE(v.ok) << name;
    EXPECT_TRUE(v.error) << name << ": " << v.reason;
    EXPECT_EQ(v.reason.find("internal error"), std::string::npos) << name << ": " << v.reason;
  }
  // A log that does not verify is a FAIL, not an ERROR.
  const auto p = publish_log(testing::tiny_log("T0", "PASS"), dir, "T0");
  EXPECT_FALSE(verify_log(p.log, keys).error);
}

TEST_F(VerifyLog, AFifoOrADeviceAsLogOrSignatureIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  auto v = verify_log(dir / "fifo.json", keys);
  EXPECT_TRUE(v.error);
  EXPECT_NE(v.reason.find("FIFO"), std::string::npos) << v.reason;
  v = verify_log("/dev/zero", keys);
  EXPECT_TRUE(v.error);
  EXPECT_NE(v.reason.find("character device"), std::string::npos) << v.reason;
  const auto p = signed_log("T0");
  fs::remove(p.signature);
  ASSERT_EQ(::mkfifo(p.signature.c_str(), 0600), 0);
  v = verify_log(p.log, keys);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("FIFO"), std::string::npos) << v.reason;
  fs::remove(p.signature);
  fs::create_symlink("/dev/zero", p.signature);
  v = verify_log(p.log, keys);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("character device"), std::string::npos) << v.reason;
}

TEST_F(VerifyLog, TextFromTheLogIsEchoedEscaped) {
  auto log = testing::tiny_log("T0", "PASS");
  log["signed"] = true;
  log["signing"] = {{"key_fingerprint", "sha256:\nOK   forged line\x1b[0m"}};
  testing::spit(dir / "forged.json", canonical_dump(log));
  testing::spit(dir / "forged.json.sig", signature_file_text(std::string(64, 'x')));
  const auto v = verify_log(dir / "forged.json", keys);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason.find('\n'), std::string::npos) << v.reason;
  EXPECT_EQ(v.reason.find('\x1b'), std::string::npos) << v.reason;
  testing::spit(dir / "junk.json", "{\"a\": \x01\x1b[2J}");
  const auto j = verify_log(dir / "junk.json", keys);
  EXPECT_TRUE(j.error);
  EXPECT_EQ(j.reason.find('\x1b'), std::string::npos) << j.reason;
}

TEST_F(VerifyLog, BytesInMemoryGiveTheSameVerdictAsTheFile) {
  const auto p = signed_log("T0");
  const std::string bytes = testing::slurp(p.log), sig = testing::slurp(p.signature);
  EXPECT_TRUE(verify_log_bytes(bytes, sig, keys, p.log).ok);
  EXPECT_FALSE(verify_log_bytes(bytes, std::nullopt, keys, p.log).ok);
  EXPECT_FALSE(verify_log_bytes(bytes + " ", sig, keys, p.log).ok);
  EXPECT_TRUE(verify_log_bytes("nonsense", sig, keys, p.log).error);
}

TEST_F(VerifyLog, CollectLogsListsAFifoNamedJsonSoItIsReported) {
  signed_log("T0");
  ASSERT_EQ(::mkfifo((dir / "T9.json").c_str(), 0600), 0);
  const auto logs = collect_logs({tmp / "logs"});
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[1].filename(), "T9.json");
  EXPECT_TRUE(verify_log(logs[1], keys).error);
}

TEST_F(VerifyLog, CollectLogsSkipsKeysAndArtefactFolders) {
  signed_log("T0");
  signed_log("T2");
  fs::create_directories(dir / "T2.out");
  testing::spit(dir / "T2.out/replay.json", "{}");
  const auto logs = collect_logs({tmp / "logs", tmp / "keys"});
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].filename(), "T0.json");
  EXPECT_EQ(logs[1].filename(), "T2.json");
  EXPECT_THROW(collect_logs({tmp / "absent"}), std::runtime_error);
}

} // namespace
} // namespace mmaemu::reports
