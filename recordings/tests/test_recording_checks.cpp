// SPDX-License-Identifier: BSD-2-Clause
// Every check of a batch that the reader (and the writer) makes refuses what it names: a
// c_policy other than from_file or zero, two cases with one id, operands of two different
// 16-bit formats, a hex attribute that is not "0x" and eight digits. Each file here is what the
// writer would write but for the one value the check is about.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "hostile_h5.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::recordings::GemmBatch;
using mmaemu::recordings::GemmCase;
using mmaemu::recordings::MmaBatch;
using mmaemu::recordings::read_recording;
using mmaemu::recordings::Recording;
using mmaemu::recordings::RecordingError;
using mmaemu::recordings::write_recording;
using mmaemu::testing::TempDir;
using testing::HasSubstr;

namespace {

// The message of the RecordingError f throws, or "(accepted)".
template <class F> std::string refusal(F f) {
  try {
    f();
  } catch (const RecordingError& e) {
    return e.what();
  }
  return "(accepted)";
}

// fp16 operands of one case, K = 2: 1.0 * 1.0 + 1.0 * 1.0 = 2.0.
Recording fp16_recording() {
  Recording rec;
  MmaBatch b;
  b.name = "h";
  b.preset = "hopper_fp16";
  b.fmt_a = b.fmt_b = Format::fp16;
  b.K = 2;
  b.c_policy = "zero";
  b.ids = {"h/1"};
  b.a_wide = {0x3C00u, 0x3C00u}; // fp16 1.0
  b.b_wide = {0x3C00u, 0x3C00u};
  b.c = {0u};
  b.expect = {0x40000000u}; // fp32 2.0
  rec.mma.push_back(b);
  return rec;
}

} // namespace

TEST(RecordingChecks, ACPolicyOtherThanFromFileOrZeroIsRefused) {
  TempDir dir("checks");
  const fs::path file = dir / "rec.h5";
  write_recording(file, hostile::small_recording());
  hostile::set_string_attr(file, "/cases/set_one", "c_policy", "from_register");
  EXPECT_THAT(refusal([&] { read_recording(file); }), HasSubstr("c_policy 'from_register'"));
  Recording rec = hostile::small_recording();
  rec.mma[0].c_policy = "ones";
  EXPECT_THAT(refusal([&] { write_recording(dir / "w.h5", rec); }), HasSubstr("c_policy 'ones'"));
}

TEST(RecordingChecks, TwoCasesWithOneIdAreRefused) {
  TempDir dir("checks");
  Recording rec = hostile::small_recording();
  rec.mma[0].ids[2] = rec.mma[0].ids[0];
  EXPECT_THAT(refusal([&] { write_recording(dir / "w.h5", rec); }),
              HasSubstr("duplicate case id 'set_one/1'"));
}

TEST(RecordingChecks, OperandsOfTwoDifferent16BitFormatsAreRefused) {
  TempDir dir("checks");
  EXPECT_EQ(refusal([&] { write_recording(dir / "ok.h5", fp16_recording()); }), "(accepted)");
  Recording rec = fp16_recording();
  rec.mma[0].fmt_b = Format::bf16; // 0x3C00 is a bf16 code too: only the pair is wrong
  EXPECT_THAT(refusal([&] { write_recording(dir / "w.h5", rec); }),
              HasSubstr("operand formats fp16 x bf16"));
}

TEST(RecordingChecks, AHexAttributeMustBe0xAndEightDigits) {
  TempDir dir("checks");
  Recording rec;
  GemmCase c;
  c.id = "g/0";
  c.profile = "hopper";
  c.M = c.N = c.K = 1;
  c.a = {0x38};
  c.b = {0x38};
  c.expect = {0x3F80u};
  rec.gemm.push_back(GemmBatch{"g", {c}, {}});
  const fs::path file = dir / "g.h5";
  write_recording(file, rec);
  EXPECT_EQ(read_recording(file).gemm.at(0).cases.at(0).scale_a_bits, 0x3F800000u);
  for (const char* bad : {"0x1", "0x3f80000", "0x3f8000000", "3f800000", "0X3f800000"}) {
    SCOPED_TRACE(bad);
    hostile::set_string_attr(file, "/cases/g/000000", "scale_a_bits", bad);
    EXPECT_THAT(refusal([&] { read_recording(file); }), HasSubstr("scale_a_bits"));
  }
}
