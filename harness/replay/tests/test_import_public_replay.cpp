// SPDX-License-Identifier: BSD-2-Clause
// Importing sets in the text layout of the public hardware vectors: synthetic sets whose d
// lines come from the independent binary64 chain (ref_chain.hpp), imported and replayed bit for
// bit. What the importer accepts and refuses on its own is tested beside it
// (recordings/tests/test_import_public.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/recordings/import_public.hpp"
#include "mmaemu/support/digest.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::Mismatch;
using mmaemu::harness::Outcome;
using mmaemu::harness::replay_batch;
using mmaemu::recordings::import_public_set;
using mmaemu::recordings::ImportOptions;
using mmaemu::recordings::MmaBatch;
using mmaemu::recordings::Recording;
using mmaemu::support::sha256_file;
using testsupport::SetData;
using testsupport::SetSpec;
using testsupport::TempDir;

namespace {

Format fmt_of(const std::string& f) {
  return f == "E5M2" ? Format::e5m2 : Format::e4m3;
}

std::string id_of(const std::string& set, std::size_t line1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%05zu", line1);
  return set + "/" + buf;
}

// Bit comparison of binary32 patterns through the project's one comparator.
void expect_bits_eq(const std::vector<std::uint32_t>& want, const std::vector<std::uint32_t>& got,
                    const char* what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(mmaemu::compare_bits(want[i], got[i], Format::fp32), Mismatch::none)
        << what << "[" << i << "]: " << mmaemu::decompose_bits(want[i], Format::fp32) << " vs "
        << mmaemu::decompose_bits(got[i], Format::fp32);
  }
}

struct SetCase {
  std::string gpu, fmt_a, fmt_b;
  std::string preset, c_policy;
  std::string name; // the batch name the importer gives
  testsupport::PresetParams params;
};

void PrintTo(const SetCase& c, std::ostream* os) {
  *os << c.gpu << "/" << c.fmt_a << "x" << c.fmt_b;
}

class ImportSet : public testing::TestWithParam<SetCase> {};

} // namespace

TEST_P(ImportSet, RecordsPresetPolicyIdsHashesAndReplaysWithoutFailures) {
  const SetCase& sc = GetParam();
  TempDir dir("imp");
  SetSpec spec;
  spec.gpu = sc.gpu;
  spec.fmt_a = sc.fmt_a;
  spec.fmt_b = sc.fmt_b;
  spec.n = 300;
  spec.seed = static_cast<unsigned>(std::hash<std::string>{}(sc.gpu + sc.fmt_a + sc.fmt_b));
  spec.params = sc.params;
  const SetData set = testsupport::write_set(dir / "set", spec);

  const Recording rec = import_public_set(set.dir);
  ASSERT_EQ(rec.mma.size(), 1u);
  const MmaBatch& b = rec.mma[0];
  EXPECT_EQ(b.name, sc.name);
  EXPECT_EQ(b.preset, sc.preset);
  EXPECT_EQ(b.c_policy, sc.c_policy);
  EXPECT_EQ(b.fmt_a, fmt_of(sc.fmt_a));
  EXPECT_EQ(b.fmt_b, fmt_of(sc.fmt_b));
  EXPECT_EQ(b.K, 32u);
  ASSERT_EQ(b.size(), spec.n);
  for (std::size_t i = 0; i < spec.n; ++i)
    ASSERT_EQ(b.ids[i], id_of(sc.name, i + 1));
  EXPECT_EQ(b.attrs.at("gpu"), sc.gpu);
  for (const fs::path& p : {set.a, set.b, set.c, set.d}) {
    const std::string key = "sha256:" + p.filename().string();
    ASSERT_TRUE(b.attrs.count(key)) << key;
    EXPECT_EQ(b.attrs.at(key), sha256_file(p)) << key;
  }
  EXPECT_EQ(b.a, set.a_codes);
  EXPECT_EQ(b.b, set.b_codes);
  expect_bits_eq(sc.c_policy == "zero" ? std::vector<std::uint32_t>(spec.n, 0u) : set.c_bits, b.c,
                 "c");
  expect_bits_eq(set.d_bits, b.expect, "expect");

  const auto r = replay_batch(b, "synthetic");
  EXPECT_EQ(r.cases, spec.n);
  EXPECT_EQ(r.passed, spec.n);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.errors, 0u);
  for (const auto& c : r.results) {
    ASSERT_EQ(c.outcome, Outcome::pass)
        << c.id << ": expected " << mmaemu::decompose_bits(c.expected, Format::fp32) << ", actual "
        << mmaemu::decompose_bits(c.actual, Format::fp32);
  }
}

TEST_P(ImportSet, FlippedDLineFailsExactlyThatCase) {
  const SetCase& sc = GetParam();
  TempDir dir("imp");
  SetSpec spec;
  spec.gpu = sc.gpu;
  spec.fmt_a = sc.fmt_a;
  spec.fmt_b = sc.fmt_b;
  spec.n = 20;
  spec.seed = 77;
  spec.params = sc.params;
  const SetData set = testsupport::write_set(dir / "set", spec);
  const std::size_t line1 = 7;
  const std::uint32_t flipped = set.d_bits[line1 - 1] ^ 1u;
  testsupport::replace_line(set.d, line1, testsupport::binary32_string(flipped));

  const Recording rec = import_public_set(set.dir);
  ASSERT_EQ(rec.mma.size(), 1u);
  const auto r = replay_batch(rec.mma[0], "synthetic");
  EXPECT_EQ(r.passed, spec.n - 1);
  EXPECT_EQ(r.failed, 1u);
  for (std::size_t i = 0; i < spec.n; ++i) {
    const auto& c = r.results[i];
    if (i == line1 - 1) {
      EXPECT_EQ(c.outcome, Outcome::fail);
      EXPECT_EQ(c.id, id_of(sc.name, line1));
      EXPECT_EQ(mmaemu::compare_bits(flipped, c.expected, Format::fp32), Mismatch::none);
      EXPECT_EQ(mmaemu::compare_bits(set.d_bits[i], c.actual, Format::fp32), Mismatch::none);
    } else {
      EXPECT_EQ(c.outcome, Outcome::pass) << c.id;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Gpus, ImportSet,
    testing::Values(SetCase{"H200", "E5M2", "E5M2", "hopper", "zero", "H200_E5M2",
                            testsupport::hopper_params()},
                    SetCase{"L40S", "E5M2", "E5M2", "ada", "from_file", "L40S_E5M2",
                            testsupport::ada_params()},
                    SetCase{"RTX4060", "E4M3", "E4M3", "ada", "from_file", "RTX4060_E4M3",
                            testsupport::ada_params()},
                    SetCase{"GH200", "E4M3", "E4M3", "hopper", "zero", "GH200_E4M3",
                            testsupport::hopper_params()},
                    SetCase{"B200", "E4M3", "E4M3", "b200_mma_sync", "from_file", "B200_E4M3",
                            testsupport::b200_params()},
                    SetCase{"B200", "E5M2", "E5M2", "b200_mma_sync", "from_file", "B200_E5M2",
                            testsupport::b200_params()},
                    SetCase{"H100", "E4M3", "E5M2", "hopper", "zero", "H100_E4M3xE5M2",
                            testsupport::hopper_params()}),
    [](const testing::TestParamInfo<SetCase>& info) {
      return info.param.gpu + "_" + info.param.fmt_a + "_" + info.param.fmt_b;
    });

TEST(ImportPublic, CrlfLineEndingsAndTrailingSpacesAreAccepted) {
  TempDir dir("imp");
  SetSpec spec;
  spec.gpu = "Ada";
  spec.n = 12;
  spec.params = testsupport::ada_params();
  const SetData plain = testsupport::write_set(dir / "plain", spec);
  const SetData crlf = testsupport::write_set(dir / "crlf", spec);
  for (const fs::path& p : {crlf.a, crlf.b, crlf.c, crlf.d}) {
    std::vector<std::string> lines = testsupport::read_lines(p);
    for (std::size_t i = 0; i < lines.size(); ++i)
      lines[i] += i % 2 ? "  " : " \t";
    testsupport::write_lines(p, lines, "\r\n");
  }
  ASSERT_NE(testsupport::read_text(crlf.a).find("\r\n"), std::string::npos);

  const Recording want = import_public_set(plain.dir);
  const Recording got = import_public_set(crlf.dir);
  ASSERT_EQ(got.mma.size(), 1u);
  const MmaBatch& b = got.mma[0];
  EXPECT_EQ(b.ids, want.mma[0].ids);
  EXPECT_EQ(b.a, plain.a_codes);
  EXPECT_EQ(b.b, plain.b_codes);
  expect_bits_eq(plain.c_bits, b.c, "c");
  expect_bits_eq(plain.d_bits, b.expect, "expect");
  EXPECT_EQ(replay_batch(b, "crlf").failed, 0u);
}

TEST(ImportPublic, PresetOptionMakesUnknownGpuImportable) {
  TempDir dir("imp");
  SetSpec spec;
  spec.gpu = "TPUv5";
  spec.n = 40;
  spec.params = testsupport::hopper_params();
  spec.params.chain_from_c = true; // an unknown GPU's c file is taken as the chain's input
  const SetData set = testsupport::write_set(dir / "set", spec);
  ImportOptions opt;
  opt.preset = "hopper";
  const Recording rec = import_public_set(set.dir, opt);
  ASSERT_EQ(rec.mma.size(), 1u);
  const MmaBatch& b = rec.mma[0];
  EXPECT_EQ(b.name, "TPUv5_E4M3");
  EXPECT_EQ(b.preset, "hopper");
  EXPECT_EQ(b.c_policy, "from_file");
  EXPECT_EQ(b.ids.front(), "TPUv5_E4M3/00001");
  expect_bits_eq(set.c_bits, b.c, "c");
  const auto r = replay_batch(b, "synthetic");
  EXPECT_EQ(r.passed, spec.n);
  EXPECT_EQ(r.failed, 0u);
}

TEST(ImportPublic, PresetOptionOverridesTheGpuMapping) {
  TempDir dir("imp");
  SetSpec spec;
  spec.gpu = "H100";
  spec.n = 30;
  spec.params = testsupport::ada_params();
  spec.params.chain_from_c = false; // H100 keeps its zeroed accumulator
  const SetData set = testsupport::write_set(dir / "set", spec);
  ImportOptions opt;
  opt.preset = "ada";
  const Recording rec = import_public_set(set.dir, opt);
  const MmaBatch& b = rec.mma.at(0);
  EXPECT_EQ(b.preset, "ada");
  EXPECT_EQ(b.c_policy, "zero");
  EXPECT_EQ(replay_batch(b, "synthetic").failed, 0u);
}
