// SPDX-License-Identifier: BSD-2-Clause
// The embedded kernel sources are the files of kernels/cuda/, byte for byte, and
// sources_sha256 follows its documented definition (docs/backends.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/digest.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::kernels::SourceFile;

TEST(KernelSources, EveryFileOfTheSourceFolderIsEmbeddedByteForByte) {
  std::vector<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(MMAEMU_TEST_KERNEL_SOURCE_DIR)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".cu" || ext == ".cuh")
      on_disk.push_back(e.path().filename().string());
  }
  std::sort(on_disk.begin(), on_disk.end());
  std::vector<std::string> embedded;
  for (const SourceFile& f : mmaemu::kernels::kernel_source_files())
    embedded.emplace_back(f.name);
  EXPECT_EQ(embedded, on_disk) << "reconfigure after adding or removing a kernel source";
  for (const SourceFile& f : mmaemu::kernels::kernel_source_files()) {
    EXPECT_EQ(std::string(f.content),
              mmaemu::testing::slurp(fs::path(MMAEMU_TEST_KERNEL_SOURCE_DIR) / f.name))
        << f.name;
  }
}

TEST(KernelSources, EverySpecHasItsSource) {
  for (const auto& spec : mmaemu::kernels::kernel_specs()) {
    const auto src = mmaemu::kernels::kernel_source(spec.source);
    EXPECT_NE(src.find(spec.symbol), std::string_view::npos) << spec.name;
  }
  EXPECT_THROW(mmaemu::kernels::kernel_source("nope.cu"), mmaemu::ValueError);
}

TEST(KernelSources, HeadersAreTheCuhFiles) {
  const auto headers = mmaemu::kernels::kernel_headers();
  ASSERT_FALSE(headers.empty());
  for (const SourceFile& h : headers)
    EXPECT_TRUE(h.name.ends_with(".cuh")) << h.name;
  EXPECT_TRUE(std::any_of(headers.begin(), headers.end(),
                          [](const SourceFile& h) { return h.name == "mmaemu_chain.cuh"; }));
}

TEST(KernelSources, Sha256IsOverSortedNameNulContentNul) {
  // Re-derived independently from the files on disk.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(MMAEMU_TEST_KERNEL_SOURCE_DIR)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".cu" || ext == ".cuh")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  std::string bytes;
  for (const fs::path& p : files) {
    bytes += p.filename().string();
    bytes.push_back('\0');
    bytes += mmaemu::testing::slurp(p);
    bytes.push_back('\0');
  }
  EXPECT_EQ(mmaemu::kernels::sources_sha256(), mmaemu::support::sha256_hex(bytes));
}

TEST(KernelSources, Sha256OfIgnoresOrderAndRefusesDuplicates) {
  const std::vector<SourceFile> ab{{"a.cu", "1"}, {"b.cuh", "2"}};
  const std::vector<SourceFile> ba{{"b.cuh", "2"}, {"a.cu", "1"}};
  EXPECT_EQ(mmaemu::kernels::sources_sha256_of(ab), mmaemu::kernels::sources_sha256_of(ba));
  static constexpr char kBytes[] = "a.cu\0"
                                   "1\0"
                                   "b.cuh\0"
                                   "2\0";
  EXPECT_EQ(mmaemu::kernels::sources_sha256_of(ab),
            mmaemu::support::sha256_hex(std::string(kBytes, sizeof kBytes - 1)));
  // The NUL separators keep ("ab", "c") and ("a", "bc") apart.
  EXPECT_NE(mmaemu::kernels::sources_sha256_of(std::vector<SourceFile>{{"ab", "c"}}),
            mmaemu::kernels::sources_sha256_of(std::vector<SourceFile>{{"a", "bc"}}));
  const std::vector<SourceFile> dup{{"a.cu", "1"}, {"a.cu", "2"}};
  EXPECT_THROW(mmaemu::kernels::sources_sha256_of(dup), mmaemu::ValueError);
}

} // namespace
