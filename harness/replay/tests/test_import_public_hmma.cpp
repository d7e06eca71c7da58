// SPDX-License-Identifier: BSD-2-Clause
// Importing 16-bit and tf32 sets in the public text layout: synthetic sets whose d lines (and
// d_<GPU>_fp16.txt lines) come from the independent binary64 derivation ref_chain_wide.hpp,
// imported by folder name (GPU and format pick the preset), written, read back and replayed
// bit for bit; and the refusals, each naming the file and line.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/recordings/import_public.hpp"
#include "public_set_writer.hpp"
#include "ref_chain_wide.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::recordings::import_public_set;
using mmaemu::recordings::ImportError;
using mmaemu::recordings::ImportOptions;
using mmaemu::recordings::MmaBatch;
using mmaemu::recordings::Recording;
using testing::HasSubstr;
using testsupport::TempDir;
namespace ref = reftest::wide;

namespace {

struct WideSpec {
  std::string gpu, fmt; // folder names: "A100", "bf16"
  std::string preset;   // what the importer must map it to
  int K;
  bool fp16_file; // write d_<GPU>_fp16.txt
};

const ref::Fmt& ref_fmt(const std::string& f) {
  return f == "fp16" ? ref::kFP16 : (f == "bf16" ? ref::kBF16 : ref::kTF32);
}

// The binary32 pattern of a code of the format (its value is exact in binary32).
std::uint32_t binary32_of(const ref::Fmt& f, std::uint32_t code) {
  return ref::to_bits(static_cast<float>(ref::value(f, code)));
}

ref::Params params_of(const mmaemu::Preset& p) {
  return {p.nfma, p.frac, p.frac_out, false, p.min_exp};
}

// Writes a set of n lines; returns its folder.
fs::path write_wide_set(const fs::path& root, const WideSpec& s, std::size_t n, unsigned seed) {
  const fs::path dir = root / s.gpu / s.fmt;
  fs::create_directories(dir);
  const ref::Fmt& f = ref_fmt(s.fmt);
  const mmaemu::Preset& p = mmaemu::get_preset_quiet(s.preset);
  std::mt19937_64 rng(seed);
  std::vector<std::string> la, lb, lc, ld, ld16;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> a(s.K), b(s.K);
    std::string ta, tb;
    for (int k = 0; k < s.K; ++k) {
      for (auto* v : {&a[k], &b[k]}) {
        const std::uint32_t sign = (rng() & 1u) << (f.width - 1);
        const auto e = static_cast<std::uint32_t>(f.bias - 3 + static_cast<int>(rng() % 6));
        *v = sign | (e << f.frac_bits) |
             (static_cast<std::uint32_t>(rng()) & ((1u << f.frac_bits) - 1u));
      }
      ta += (k ? " " : "") + testsupport::hex8(binary32_of(f, a[k]));
      tb += (k ? " " : "") + testsupport::hex8(binary32_of(f, b[k]));
    }
    const std::uint32_t c = (static_cast<std::uint32_t>(rng()) & 0x807FFFFFu) |
                            (static_cast<std::uint32_t>(125 + rng() % 4) << 23);
    la.push_back(ta);
    lb.push_back(tb);
    lc.push_back(testsupport::binary32_string(c));
    ld.push_back(testsupport::binary32_string(ref::chain(f, a, b, c, false, params_of(p))));
    if (s.fp16_file) {
      // The recorder's c: the c file rounded to nearest fp16.
      const std::uint16_t c16 = ref::fp16_nearest(ref::from_bits(c));
      const auto d16 = static_cast<std::uint16_t>(ref::chain(f, a, b, c16, true, params_of(p)));
      ld16.push_back(
          testsupport::binary32_string(ref::to_bits(static_cast<float>(ref::fp16_value(d16)))));
    }
  }
  testsupport::write_lines(dir / ("a_" + s.gpu + "_" + s.fmt + ".txt"), la);
  testsupport::write_lines(dir / ("b_" + s.gpu + "_" + s.fmt + ".txt"), lb);
  testsupport::write_lines(dir / ("c_" + s.gpu + "_fp32.txt"), lc);
  testsupport::write_lines(dir / ("d_" + s.gpu + "_fp32.txt"), ld);
  if (s.fp16_file)
    testsupport::write_lines(dir / ("d_" + s.gpu + "_fp16.txt"), ld16);
  return dir;
}

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

class ImportWideSet : public testing::TestWithParam<WideSpec> {};

void PrintTo(const WideSpec& s, std::ostream* os) {
  *os << s.gpu << "/" << s.fmt;
}

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
