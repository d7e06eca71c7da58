// SPDX-License-Identifier: BSD-2-Clause
// Importing sets in the text layout of the public hardware vectors: what the importer accepts
// (upper-case hex) and refuses, each refusal naming the file and the line, and the GPU names it
// maps to presets. The imported sets replayed bit for bit are tested beside the replay
// (harness/replay/tests/test_import_public_replay.cpp).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mmaemu/recordings/import_public.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::recordings::import_public_set;
using mmaemu::recordings::ImportError;
using mmaemu::recordings::map_gpu;
using mmaemu::recordings::Recording;
using testing::HasSubstr;
using testsupport::SetData;
using testsupport::SetSpec;
using testsupport::TempDir;

namespace {

// Calls f, which must throw ImportError; returns its message.
template <class F> std::string import_error_of(F f) {
  try {
    f();
  } catch (const ImportError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ImportError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected ImportError, nothing was thrown";
  return {};
}

// A small valid H100/E4M3 set of 5 lines for the error tests.
SetData small_set(const fs::path& dir, unsigned seed = 3) {
  SetSpec s;
  s.n = 5;
  s.seed = seed;
  return testsupport::write_set(dir, s);
}

} // namespace

TEST(ImportPublic, UpperCaseHexIsAccepted) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  std::string text = testsupport::read_text(set.a);
  for (char& ch : text)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  testsupport::write_text(set.a, text);
  const Recording rec = import_public_set(set.dir);
  EXPECT_EQ(rec.mma.at(0).a, set.a_codes);
}

TEST(ImportPublic, NonHexTokenNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.a);
  lines[2].replace(lines[2].find(' ') + 1, 8, "3f70000g"); // second token of line 3
  testsupport::write_lines(set.a, lines);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.a.string() + ":3"));
  EXPECT_THAT(msg, HasSubstr("3f70000g"));
}

TEST(ImportPublic, SevenDigitTokenNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.b);
  lines[1].replace(0, 8, "3f70000"); // first token of line 2, one digit short
  testsupport::write_lines(set.b, lines);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.b.string() + ":2"));
}

TEST(ImportPublic, LineOf31ValuesNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.a);
  lines[3].erase(lines[3].rfind(' ')); // drop the last value of line 4
  testsupport::write_lines(set.a, lines);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.a.string() + ":4"));
  EXPECT_THAT(msg, HasSubstr("31"));
}

TEST(ImportPublic, LineOf33ValuesNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.b);
  lines[4] += " 00000000";
  testsupport::write_lines(set.b, lines);
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }),
              HasSubstr(set.b.string() + ":5"));
}

TEST(ImportPublic, ValueNotInTheFormatNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.a);
  lines[1].replace(0, 8, "3f700001"); // 0.9375 + 1 ulp of binary32: not an E4M3 value
  testsupport::write_lines(set.a, lines);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.a.string() + ":2"));
  EXPECT_THAT(msg, HasSubstr("3f700001"));
}

TEST(ImportPublic, E5M2ValueThatIsNotE4M3IsRejected) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.a);
  lines[0].replace(0, 8, "47000000"); // 32768: E5M2 max range, beyond E4M3's 448
  testsupport::write_lines(set.a, lines);
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }),
              HasSubstr(set.a.string() + ":1"));
}

TEST(ImportPublic, CLineOf31CharactersNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  testsupport::replace_line(set.c, 3, std::string(31, '0'));
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }),
              HasSubstr(set.c.string() + ":3"));
}

TEST(ImportPublic, CLineWithDigitTwoNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  std::string line = testsupport::binary32_string(set.c_bits[4]);
  line[10] = '2';
  testsupport::replace_line(set.c, 5, line);
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }),
              HasSubstr(set.c.string() + ":5"));
}

TEST(ImportPublic, BadDLineNamesFileAndLine) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  testsupport::replace_line(set.d, 2, std::string(33, '1'));
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }),
              HasSubstr(set.d.string() + ":2"));
}

TEST(ImportPublic, DifferingLineCountsNameTheFiles) {
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    TempDir dir("imp");
    const SetData set = small_set(dir / "set");
    const fs::path& p = which == 0 ? set.b : which == 1 ? set.c : set.d;
    auto lines = testsupport::read_lines(p);
    lines.pop_back();
    testsupport::write_lines(p, lines);
    const std::string msg = import_error_of([&] { import_public_set(set.dir); });
    EXPECT_THAT(msg, HasSubstr(p.filename().string()));
  }
}

TEST(ImportPublic, ExtraDLineIsALineCountMismatch) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.d);
  lines.push_back(testsupport::binary32_string(0x3f800000u));
  testsupport::write_lines(set.d, lines);
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }),
              HasSubstr(set.d.filename().string()));
}

TEST(ImportPublic, MissingCFileNamesIt) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  fs::remove(set.c);
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }), HasSubstr(set.c.string()));
}

TEST(ImportPublic, MissingDFileNamesIt) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  fs::remove(set.d);
  EXPECT_THAT(import_error_of([&] { import_public_set(set.dir); }), HasSubstr(set.d.string()));
}

TEST(ImportPublic, NoAFileNamesTheFolderAndTheFile) {
  TempDir dir("imp");
  const SetData set = small_set(dir / "set");
  fs::remove(set.a);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.dir.string()));
  EXPECT_THAT(msg, HasSubstr("a_"));
}

TEST(ImportPublic, MissingFolderIsAnImportError) {
  TempDir dir("imp");
  EXPECT_THAT(import_error_of([&] { import_public_set(dir / "nope"); }),
              HasSubstr((dir / "nope").string()));
}

TEST(ImportPublic, UnknownGpuNamesFileAndGpu) {
  TempDir dir("imp");
  SetSpec spec;
  spec.gpu = "TPUv5";
  spec.n = 8;
  const SetData set = testsupport::write_set(dir / "set", spec);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.a.filename().string()));
  EXPECT_THAT(msg, HasSubstr("TPUv5"));
}

TEST(MapGpu, HopperNames) {
  for (const char* g : {"H100", "H200", "GH200", "h100"}) {
    const auto m = map_gpu(g);
    ASSERT_TRUE(m.has_value()) << g;
    EXPECT_EQ(m->preset, "hopper") << g;
    EXPECT_EQ(m->c_policy, "zero") << g;
  }
}

TEST(MapGpu, AdaNames) {
  for (const char* g : {"Ada", "L40S", "RTX4060"}) {
    const auto m = map_gpu(g);
    ASSERT_TRUE(m.has_value()) << g;
    EXPECT_EQ(m->preset, "ada") << g;
    EXPECT_EQ(m->c_policy, "from_file") << g;
  }
}

TEST(MapGpu, B200IsB200MmaSync) {
  const auto m = map_gpu("B200");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->preset, "b200_mma_sync");
  EXPECT_EQ(m->c_policy, "from_file");
}

TEST(MapGpu, UnknownNamesMapToNothing) {
  for (const char* g : {"TPUv5", "", "MI300X", "A100", "RTX5090"})
    EXPECT_FALSE(map_gpu(g).has_value()) << g;
}
