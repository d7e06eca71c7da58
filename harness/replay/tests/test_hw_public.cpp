// SPDX-License-Identifier: BSD-2-Clause
// The project's hardware ground truth: the committed recordings of the public GPU vectors
// replay without a single mismatch, and a fresh import of the text sets (when the shared
// folder is present) gives the committed recordings case for case.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/recordings/import_public.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::Mismatch;
using mmaemu::harness::Outcome;
using mmaemu::recordings::MmaBatch;
using mmaemu::recordings::Recording;

namespace {

fs::path committed(const std::string& name) {
  return fs::path(MMAEMU_SOURCE_DIR) / "recordings" / "data" / "public" / name;
}

struct HwSet {
  const char* file;    // committed recording
  const char* set_dir; // folder under shared/truth-public
  const char* name;    // batch name
  const char* preset;
  Format fmt; // of both operands
};

const HwSet kSets[] = {
    {"Ada_E4M3.h5", "Ada/E4M3", "Ada_E4M3", "ada", Format::e4m3},
    {"Ada_E5M2.h5", "Ada/E5M2", "Ada_E5M2", "ada", Format::e5m2},
    {"H100_E4M3.h5", "H100/E4M3", "H100_E4M3", "hopper", Format::e4m3},
    {"H100_E5M2.h5", "H100/E5M2", "H100_E5M2", "hopper", Format::e5m2},
};

void PrintTo(const HwSet& s, std::ostream* os) {
  *os << s.file;
}

class HwPublic : public testing::TestWithParam<HwSet> {};

} // namespace

TEST_P(HwPublic, CommittedRecordingReplaysEveryCase) {
  const HwSet& s = GetParam();
  const Recording rec = mmaemu::recordings::read_recording(committed(s.file));
  ASSERT_EQ(rec.mma.size(), 1u);
  const MmaBatch& b = rec.mma[0];
  EXPECT_EQ(b.name, s.name);
  EXPECT_EQ(b.preset, s.preset);
  EXPECT_EQ(b.fmt_a, s.fmt);
  EXPECT_EQ(b.fmt_b, s.fmt);
  ASSERT_EQ(b.size(), 5000u);
  const auto r = mmaemu::harness::replay_batch(b, committed(s.file).string());
  EXPECT_EQ(r.cases, 5000u);
  EXPECT_EQ(r.passed, 5000u);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.errors, 0u);
  std::size_t reported = 0;
  for (const auto& c : r.results) {
    if (c.outcome != Outcome::pass && reported++ < 10) {
      ADD_FAILURE() << c.id << ": expected " << mmaemu::decompose_bits(c.expected, Format::fp32)
                    << ", actual " << mmaemu::decompose_bits(c.actual, Format::fp32);
    }
  }
}

TEST_P(HwPublic, FreshImportEqualsCommittedRecordingCaseForCase) {
  const HwSet& s = GetParam();
  const fs::path dir = fs::path(MMAEMU_SHARED_DIR) / "truth-public" / s.set_dir;
  if (!fs::is_directory(dir))
    GTEST_SKIP() << "public vectors not present: " << dir.string() << " is missing";
  const Recording fresh = mmaemu::recordings::import_public_set(dir);
  const Recording saved = mmaemu::recordings::read_recording(committed(s.file));
  ASSERT_EQ(fresh.mma.size(), 1u);
  ASSERT_EQ(saved.mma.size(), 1u);
  const MmaBatch& f = fresh.mma[0];
  const MmaBatch& c = saved.mma[0];
  EXPECT_EQ(f.name, c.name);
  EXPECT_EQ(f.preset, c.preset);
  EXPECT_EQ(f.c_policy, c.c_policy);
  EXPECT_EQ(f.fmt_a, c.fmt_a);
  EXPECT_EQ(f.fmt_b, c.fmt_b);
  ASSERT_EQ(f.K, c.K);
  ASSERT_EQ(f.size(), c.size());
  const std::size_t K = f.K;
  for (std::size_t i = 0; i < f.size(); ++i) {
    ASSERT_EQ(f.ids[i], c.ids[i]) << i;
    for (std::size_t k = 0; k < K; ++k) {
      ASSERT_EQ(f.a[i * K + k], c.a[i * K + k]) << f.ids[i] << " a[" << k << "]";
      ASSERT_EQ(f.b[i * K + k], c.b[i * K + k]) << f.ids[i] << " b[" << k << "]";
    }
    ASSERT_EQ(mmaemu::compare_bits(f.c[i], c.c[i], Format::fp32), Mismatch::none)
        << f.ids[i] << " c";
    ASSERT_EQ(mmaemu::compare_bits(f.expect[i], c.expect[i], Format::fp32), Mismatch::none)
        << f.ids[i] << " expect";
  }
  // The committed file records the hashes of the very text files imported now.
  for (const auto& [key, value] : f.attrs) {
    if (key.rfind("sha256:", 0) == 0) {
      ASSERT_TRUE(c.attrs.count(key)) << key;
      EXPECT_EQ(c.attrs.at(key), value) << key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Public, HwPublic, testing::ValuesIn(kSets),
                         [](const testing::TestParamInfo<HwSet>& info) {
                           return std::string(info.param.name);
                         });
