// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu mutants list` and `mmaemu mutants run` as separate processes, on catalogues that
// need no build: the committed catalogue listed, a damaged catalogue and one that does not fit
// the source tree refused with exit 2 before anything is copied or built, bad options named.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "temp_dir.hpp"

namespace {

using mmaemu::testing::TempDir;
using testing::HasSubstr;

mmaemu::testing::CliResult run_cli(const std::vector<std::string>& args) {
  return mmaemu::testing::run_command(MMAEMU_BIN, {}, args);
}

} // namespace

TEST(MutantsCli, ListShowsTheCommittedCatalogue) {
  const auto r = run_cli({"mutants", "list"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("control_sign_flip"));
  EXPECT_THAT(r.out, HasSubstr("mutants (/"));
  const auto j = run_cli({"mutants", "list", "--json", "-", "--tier", "cpu"});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto list = nlohmann::json::parse(j.out);
  EXPECT_GE(list.size(), 60u);
  EXPECT_TRUE(list[0].contains("edits"));
}

TEST(MutantsCli, ADamagedCatalogueExits2BeforeAnyWork) {
  TempDir t("mutcli");
  const auto bad = t.path() / "catalogue.json";
  std::ofstream(bad) << "{\"schema\": \"mmaemu-mutants/1\", \"mutants\": [";
  const auto list = run_cli({"mutants", "list", "--catalogue", bad.string()});
  EXPECT_EQ(list.status, 2) << list.all();
  EXPECT_THAT(list.err, HasSubstr("not valid JSON"));
  const auto run = run_cli({"mutants", "run", "--catalogue", bad.string(), "--no-log"});
  EXPECT_EQ(run.status, 2) << run.all();
  EXPECT_THAT(run.err, HasSubstr("not valid JSON"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("building")));
}

TEST(MutantsCli, ACatalogueThatDoesNotFitTheTreeExits2BeforeAnyWork) {
  TempDir t("mutcli");
  const auto cat = t.path() / "catalogue.json";
  std::ofstream(cat) << R"({"schema": "mmaemu-mutants/1", "mutants": [
    {"id": "control_sign_flip", "group": "control", "description": "d", "source": "s",
     "tier": "cpu", "expect": "killed",
     "edits": [{"file": "emulator/src/no_such_file.cpp", "original": "a", "replacement": "b"}]}]})";
  const auto r = run_cli({"mutants", "run", "--catalogue", cat.string(), "--no-log"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("control_sign_flip: emulator/src/no_such_file.cpp: file missing"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("building")));
  // A bad option is still what is named (as in a mutant's copy, whose tree the committed
  // catalogue does not fit).
  const auto only =
      run_cli({"mutants", "run", "--catalogue", cat.string(), "--only", "(", "--no-log"});
  EXPECT_EQ(only.status, 2) << only.all();
  EXPECT_THAT(only.err, HasSubstr("--only"));
  // So is an output aimed at the catalogue (through a symlink or a hard link): the output rule
  // comes before the fit. In a campaign's schema copy the misfit came first, and
  // CliOutputPaths then failed for every mutant, identity ones included.
  std::filesystem::create_symlink(cat, t.path() / "link.json");
  std::filesystem::create_hard_link(cat, t.path() / "hard.json");
  for (const char* option : {"--json", "--junit"}) {
    for (const char* target : {"link.json", "hard.json", "catalogue.json"}) {
      const auto out = run_cli({"mutants", "run", "--catalogue", cat.string(), "--no-log", option,
                                (t.path() / target).string()});
      EXPECT_EQ(out.status, 2) << out.all();
      EXPECT_THAT(out.err, HasSubstr(option)) << target;
      EXPECT_THAT(out.err, ::testing::Not(HasSubstr("does not fit"))) << target;
    }
  }
}

TEST(MutantsCli, BadOptionsAreNamed) {
  const auto tier = run_cli({"mutants", "run", "--tier", "tpu"});
  EXPECT_EQ(tier.status, 2);
  EXPECT_THAT(tier.err, HasSubstr("--tier"));
  const auto mode = run_cli({"mutants", "run", "--mode", "fast"});
  EXPECT_EQ(mode.status, 2);
  EXPECT_THAT(mode.err, HasSubstr("--mode"));
  const auto only = run_cli({"mutants", "run", "--only", "(", "--no-log"});
  EXPECT_EQ(only.status, 2) << only.all();
  EXPECT_THAT(only.err, HasSubstr("--only"));
}
