// SPDX-License-Identifier: BSD-2-Clause
// Mutant schemata: a small program's schema, compiled once, gives with MMAEMU_MUTANT_SCHEMA=n
// exactly what the plain rewrite of mutant n gives when compiled on its own (and the original
// program with no selection). The program is compiled by the system C++ compiler.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "mmaemu/mutants/rewriter.hpp"
#include "mmaemu/mutants/schema.hpp"
#include "mmaemu/support/process.hpp"
#include "temp_dir.hpp" // tests/support

using namespace mmaemu::mutants;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

const char* kProgram = R"(// SPDX-License-Identifier: BSD-2-Clause
#include <cstdio>
int f(int x) {
  int y = x * 3;
  if (y > 10)
    y -= 10;
  return y + 1;
}
int main() {
  for (int x = 0; x < 6; ++x)
    std::printf("%d ", f(x));
  std::printf("\n");
  return 0;
}
)";

std::vector<Mutant> mutants_of_program() {
  auto m = [](const std::string& id, std::vector<Edit> e) {
    Mutant x;
    x.id = id;
    x.edits = std::move(e);
    return x;
  };
  return {
      m("a.times4", {{"p.cpp", "x * 3", "x * 4", Form::expr}}),
      m("a.times2", {{"p.cpp", "x * 3", "x * 2", Form::expr}}),
      m("a.sub9", {{"p.cpp", "y -= 10;", "y -= 9;", Form::stmt}}),
      m("a.two_edits",
        {{"p.cpp", "y > 10", "y >= 10", Form::expr}, {"p.cpp", "y + 1", "y - 1", Form::expr}}),
  };
}

std::string compile_and_run(const fs::path& dir, const std::string& source,
                            const std::map<std::string, std::string>& env = {}) {
  std::ofstream(dir / "p.cpp", std::ios::binary) << source;
  const auto cc = mmaemu::support::run_process(
      {"c++", "-std=c++20", "-o", (dir / "p").string(), (dir / "p.cpp").string()});
  if (cc.exit_code != 0)
    return "compile error: " + cc.output;
  mmaemu::support::ProcessOptions o;
  o.set_env = env;
  return mmaemu::support::run_process({(dir / "p").string()}, o).output;
}

} // namespace

TEST(Schema, EachSelectionGivesWhatItsPlainRewriteGives) {
  if (!mmaemu::support::find_program("c++"))
    GTEST_SKIP() << "no c++ compiler in PATH";
  mmaemu::testing::TempDir t("mutants");
  const auto ms = mutants_of_program();
  std::vector<std::pair<int, const Edit*>> edits;
  for (std::size_t i = 0; i < ms.size(); ++i)
    for (const auto& e : ms[i].edits)
      edits.push_back({static_cast<int>(i + 1), &e});
  const std::string schema = schema_text(kProgram, edits, "p.cpp");
  EXPECT_THAT(schema, HasSubstr("MMAEMU_MUTANT_ON(1) ? (x * 4) : MMAEMU_MUTANT_ON(2) ? (x * 2)"));

  const std::string original = compile_and_run(t.path(), kProgram);
  EXPECT_EQ(original, "1 4 7 10 3 6 \n");
  std::vector<std::string> schema_out;
  for (std::size_t n = 0; n <= ms.size(); ++n) {
    schema_out.push_back(compile_and_run(t.path(), schema, {{kSchemaEnv, std::to_string(n)}}));
  }
  EXPECT_EQ(schema_out[0], original);
  for (std::size_t i = 0; i < ms.size(); ++i) {
    std::vector<const Edit*> mine;
    for (const auto& e : ms[i].edits)
      mine.push_back(&e);
    const std::string plain =
        compile_and_run(t.path(), rewrite_text(kProgram, mine, ms[i].id, "p.cpp"));
    EXPECT_EQ(schema_out[i + 1], plain) << ms[i].id;
    EXPECT_NE(plain, original) << ms[i].id << " must change the output";
  }
}

TEST(Schema, PartlyOverlappingOriginalsAreRefused) {
  Edit a{"p.cpp", "x * 3", "x * 4", Form::expr};
  Edit b{"p.cpp", "3;\n  if", "4;\n  if", Form::expr};
  try {
    schema_text(kProgram, {{1, &a}, {2, &b}}, "p.cpp");
    FAIL() << "accepted";
  } catch (const RewriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("overlap without being equal"));
  }
}

TEST(Schema, KernelSourcesSeeNoMutantOutsideTheHostShim) {
  Edit a{"k.cuh", "x * 3", "x * 4", Form::expr};
  const std::string s = schema_text(kProgram, {{1, &a}}, "kernels/cuda/k.cuh");
  EXPECT_THAT(s, HasSubstr("#if defined(MMAEMU_HOST_SHIM)"));
  EXPECT_THAT(s, HasSubstr("#define MMAEMU_MUTANT_ON(n) false"));
  // The SPDX line stays first.
  EXPECT_EQ(s.rfind("// SPDX-License-Identifier: BSD-2-Clause\n#ifndef MMAEMU_MUTANT_ON", 0), 0u);
}
