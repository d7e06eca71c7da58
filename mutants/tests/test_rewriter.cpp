// SPDX-License-Identifier: BSD-2-Clause
// The source rewriter: an original found once is replaced; not found, found twice, a missing
// file and overlapping edits are refused loudly, and nothing is written then.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "mmaemu/mutants/rewriter.hpp"
#include "temp_dir.hpp" // tests/support

using namespace mmaemu::mutants;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

Mutant one_edit(const std::string& file, const std::string& from, const std::string& to) {
  Mutant m;
  m.id = "plan.test";
  m.edits.push_back({file, from, to, Form::expr});
  return m;
}

std::string rewrite_error(const fs::path& root, const Mutant& m) {
  try {
    apply_mutant(root, m);
  } catch (const RewriteError& e) {
    return e.what();
  }
  return "applied";
}

} // namespace

TEST(Rewriter, OriginalFoundOnceIsReplacedAndRestored) {
  mmaemu::testing::TempDir t("mutants");
  const std::string text = "int f(int a) {\n  return a + 1;\n}\n";
  spit(t.path() / "src/f.cpp", text);
  const auto saved = apply_mutant(t.path(), one_edit("src/f.cpp", "a + 1", "a - 1"));
  EXPECT_EQ(slurp(t.path() / "src/f.cpp"), "int f(int a) {\n  return a - 1;\n}\n");
  restore_files(t.path(), saved);
  EXPECT_EQ(slurp(t.path() / "src/f.cpp"), text);
}

TEST(Rewriter, OriginalNotFoundIsRefusedAndNothingWritten) {
  mmaemu::testing::TempDir t("mutants");
  spit(t.path() / "f.cpp", "return a + 1;\n");
  EXPECT_THAT(rewrite_error(t.path(), one_edit("f.cpp", "a + 2", "a - 2")),
              HasSubstr("plan.test: f.cpp: original 'a + 2' not found"));
  EXPECT_EQ(slurp(t.path() / "f.cpp"), "return a + 1;\n");
}

TEST(Rewriter, OriginalFoundTwiceIsRefusedAndNothingWritten) {
  mmaemu::testing::TempDir t("mutants");
  spit(t.path() / "f.cpp", "x = a + 1;\ny = a + 1;\n");
  EXPECT_THAT(rewrite_error(t.path(), one_edit("f.cpp", "a + 1", "a - 1")),
              HasSubstr("found 2 times (it must occur exactly once)"));
  EXPECT_EQ(slurp(t.path() / "f.cpp"), "x = a + 1;\ny = a + 1;\n");
}

TEST(Rewriter, MissingFileIsRefused) {
  mmaemu::testing::TempDir t("mutants");
  EXPECT_THAT(rewrite_error(t.path(), one_edit("nope.cpp", "a", "b")),
              HasSubstr("plan.test: nope.cpp: file missing"));
}

TEST(Rewriter, OverlappingEditsAreRefusedAndALaterFailureWritesNothing) {
  mmaemu::testing::TempDir t("mutants");
  spit(t.path() / "f.cpp", "return a + 1;\n");
  spit(t.path() / "g.cpp", "return b;\n");
  Mutant m = one_edit("f.cpp", "a + 1", "a - 1");
  m.edits.push_back({"f.cpp", "+ 1;", "+ 2;", Form::expr});
  EXPECT_THAT(rewrite_error(t.path(), m), HasSubstr("two edits overlap"));
  Mutant two = one_edit("f.cpp", "a + 1", "a - 1");
  two.edits.push_back({"g.cpp", "missing", "x", Form::expr});
  EXPECT_THAT(rewrite_error(t.path(), two), HasSubstr("g.cpp: original 'missing' not found"));
  EXPECT_EQ(slurp(t.path() / "f.cpp"), "return a + 1;\n");
}

TEST(Rewriter, EditsOfSeveralFilesAllApply) {
  mmaemu::testing::TempDir t("mutants");
  spit(t.path() / "f.cpp", "return a + 1;\n");
  spit(t.path() / "g.cpp", "return b * 2;\n");
  Mutant m = one_edit("f.cpp", "+ 1", "+ 3");
  m.edits.push_back({"g.cpp", "* 2", "* 4", Form::expr});
  const auto saved = apply_mutant(t.path(), m);
  EXPECT_EQ(slurp(t.path() / "f.cpp"), "return a + 3;\n");
  EXPECT_EQ(slurp(t.path() / "g.cpp"), "return b * 4;\n");
  EXPECT_EQ(saved.size(), 2u);
}

TEST(Rewriter, CountsOverlappingOccurrences) {
  EXPECT_EQ(count_occurrences("aaaa", "aa"), 3u);
  EXPECT_EQ(count_occurrences("abc", ""), 0u);
  EXPECT_EQ(count_occurrences("abc", "abcd"), 0u);
}

TEST(Rewriter, CatalogueCheckListsEveryDefect) {
  mmaemu::testing::TempDir t("mutants");
  spit(t.path() / "f.cpp", "x = a + 1;\ny = a + 1;\nz = c;\n");
  Catalogue c;
  c.mutants.push_back(one_edit("f.cpp", "a + 1", "a"));
  c.mutants.push_back(one_edit("f.cpp", "z = c", "z = d"));
  c.mutants.push_back(one_edit("g.cpp", "q", "r"));
  const auto problems = check_catalogue_applies(t.path(), c);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], HasSubstr("found 2 times"));
  EXPECT_THAT(problems[1], HasSubstr("file missing"));
}
