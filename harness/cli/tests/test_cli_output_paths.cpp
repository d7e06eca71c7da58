// SPDX-License-Identifier: BSD-2-Clause
// One rule for every output path (docs/api.md, "Conventions"), table-driven over every
// subcommand that `mmaemu --help` lists: an output (--json, --junit, --out, --write, --log-dir,
// keys) may not be, or link to, a file the command reads (its inputs, recordings, tier files,
// keys, the signing key, the catalogue), nor a device, FIFO or folder; the path written is the
// path given, never a sibling (`/dev/full.json`, `<folder>.json`, `X-2.json`). Each refusal is
// exit 2 with one line naming the option or the file, and leaves the file as it was.
//
// Every hostile file is made at run time in a temporary folder; the committed tree is only
// read (copies of the tier files, recordings and catalogue are the targets).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "public_set_writer.hpp"
#include "tier_test_support.hpp"

namespace fs = std::filesystem;
using tiertest::CliResult;

namespace {

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

// A file's state: its bytes, or "<folder>", "<fifo>", "<symlink -> X>", "<absent>".
std::string state_of(const fs::path& p) {
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (!fs::exists(st))
    return "<absent>";
  if (fs::is_symlink(st))
    return "<symlink -> " + fs::read_symlink(p, ec).string() + ">";
  if (fs::is_directory(st))
    return "<folder>";
  if (fs::is_fifo(st))
    return "<fifo>";
  if (fs::is_character_file(st))
    return "<device>";
  return tiertest::slurp(p);
}

// The leaf subcommands `--help` lists ("tier run"), found by walking the help texts.
std::set<std::string> listed_subcommands(const std::vector<std::string>& path = {}) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  const CliResult r = tiertest::run_mmaemu(args, {{"MMAEMU_DISABLE_CUDA", "1"}});
  std::vector<std::string> subs;
  bool in_list = false;
  for (const auto& line : split_lines(r.out)) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
    } else if (in_list && line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
      subs.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (in_list && !line.empty() && line[0] != ' ') {
      in_list = false;
    }
  }
  std::set<std::string> leaves;
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

// One output option of one subcommand: the arguments of a run that would otherwise do its work
// (or only its checks), and the files that run reads (the targets an output must never
// replace; every row reads $MMAEMU_SIGNING_KEY as well).
struct Row {
  std::string command;
  std::vector<std::string> args;
  std::string option;
  std::vector<fs::path> reads;
};

class CliOutputPaths : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    tmp_ = new tiertest::TempDir("output_paths");
    const fs::path d = tmp_->path();
    // Copies of what the commands read: tier files, recordings, the catalogue, a key pair.
    fs::copy(tiertest::committed_tiers(), d / "tiers", fs::copy_options::recursive);
    fs::copy(tiertest::committed_recordings(), d / "rec", fs::copy_options::recursive);
    fs::create_directories(d / "mutants");
    fs::copy_file(tiertest::source_dir() / "mutants" / "catalogue.json",
                  d / "mutants" / "catalogue.json");
    fs::copy_file(tiertest::committed_recordings() / "public" / "H100_E4M3.h5", d / "r.h5");
    run({"report", "keygen", "--out", (d / "key.pem").string()});
    fs::create_directories(d / "keys");
    fs::copy_file(d / "key.pub", d / "keys" / "key.pub");
    set_ = testsupport::write_set(d / "set", {}).dir;
    // Two signed T1 shards (of a copy of the recordings) to merge, verify and compare.
    for (const char* shard : {"1/2", "2/2"})
      run({"tier", "run", "T1", "--shard", shard, "--log-dir", (d / "shards").string(), "--tiers",
           (d / "tiers").string(), "--trust-tiers", "--recordings", (d / "rec").string()});
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(d / "shards", ec)) {
      if (e.path().extension() == ".json")
        shards_.push_back(e.path());
    }
    std::sort(shards_.begin(), shards_.end());
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }

  // Every run sees no CUDA and signs with the suite's key (which it then reads).
  static CliResult run(const std::vector<std::string>& args) {
    return tiertest::run_mmaemu(
        args, {{"MMAEMU_DISABLE_CUDA", "1"}, {"MMAEMU_SIGNING_KEY", (dir() / "key.pem").string()}});
  }
  static const fs::path& dir() { return tmp_->path(); }
  static fs::path signing_key() { return dir() / "key.pem"; }

  static std::vector<Row> rows() {
    const fs::path d = dir();
    const std::string rec = (d / "r.h5").string(), tiers = (d / "tiers").string();
    const std::string cat = (d / "mutants" / "catalogue.json").string();
    const std::string s1 = shards_.at(0).string(), s2 = shards_.at(1).string();
    const std::vector<std::string> tier_run = {
        "T1", "--no-log", "--tiers", tiers, "--trust-tiers", "--recordings", (d / "rec").string()};
    const fs::path t1 = d / "tiers" / "T1.json", rec_in_t1 = d / "rec" / "public" / "H100_E4M3.h5";
    std::vector<Row> r = {
        {"info", {}, "--json", {}},
        {"dot", {"--a", "38", "--b", "38"}, "--json", {}},
        {"explain", {"16", "16", "32", "--splitk", "1"}, "--json", {}},
        {"gemm", {"--M", "16", "--N", "16", "--K", "32", "--splitk", "1"}, "--json", {}},
        {"gemm", {"--from", rec}, "--write", {rec}},
        {"gemm", {"--from", rec}, "--json", {rec}},
        {"bench gemm", {"--M", "16", "--N", "16", "--K", "32", "--threads", "1"}, "--json", {}},
        {"bench kernels", {}, "--json", {}},
        {"recordings import-public", {set_.string()}, "--out", {set_ / "a_H100_E4M3.txt"}},
        {"recordings import-public",
         {set_.string(), "--out", (d / "imported.h5").string()},
         "--json",
         {set_ / "b_H100_E4M3.txt"}},
        {"recordings show", {rec}, "--json", {rec}},
        {"recordings fill", {rec}, "--json", {rec}},
        {"replay", {rec}, "--json", {rec}},
        {"selftest", {}, "--json", {}},
        {"fatbin build", {"--out", (d / "fatbin").string()}, "--json", {}},
        {"fatbin check", {}, "--json", {}},
        {"tier list", {"--tiers", tiers, "--trust-tiers"}, "--json", {t1}},
        {"tier run", tier_run, "--junit", {t1, rec_in_t1}},
        {"tier run", tier_run, "--json", {t1, rec_in_t1}},
        {"mutants list", {"--catalogue", cat}, "--json", {cat}},
        {"mutants run",
         {"--only", "^control_sign_flip$", "--no-log", "--catalogue", cat},
         "--junit",
         {cat}},
        {"mutants run",
         {"--only", "^control_sign_flip$", "--no-log", "--catalogue", cat},
         "--json",
         {cat}},
        {"report keygen", {}, "--out", {}},
        {"report keygen", {"--out", (d / "new.pem").string()}, "--json", {}},
        {"report verify",
         {s1, "--keys", (d / "keys").string()},
         "--json",
         {shards_.at(0), d / "keys" / "key.pub"}},
        {"report merge", {s1, s2}, "--out", {shards_.at(0), shards_.at(1)}},
        {"report merge",
         {s1, s2, "--keys", (d / "keys").string(), "--out", (d / "merged.json").string()},
         "--json",
         {shards_.at(1), d / "keys" / "key.pub"}},
        {"report release",
         {"--date", "2026-12-01", "--allow-other-commit", "--log-dir", (d / "shards").string(),
          "--keys", (d / "keys").string(), "--tiers", tiers, "--trust-tiers", "--out",
          (d / "release").string()},
         "--json",
         {shards_.at(0), t1}},
        {"report compare", {s1, s2}, "--json", {shards_.at(0), shards_.at(1)}},
        {"report publish", {s1}, "--json", {shards_.at(0)}},
        {"evidence show", {}, "--json", {}},
        {"evidence check", {"--source-dir", tiertest::source_dir().string()}, "--json", {}},
        {"evidence write", {"--source-dir", tiertest::source_dir().string()}, "--json", {}},
        {"cluster slurm",
         {"T1", "--shards", "2", "--run-dir", (d / "run").string(), "--tiers", tiers,
          "--trust-tiers"},
         "--json",
         {t1}},
    };
    return r;
  }

  static std::vector<std::string> argv(const Row& row, const std::string& target) {
    std::vector<std::string> a = words(row.command);
    a.insert(a.end(), row.args.begin(), row.args.end());
    a.push_back(row.option);
    a.push_back(target);
    return a;
  }

  static tiertest::TempDir* tmp_;
  static fs::path set_;
  static std::vector<fs::path> shards_;
};

tiertest::TempDir* CliOutputPaths::tmp_ = nullptr;
fs::path CliOutputPaths::set_;
std::vector<fs::path> CliOutputPaths::shards_;

TEST_F(CliOutputPaths, EverySubcommandHasARow) {
  ASSERT_EQ(shards_.size(), 2u) << "the suite's two T1 shard logs were not written";
  std::set<std::string> in_table;
  for (const auto& r : rows())
    in_table.insert(r.command);
  for (const auto& leaf : listed_subcommands())
    EXPECT_TRUE(in_table.count(leaf)) << "subcommand '" << leaf << "' has no row";
}

// The heart of the rule: each output of each subcommand, aimed at what the command reads (and a
// symlink and a hard link to it), at a folder, a FIFO and a device, is refused with exit 2 and
// one line, and leaves the target as it was, with no sibling written.
TEST_F(CliOutputPaths, NoOutputReplacesAnInputOrASpecialFile) {
  ASSERT_EQ(shards_.size(), 2u);
  const fs::path d = dir();
  fs::create_directories(d / "hostile");
  const fs::path folder = d / "hostile" / "folder";
  const fs::path fifo = d / "hostile" / "fifo";
  fs::create_directories(folder);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const bool dev_full = fs::is_character_file("/dev/full");
  for (const auto& row : rows()) {
    std::vector<fs::path> targets = row.reads;
    targets.push_back(signing_key()); // every command reads $MMAEMU_SIGNING_KEY's file
    const fs::path first = targets.front();
    const fs::path symlink = d / "hostile" / ("link-" + std::to_string(targets.size()));
    const fs::path hardlink = d / "hostile" / ("hard-" + std::to_string(targets.size()));
    fs::remove(symlink);
    fs::remove(hardlink);
    fs::create_symlink(first, symlink);
    fs::create_hard_link(first, hardlink);
    targets.push_back(symlink);
    targets.push_back(hardlink);
    targets.push_back(folder);
    targets.push_back(fifo);
    if (dev_full)
      targets.emplace_back("/dev/full");
    // Each target and its would-be siblings (<target>.json, <target>.sig, <stem>-2.json): no
    // sibling may take the output instead.
    std::map<fs::path, std::string> before;
    for (const auto& t : targets) {
      before[t] = state_of(t);
      for (const fs::path& sib : {fs::path(t.string() + ".json"), fs::path(t.string() + ".sig"),
                                  t.parent_path() / (t.stem().string() + "-2.json")})
        before[sib] = state_of(sib);
    }
    for (const auto& r : row.reads)
      before[r] = state_of(r);
    before[first] = state_of(first);
    for (const auto& t : targets) {
      const auto args = argv(row, t.string());
      SCOPED_TRACE(row.command + " " + row.option + " " + t.string());
      const CliResult r = run(args);
      EXPECT_EQ(r.status, 2) << r.out << r.err;
      EXPECT_EQ(lines(r.err), 1u) << r.err;
      EXPECT_TRUE(r.err.find(row.option) != std::string::npos ||
                  r.err.find(t.filename().string()) != std::string::npos)
          << "the line names neither the option nor the file: " << r.err;
      for (const auto& [p, s] : before)
        EXPECT_EQ(state_of(p), s) << p << " changed";
    }
    fs::remove(symlink);
    fs::remove(hardlink);
  }
  EXPECT_TRUE(fs::is_directory(folder));
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// The control: the same outputs aimed at a fresh name are written there, and only there.
TEST_F(CliOutputPaths, TheFileWrittenIsThePathGiven) {
  ASSERT_EQ(shards_.size(), 2u);
  const fs::path d = dir() / "fresh";
  fs::create_directories(d);
  // report merge --out: exactly the name given, also when that name exists (it is replaced,
  // never written beside as <stem>-2.json).
  for (int round = 0; round < 2; ++round) {
    const CliResult r = run({"report", "merge", shards_.at(0).string(), shards_.at(1).string(),
                             "--out", (d / "all.json").string()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(fs::is_regular_file(d / "all.json"));
    EXPECT_TRUE(fs::is_regular_file(d / "all.json.sig")); // signed: MMAEMU_SIGNING_KEY
    EXPECT_FALSE(fs::exists(d / "all-2.json"));
  }
  const CliResult v =
      run({"report", "verify", (d / "all.json").string(), "--keys", (dir() / "keys").string()});
  EXPECT_EQ(v.status, 0) << v.out << v.err;
  const CliResult j = run({"tier", "list", "--json", (d / "tiers.json").string()});
  EXPECT_EQ(j.status, 0) << j.err;
  EXPECT_TRUE(fs::is_regular_file(d / "tiers.json"));
  EXPECT_FALSE(fs::exists(d / "tiers.json.json"));
}

// --log-dir: a file or a FIFO is no log folder (exit 2, nothing created in its place), and
// report release --out must be a folder whose release.md is not a link to a log it read.
TEST_F(CliOutputPaths, LogFoldersAndReleaseFoldersAreCheckedToo) {
  ASSERT_EQ(shards_.size(), 2u);
  const fs::path d = dir() / "logdirs";
  fs::create_directories(d);
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  for (const fs::path& bad : {signing_key(), d / "fifo"}) {
    const std::string before = state_of(bad);
    const CliResult r = run({"tier", "run", "T1", "--log-dir", bad.string()});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--log-dir"), std::string::npos) << r.err;
    EXPECT_EQ(state_of(bad), before);
  }
  const std::string log_before = state_of(shards_.at(0));
  const std::vector<std::string> release = {"report",
                                            "release",
                                            "--date",
                                            shards_.at(0).parent_path().filename().string(),
                                            "--allow-other-commit",
                                            "--log-dir",
                                            (dir() / "shards").string()};
  auto with_out = [&](const fs::path& out) {
    auto a = release;
    a.push_back("--out");
    a.push_back(out.string());
    return run(a);
  };
  CliResult r = with_out(shards_.at(0));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  fs::create_directories(d / "rel");
  fs::create_symlink(shards_.at(0), d / "rel" / "release.md");
  r = with_out(d / "rel");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("release.md"), std::string::npos) << r.err;
  EXPECT_EQ(state_of(shards_.at(0)), log_before);
  EXPECT_TRUE(fs::is_symlink(d / "rel" / "release.md"));
}

} // namespace
