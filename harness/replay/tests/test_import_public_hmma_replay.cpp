// SPDX-License-Identifier: BSD-2-Clause
// Importing 16-bit and tf32 sets in the public text layout: synthetic sets whose d lines (and
// d_<GPU>_fp16.txt lines) come from the independent binary64 derivation ref_chain_wide.hpp
// (wide_set_writer.hpp), imported by folder name (GPU and format pick the preset), written, read
// back and replayed bit for bit. The importer's refusals are tested beside it
// (recordings/tests/test_import_public_hmma.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "mmaemu/harness/replay.hpp"
#include "mmaemu/recordings/import_public.hpp"
#include "public_set_writer.hpp"
#include "wide_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::recordings::import_public_set;
using mmaemu::recordings::MmaBatch;
using mmaemu::recordings::Recording;
using testsupport::TempDir;
using testsupport::wide::WideSpec;
using testsupport::wide::write_wide_set;

namespace {

class ImportWideSet : public testing::TestWithParam<WideSpec> {};

} // namespace

TEST_P(ImportWideSet, MapsByFolderNameWritesReadsBackAndReplaysBitForBit) {
  const WideSpec& s = GetParam();
  TempDir dir("wide");
  const fs::path set = write_wide_set(dir.path(), s, 200, 77u + static_cast<unsigned>(s.K));
  const Recording rec = import_public_set(set);
  ASSERT_EQ(rec.mma.size(), s.fp16_file ? 2u : 1u);
  const fs::path out = dir / "set.h5";
  mmaemu::recordings::write_recording(out, rec);
  const Recording back = mmaemu::recordings::read_recording(out);
  ASSERT_EQ(back.mma.size(), rec.mma.size());
  for (std::size_t j = 0; j < back.mma.size(); ++j) {
    const MmaBatch& b = back.mma[j];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(b.preset, s.preset);
    EXPECT_EQ(b.K, static_cast<std::uint32_t>(s.K));
    EXPECT_EQ(b.c_policy, "from_file");
    EXPECT_TRUE(b.a.empty());
    EXPECT_EQ(b.a_wide, rec.mma[j].a_wide);
    EXPECT_EQ(b.acc, j == 1 ? Format::fp16 : Format::fp32);
    const auto r = mmaemu::harness::replay_batch(b, out.string());
    EXPECT_EQ(r.passed, 200u);
    EXPECT_EQ(r.failed, 0u);
    EXPECT_EQ(r.errors, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, ImportWideSet,
                         testing::Values(WideSpec{"V100", "fp16", "volta_fp16", 4, true},
                                         WideSpec{"A100", "bf16", "ampere_bf16", 8, false},
                                         WideSpec{"A2", "tf32", "ampere_tf32", 4, false},
                                         WideSpec{"L40S", "fp16", "ada_fp16", 8, true},
                                         WideSpec{"H200", "bf16", "hopper_bf16", 16, false},
                                         WideSpec{"H100", "tf32", "hopper_tf32", 4, false}),
                         [](const testing::TestParamInfo<WideSpec>& info) {
                           return info.param.gpu + "_" + info.param.fmt;
                         });
