// SPDX-License-Identifier: BSD-2-Clause
// Importing 16-bit and tf32 sets in the public text layout: the refusals, each naming the file
// and line, and the GPU names mapped to presets by format. The imported sets written, read back
// and replayed bit for bit are tested beside the replay
// (harness/replay/tests/test_import_public_hmma_replay.cpp).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mmaemu/recordings/import_public.hpp"
#include "public_set_writer.hpp"
#include "wide_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::recordings::import_public_set;
using mmaemu::recordings::ImportError;
using mmaemu::recordings::ImportOptions;
using testing::HasSubstr;
using testsupport::TempDir;
using testsupport::wide::WideSpec;
using testsupport::wide::write_wide_set;

namespace {

template <class F> std::string import_error_of(F f) {
  try {
    f();
  } catch (const ImportError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ImportError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected ImportError, nothing was thrown";
  return {};
}

} // namespace

TEST(ImportWide, RefusalsNameTheFileAndLine) {
  TempDir dir("wide");
  const WideSpec s{"A100", "fp16", "ampere_fp16", 8, true};
  const fs::path set = write_wide_set(dir.path(), s, 6, 5u);
  const fs::path a = set / "a_A100_fp16.txt", d16 = set / "d_A100_fp16.txt";
  const auto a_lines = testsupport::read_lines(a);
  const auto d16_lines = testsupport::read_lines(d16);
  // A line with one value fewer than the first line's K.
  auto lines = a_lines;
  lines[2].erase(lines[2].rfind(' '));
  testsupport::write_lines(a, lines);
  EXPECT_THAT(import_error_of([&] { import_public_set(set); }),
              HasSubstr(a.string() + ":3: 7 values, expected K = 8"));
  // A value that is not an fp16 value (1 + 2^-23).
  lines = a_lines;
  lines[1].replace(0, 8, "3f800001");
  testsupport::write_lines(a, lines);
  EXPECT_THAT(import_error_of([&] { import_public_set(set); }),
              HasSubstr(a.string() + ":2: token 1 '3f800001' is not a float16 value"));
  testsupport::write_lines(a, a_lines);
  // A d_fp16 line that is not the pattern of an fp16 value.
  lines = d16_lines;
  lines[3] = testsupport::binary32_string(0x3F800001u);
  testsupport::write_lines(d16, lines);
  EXPECT_THAT(import_error_of([&] { import_public_set(set); }),
              HasSubstr(d16.string() + ":4: 0x3f800001 is not the binary32 pattern"));
  testsupport::write_lines(d16, d16_lines);
  // --preset of another format.
  ImportOptions opt;
  opt.preset = "ada_bf16";
  EXPECT_THAT(import_error_of([&] { import_public_set(set, opt); }),
              HasSubstr("--preset ada_bf16 takes bf16 operands, not fp16 x fp16"));
  // Volta has no bf16 tensor cores: no preset for V100/bf16.
  const fs::path vb = write_wide_set(dir.path(), {"A100", "bf16", "ampere_bf16", 8, false}, 3, 9u);
  fs::create_directories(dir / "V100");
  fs::rename(vb, dir / "V100" / "bf16");
  for (const char* f : {"a", "b"})
    fs::rename(dir / "V100" / "bf16" / (std::string(f) + "_A100_bf16.txt"),
               dir / "V100" / "bf16" / (std::string(f) + "_V100_bf16.txt"));
  for (const char* f : {"c", "d"})
    fs::rename(dir / "V100" / "bf16" / (std::string(f) + "_A100_fp32.txt"),
               dir / "V100" / "bf16" / (std::string(f) + "_V100_fp32.txt"));
  EXPECT_THAT(import_error_of([&] { import_public_set(dir / "V100" / "bf16"); }),
              HasSubstr("no bf16 preset for GPU 'V100'"));
}

TEST(ImportWide, MapsGpuNamesToArchitecturePresets) {
  using mmaemu::recordings::map_gpu;
  EXPECT_EQ(map_gpu("V100", Format::fp16)->preset, "volta_fp16");
  EXPECT_FALSE(map_gpu("V100", Format::tf32).has_value());
  EXPECT_EQ(map_gpu("A10G", Format::tf32)->preset, "ampere_tf32");
  EXPECT_EQ(map_gpu("RTX3090", Format::bf16)->preset, "ampere_bf16");
  EXPECT_EQ(map_gpu("RTX4060", Format::fp16)->preset, "ada_fp16");
  EXPECT_EQ(map_gpu("GH200", Format::fp16)->preset, "hopper_fp16");
  EXPECT_EQ(map_gpu("H100", Format::bf16)->c_policy, "from_file"); // wmma reads c
  EXPECT_EQ(map_gpu("H100", Format::e4m3)->c_policy, "zero");      // wgmma zeroed it
  EXPECT_FALSE(map_gpu("B200", Format::fp16).has_value());
}
