// SPDX-License-Identifier: BSD-2-Clause
// The command line's one convention (docs/api.md, "Conventions"), table-driven over every
// subcommand that `mmaemu --help` lists: exit 2 and one line on stderr (nothing on stdout) for
// every usage error, unknown names included; 1 only for a bit mismatch or a call that would
// raise; 4 for what is not here; `--json PATH` everywhere, checked before any work, with `-`
// meaning stdout (which then holds only the JSON); help that lists only the kernels this build
// has; --device and --backend that agree with each other and with `info`; one default
// accumulation (torch's slow one).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::testing::CliEnv;
using mmaemu::testing::CliResult;
using testing::HasSubstr;

namespace {

// Every run sees no CUDA (the same result on a machine with a GPU) and none of the caller's
// mmaemu variables (cli_run.hpp).
CliResult run(const std::vector<std::string>& args, CliEnv env = {}) {
  env.emplace("MMAEMU_DISABLE_CUDA", "1");
  return mmaemu::testing::run_command(MMAEMU_BIN, env, args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

fs::path source(const std::string& rel) {
  return fs::path(MMAEMU_SOURCE_DIR) / rel;
}

std::string recording() {
  return source("recordings/data/public/Ada_E4M3.h5").string();
}

// The leaf subcommands `--help` lists, as "tier run", found by walking the help texts: a new
// subcommand is in this test's table, or the test fails.
std::set<std::string> listed_subcommands(const std::vector<std::string>& path = {}) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  const CliResult r = run(args);
  std::set<std::string> leaves;
  bool in_list = false;
  std::vector<std::string> subs;
  for (const auto& line : lines_of(r.out)) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (in_list) {
      if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
        subs.push_back(line.substr(2, line.find(' ', 2) - 2));
      } else if (!line.empty() && line[0] != ' ') {
        in_list = false;
      }
    }
  }
  if (subs.empty()) {
    std::string name;
    for (const auto& p : path)
      name += (name.empty() ? "" : " ") + p;
    leaves.insert(name);
    return leaves;
  }
  for (const auto& s : subs) {
    auto p = path;
    p.push_back(s);
    for (const auto& leaf : listed_subcommands(p))
      leaves.insert(leaf);
  }
  return leaves;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

// One subcommand: the arguments of a run that does its work cheaply (or only its checks),
// the statuses that run may exit with, and whether its `--json -` run is in the table (not for
// the runs that do work this test cannot afford: a build, a mutation campaign).
struct Row {
  std::string command;
  std::vector<std::string> args; // {dir} is a fresh folder of the test
  std::set<int> statuses;
  bool json_run = true;
};

class CliConventions : public ::testing::Test {
protected:
  // What the rows need, made once for the suite: a public set to import, two T1 shards to
  // merge, an unsigned T1 log to refuse, the committed log dates.
  static void SetUpTestSuite() {
    tmp_ = new mmaemu::testing::TempDir("cli_conventions");
    dir_ = tmp_->path();
    const auto set = testsupport::write_set(dir_ / "set", {});
    set_dir_ = set.dir.string();
    for (const char* shard : {"1/2", "2/2"})
      (void)run({"tier", "run", "T1", "--shard", shard, "--log-dir", (dir_ / "shards").string()});
    (void)run({"tier", "run", "T1", "--log-dir", (dir_ / "logs").string()});
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "shards", ec)) {
      if (e.path().extension() == ".json")
        shards_.push_back(e.path().string());
    }
    std::sort(shards_.begin(), shards_.end());
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "logs", ec)) {
      if (e.path().extension() == ".json")
        unsigned_log_ = e.path().string();
    }
    for (const auto& e : fs::directory_iterator(source("docs/validation_logs"), ec)) {
      if (e.is_directory() && e.path().filename() != "keys")
        dates_.push_back(e.path().filename().string());
    }
    std::sort(dates_.begin(), dates_.end());
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(shards_.size(), 2u) << "the T1 shards were not written";
    ASSERT_FALSE(unsigned_log_.empty()) << "the T1 log was not written";
  }

  // The table: every leaf subcommand.
  std::vector<Row> rows() {
    const std::string d = dir_.string();
    return {
        {"info", {}, {0}},
        {"dot", {"--a", "38", "--b", "38"}, {0}},
        {"explain", {"16", "16", "32", "--splitk", "1"}, {0}},
        {"gemm", {"--M", "16", "--N", "16", "--K", "32", "--splitk", "1"}, {0}},
        {"bench gemm", {"--M", "16", "--N", "16", "--K", "32", "--threads", "1"}, {0}},
        {"bench kernels", {}, {4}},
        {"recordings import-public", {set_dir_, "--out", "{dir}/imported.h5"}, {0}},
        {"recordings show", {recording()}, {0}},
        {"recordings fill", {recording()}, {0}},
        {"replay", {recording()}, {0}},
        {"tier list", {}, {0}},
        {"tier run", {"T1", "--no-log"}, {0}},
        {"report keygen", {"--out", "{dir}/key.pem"}, {0}},
        {"report verify", {source("docs/validation_logs").string()}, {0}},
        {"report release",
         {"--date", dates_.empty() ? "2026-12-01" : dates_.back(), "--allow-other-commit", "--out",
          "{dir}"},
         {0, 1}},
        {"report merge", {shards_.at(0), shards_.at(1), "--out", "{dir}/merged.json"}, {0}},
        // Refuses an unsigned log (the publishing itself: test_publish.cpp).
        {"report publish", {unsigned_log_}, {2}, false},
        {"selftest", {}, {4}},
        {"fatbin build", {"--out", "{dir}/fatbin"}, {0, 1, 2}, false}, // nvcc: minutes
        // A mutant's copy of the repository has no kernels/bin (left out of every copy): there
        // the check cannot open the manifest, a usage error of its input (exit 2).
        {"fatbin check",
         {},
         fs::exists(source("kernels/bin/manifest.json")) ? std::set<int>{0, 1} : std::set<int>{2}},
        {"mutants list", {}, {0}},
        {"report compare", {shards_.at(0), shards_.at(0)}, {0}},
        {"evidence show", {}, {0}},
        {"evidence check", {"--source-dir", source(".").string()}, {0}},
        // Writes into the source tree: only the checks before any work run here.
        {"evidence write", {"--source-dir", source(".").string()}, {0}, false},
        {"cluster slurm", {"T1", "--shards", "2", "--run-dir", "{dir}/run"}, {0}},
        {"mutants run", {"--only", "^control_sign_flip$", "--no-log"}, {0, 1}, false},
    };
  }

  std::vector<std::string> argv(const Row& row, const std::vector<std::string>& extra,
                                const fs::path& where) const {
    std::vector<std::string> a = words(row.command);
    for (auto x : row.args) {
      if (const auto at = x.find("{dir}"); at != std::string::npos)
        x.replace(at, 5, where.string());
      a.push_back(x);
    }
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  fs::path fresh(const std::string& name) {
    const fs::path p = dir_ / ("run-" + std::to_string(++runs_) + "-" + name);
    fs::create_directories(p);
    return p;
  }

  static inline mmaemu::testing::TempDir* tmp_ = nullptr;
  static inline fs::path dir_;
  static inline std::string set_dir_, unsigned_log_;
  static inline std::vector<std::string> shards_, dates_;
  static inline int runs_ = 0;
};

std::string said(const std::vector<std::string>& args, const CliResult& r) {
  std::string cmd = "mmaemu";
  for (const auto& a : args)
    cmd += " " + a;
  return cmd + "\n  status " + std::to_string(r.status) + "\n  stdout: " + r.out +
         "\n  stderr: " + r.err;
}

// A usage error: exit 2, nothing on stdout, exactly one line on stderr.
void expect_usage_error(const std::vector<std::string>& args, const CliResult& r,
                        const std::string& names = "") {
  EXPECT_EQ(r.status, 2) << said(args, r);
  EXPECT_EQ(r.out, "") << said(args, r);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << said(args, r);
  if (!names.empty()) {
    EXPECT_THAT(r.err, HasSubstr(names)) << said(args, r);
  }
}

TEST_F(CliConventions, TheTableHasARowForEverySubcommandTheHelpLists) {
  std::set<std::string> in_table;
  for (const auto& r : rows())
    in_table.insert(r.command);
  const auto listed = listed_subcommands();
  EXPECT_GE(listed.size(), 20u);
  EXPECT_EQ(listed, in_table);
}

TEST_F(CliConventions, AnUnknownOptionIsExitTwoWithOneLinePointingAtHelp) {
  for (const auto& row : rows()) {
    const auto args = argv(row, {"--no-such-option"}, fresh("unknown"));
    const auto r = run(args);
    expect_usage_error(args, r, "--help");
  }
  expect_usage_error({}, run({}), "--help");
  expect_usage_error({"nosuchcmd"}, run({"nosuchcmd"}), "--help");
}

TEST_F(CliConventions, EverySubcommandHasJsonPathAndChecksItBeforeAnyWork) {
  for (const auto& row : rows()) {
    const auto help = run(argv(Row{row.command, {}, {}}, {"--help"}, dir_));
    EXPECT_EQ(help.status, 0) << row.command;
    EXPECT_THAT(help.out, HasSubstr("--json PATH")) << row.command << ":\n" << help.out;
    EXPECT_THAT(help.out, HasSubstr("'-': stdout")) << row.command;
    // A --json into a folder that does not exist stops the run before it starts.
    const fs::path where = fresh("nofolder");
    const auto args = argv(row, {"--json", (where / "absent" / "out.json").string()}, where);
    const auto r = run(args);
    expect_usage_error(args, r, "--json");
    EXPECT_FALSE(fs::exists(where / "imported.h5")) << row.command;
    EXPECT_FALSE(fs::exists(where / "key.pem")) << row.command;
    EXPECT_FALSE(fs::exists(where / "merged.json")) << row.command;
  }
}

TEST_F(CliConventions, JsonDashPutsOnlyTheJsonOnStdoutAndTheTextOnStderr) {
  for (const auto& row : rows()) {
    if (!row.json_run)
      continue;
    const auto args = argv(row, {"--json", "-"}, fresh("dash"));
    const auto r = run(args);
    EXPECT_TRUE(row.statuses.count(r.status)) << said(args, r);
    nlohmann::json j;
    EXPECT_NO_THROW(j = nlohmann::json::parse(r.out)) << said(args, r);
    EXPECT_FALSE(j.is_null()) << said(args, r);
    // The same run with a file writes the same kind of JSON there.
    const fs::path where = fresh("file");
    const auto fargs = argv(row, {"--json", (where / "out.json").string()}, where);
    const auto f = run(fargs);
    EXPECT_TRUE(row.statuses.count(f.status)) << said(fargs, f);
    EXPECT_TRUE(nlohmann::json::accept(mmaemu::testing::slurp(where / "out.json")))
        << said(fargs, f);
  }
}

// Unknown names (backend, kernel, profile, preset, tier, device) are usage errors, exit 2 with
// one line naming the option; nothing after it (no half-printed plan).
TEST_F(CliConventions, UnknownNamesAreUsageErrors) {
  const std::string rec = recording();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1", "--backend", "cuda:zz"},
       "--backend"},
      {{"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1", "--backend", "gpu"},
       "--backend"},
      {{"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1", "--profile", "nope"},
       "--profile"},
      {{"explain", "16", "16", "32", "--profile", "nope"}, "--profile"},
      {{"explain", "16", "16", "32", "--backend", "cuda:zz"}, "--backend"},
      {{"explain", "16", "16", "32", "--device", "tpu"}, "--device"},
      {{"explain", "16", "16", "32", "--device", "cpu", "--backend", "cuda"}, "--device"},
      {{"replay", rec, "--backend", "cuda:zz"}, "--backend"},
      {{"bench", "gemm", "--M", "16", "--N", "16", "--K", "32", "--profile", "nope"}, "--profile"},
      {{"selftest", "--kernels", "zz"}, "zz"},
      {{"selftest", "--device", "gpu"}, "--device"},
      {{"info", "--device", "-1"}, "--device"},
      {{"bench", "kernels", "--kernels", "zz"}, "zz"},
      {{"dot", "--a", "38", "--b", "38", "--preset", "nope"}, "nope"},
      {{"tier", "run", "T99", "--no-log"}, "T99"},
      {{"mutants", "list", "--tier", "tpu"}, "--tier"},
  };
  for (const auto& [args, names] : cases)
    expect_usage_error(args, run(args), names);
  EXPECT_EQ(
      run({"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1", "--profile", "nope"},
          {{"MMAEMU_PROFILE", "hopper"}})
          .status,
      2);
  expect_usage_error({"explain"}, run({"explain", "16", "16", "32"}, {{"MMAEMU_PROFILE", "nope"}}),
                     "MMAEMU_PROFILE");
}

// 1 only for a call that would raise (or a bit mismatch, test_cli.cpp); the error line says at
// once what to pass.
TEST_F(CliConventions, ACallThatWouldRaiseIsExitOne) {
  const auto splitk = run({"gemm", "--M", "64", "--N", "64", "--K", "256"});
  EXPECT_EQ(splitk.status, 1) << splitk.all();
  EXPECT_EQ(splitk.out, "");
  ASSERT_EQ(lines_of(splitk.err).size(), 1u) << splitk.err;
  EXPECT_THAT(splitk.err, testing::StartsWith("mmaemu: SplitKUnknownError: pass --splitk 1"));
  const auto explain = run({"explain", "64", "64", "256"});
  EXPECT_EQ(explain.status, 1) << explain.all();
  EXPECT_THAT(explain.out, HasSubstr("validation  SplitKUnknownError: pass --splitk 1"));
  EXPECT_EQ(run({"explain", "16", "16", "32", "--splitk", "2,serial"}).status, 1);
  EXPECT_EQ(run({"gemm", "--M", "16", "--N", "16", "--K", "72", "--splitk", "1"}).status, 1);
}

// 4 for what is not here: a CUDA backend or device, a kernel this build lacks, nothing tested;
// --device and --backend say the same, with the reason `info` gives.
TEST_F(CliConventions, WhatIsNotHereIsExitFourWithTheReasonInfoGives) {
  const auto info = run({"info", "--json", "-"});
  ASSERT_EQ(info.status, 0) << info.all();
  const auto j = nlohmann::json::parse(info.out);
  const std::string why = j.at("cuda").at("reason");
  EXPECT_EQ(j.at("cuda").at("available"), false);
  EXPECT_THAT(why, HasSubstr("MMAEMU_DISABLE_CUDA=1"));
  const std::string rec = recording();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1",
                                 "--device", "cuda"},
        std::vector<std::string>{"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1",
                                 "--backend", "cuda"},
        std::vector<std::string>{"explain", "16", "16", "32", "--splitk", "1", "--device",
                                 "cuda:0"},
        std::vector<std::string>{"explain", "16", "16", "32", "--splitk", "1", "--backend",
                                 "cuda:h4"},
        std::vector<std::string>{"replay", rec, "--backend", "cuda"},
        std::vector<std::string>{"selftest"}, std::vector<std::string>{"bench", "kernels"}}) {
    const auto r = run(args);
    EXPECT_EQ(r.status, 4) << said(args, r);
    EXPECT_THAT(r.all(), HasSubstr(why)) << said(args, r);
  }
  // A kernel mmaemu knows but this build lacks (none, once every design is built).
  for (const auto name : mmaemu::kernels::absent_kernel_names()) {
    const std::string k(name);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"replay", rec, "--backend", "cuda:" + k},
          std::vector<std::string>{"selftest", "--kernels", k},
          std::vector<std::string>{"bench", "kernels", "--kernels", k}}) {
      const auto r = run(args);
      EXPECT_EQ(r.status, 4) << said(args, r);
      EXPECT_THAT(r.err, HasSubstr("not part of this build")) << said(args, r);
    }
  }
}

// The help names the kernels of this build (from the registry) and the absent ones only as
// absent, with the reason.
TEST_F(CliConventions, HelpListsOnlyTheKernelsOfThisBuild) {
  std::string built;
  for (const auto name : mmaemu::kernels::known_kernel_names()) {
    if (mmaemu::kernels::find_kernel_spec(name))
      built += (built.empty() ? "" : "|") + std::string(name);
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"gemm", "--help"}, std::vector<std::string>{"explain", "--help"},
        std::vector<std::string>{"replay", "--help"}}) {
    const auto r = run(args);
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_THAT(r.out, HasSubstr("cuda:<" + built + ">")) << r.out;
    for (const auto name : mmaemu::kernels::absent_kernel_names()) {
      EXPECT_THAT(r.out, HasSubstr("not in this build: ")) << r.out;
      EXPECT_THAT(r.out, testing::Not(HasSubstr("|" + std::string(name) + "|"))) << r.out;
    }
  }
  const auto info = run({"info"});
  for (const auto name : mmaemu::kernels::absent_kernel_names())
    EXPECT_THAT(info.out, HasSubstr("cuda:" + std::string(name))) << info.out;
}

// One default accumulation: torch's slow one (use_fast_accum=False) in explain, gemm and
// bench gemm.
TEST_F(CliConventions, TheDefaultAccumulationIsTorchsEverywhere) {
  const auto explain = run({"explain", "16", "16", "32", "--splitk", "1"});
  EXPECT_THAT(explain.out, HasSubstr("use_fast_accum=False"));
  const auto gemm =
      run({"gemm", "--M", "16", "--N", "16", "--K", "32", "--splitk", "1", "--json", "-"});
  ASSERT_EQ(gemm.status, 0) << gemm.all();
  EXPECT_EQ(nlohmann::json::parse(gemm.out).at("use_fast_accum"), false);
  const auto bench = run(
      {"bench", "gemm", "--M", "16", "--N", "16", "--K", "32", "--threads", "1", "--json", "-"});
  ASSERT_EQ(bench.status, 0) << bench.all();
  EXPECT_EQ(nlohmann::json::parse(bench.out).at("fast"), false);
}

} // namespace
