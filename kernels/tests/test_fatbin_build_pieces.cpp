// SPDX-License-Identifier: BSD-2-Clause
// The pieces of `mmaemu fatbin build` that need no nvcc (kernels/src/fatbin_build_*.cpp): the
// nvcc version, the ptxas report per architecture, the PTX grep for forbidden instructions, the
// container listing and its comparison with the spec. The command itself is tested in
// harness/cli/tests/test_fatbin_cli.cpp.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/kernels/fatbin_build.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using mmaemu::testing::slurp;
using testing::HasSubstr;
using testing::Not;
namespace mk = mmaemu::kernels;

namespace {

// The committed fatbins, beside the kernel sources (MMAEMU_TEST_KERNEL_SOURCE_DIR is kernels/cuda).
const fs::path kBin = fs::path(MMAEMU_TEST_KERNEL_SOURCE_DIR).parent_path() / "bin";

// A mutant's copy of the repository has no committed fatbins (mutants/: they would be stale
// against its edited kernel sources); these tests then have nothing to check.
#define SKIP_WITHOUT_COMMITTED_FATBINS()                                                           \
  do {                                                                                             \
    if (!fs::exists(kBin / "manifest.json"))                                                       \
      GTEST_SKIP() << kBin << " has no committed fatbins (a mutant's copy of the repository)";     \
  } while (0)

TEST(FatbinBuildPieces, NvccVersionParsed) {
  const auto v = mk::parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                        "Cuda compilation tools, release 13.0, V13.0.88\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 13);
  EXPECT_EQ(v->minor, 0);
  EXPECT_EQ(v->full, "13.0.88");
  EXPECT_TRUE(v->at_least(12, 8));
  const auto old = mk::parse_nvcc_version("Cuda compilation tools, release 12.0, V12.0.140");
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->at_least(12, 8));
  EXPECT_TRUE(mk::parse_nvcc_version("release 12.8, V12.8.61")->at_least(12, 8));
  EXPECT_FALSE(mk::parse_nvcc_version("gcc (Debian 12.2.0-14) 12.2.0"));
}

TEST(FatbinBuildPieces, PtxasReportPerArchitecture) {
  const std::string out =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'mmaemu_v1_e4m3e4m3' for 'sm_75'\n"
      "ptxas info    : Function properties for mmaemu_v1_e4m3e4m3\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 1 barriers, 12288 bytes smem, 388 bytes cmem[0]\n"
      "ptxas info    : Compile time = 19.415 ms\n"
      "ptxas warning : Registers are spilled to local memory in function 'x'\n"
      "ptxas info    : Compiling entry function 'mmaemu_v1_e4m3e4m3' for 'sm_90'\n"
      "ptxas warning : something about sm_90\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 12288 bytes smem\n";
  const auto rep = mk::parse_ptxas_report(out);
  ASSERT_EQ(rep.archs.size(), 2u);
  EXPECT_EQ(rep.archs[0].arch, 75);
  EXPECT_EQ(rep.archs[0].registers, 64);
  EXPECT_EQ(rep.archs[0].smem, 12288);
  EXPECT_EQ(rep.archs[0].barriers, 1);
  EXPECT_FALSE(rep.archs[0].spills());
  EXPECT_EQ(rep.archs[1].arch, 90);
  EXPECT_EQ(rep.archs[1].registers, 255);
  EXPECT_EQ(rep.archs[1].stack_frame, 16);
  EXPECT_EQ(rep.archs[1].spill_stores, 8);
  EXPECT_EQ(rep.archs[1].spill_loads, 4);
  EXPECT_TRUE(rep.archs[1].spills());
  ASSERT_EQ(rep.archs[1].warnings.size(), 1u);
  ASSERT_EQ(rep.warnings.size(), 1u); // after sm_75's "Compile time", before sm_90 starts
}

TEST(FatbinBuildPieces, ForbiddenPtxFound) {
  const std::string ptx = "\tfma.rn.f32 \t%f1, %f2, %f3, %f4;\n"
                          "\tfma.rz.bf16x2 \t%r1, %r2, %r3, %r4;\n"
                          "\tfma.rz.f32 %f1, %f2, %f3, %f4;\n"
                          "  fma.rz.bf16 %rs1, %rs2, %rs3, %rs4;\n";
  const auto hits = mk::forbidden_ptx_lines(ptx);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_THAT(hits[0], HasSubstr("line 2: fma.rz.bf16x2"));
  EXPECT_THAT(hits[1], HasSubstr("line 4: fma.rz.bf16 "));
  EXPECT_TRUE(mk::forbidden_ptx_lines("fma.rn.bf16x2 %r1;\nfma.rz.f16 %h;\n").empty());
}

TEST(FatbinBuildPieces, ListingComparedWithTheSpec) {
  using K = mk::FatbinImageEntry::Kind;
  std::vector<mk::FatbinImageEntry> listed{{K::elf, 80, 1, false},
                                           {K::elf, 90, 1, false},
                                           {K::elf, 90, 1, false},
                                           {K::elf, 75, 1, false},
                                           {K::ptx, 90, 1, true}};
  auto p = mk::compare_listing(listed, {80, 86, 90}, 80);
  std::sort(p.begin(), p.end());
  EXPECT_EQ(p, (std::vector<std::string>{"SASS sm_90 listed 2 times", "missing PTX compute_80",
                                         "missing SASS sm_86", "unexpected PTX compute_90",
                                         "unexpected SASS sm_75"}));
  EXPECT_TRUE(
      mk::compare_listing({{K::elf, 80, 1, false}, {K::ptx, 80, 1, true}}, {80}, 80).empty());
}

TEST(FatbinBuildPieces, CuobjdumpListingParsedAndFormatted) {
  using K = mk::FatbinImageEntry::Kind;
  const std::vector<mk::FatbinImageEntry> e{
      {K::elf, 75, 1, false}, {K::elf, 120, 1, false}, {K::ptx, 75, 1, true}};
  const std::string text = mk::format_fatbin_listing("v1", e);
  EXPECT_EQ(text, "ELF file    1: v1.1.sm_75.cubin\nELF file    2: v1.2.sm_120.cubin\n"
                  "PTX file    1: v1.1.sm_75.ptx\n");
  const auto back = mk::parse_cuobjdump_listing("# header\n" + text);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[1].arch, 120);
  EXPECT_EQ(back[2].kind, K::ptx);
}

TEST(FatbinBuildPieces, ContainerParserRefusesGarbageAndTruncation) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  EXPECT_THROW(mk::list_fatbin("not a fatbin at all, just text"), std::runtime_error);
  EXPECT_THROW(mk::list_fatbin(""), std::runtime_error);
  const std::string v1 = slurp(kBin / "v1.fatbin");
  ASSERT_GT(v1.size(), 1000u);
  const auto entries = mk::list_fatbin(v1);
  EXPECT_EQ(entries.size(), 8u); // 7 SASS + 1 PTX
  for (std::size_t cut : {std::size_t{10}, std::size_t{40}, v1.size() / 2, v1.size() - 1})
    EXPECT_THROW(mk::list_fatbin(std::string_view(v1).substr(0, cut)), std::runtime_error) << cut;
}

TEST(FatbinBuildPieces, CommittedListingNamesExactlyTheSpecArchitectures) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  const std::string text = slurp(kBin / "cuobjdump.txt");
  EXPECT_THAT(text, HasSubstr("== v1.fatbin"));
  EXPECT_THAT(text, HasSubstr("v1.7.sm_120.cubin"));
  EXPECT_THAT(text, HasSubstr("h4.1.sm_80.ptx"));
  EXPECT_THAT(text, Not(HasSubstr("h4.1.sm_75")));
}

} // namespace
