// SPDX-License-Identifier: BSD-2-Clause
// No tier file makes mmaemu read outside its data (docs/testing.md, "Tier files" and "Hostile
// input"): run.result, run.catalogue, run.consumer and needs.files stay inside the tier's tree
// or its output folder (no absolute path, no '..', no symlink out); a --tiers folder outside the
// source tree needs --trust-tiers (tier_paths.cpp, tier_spec.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "tier_test_support.hpp"

namespace fs = std::filesystem;
using mmaemu::harness::TierPathRoot;

namespace {

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::string tier_with_run(const std::string& run, const std::string& needs = "{}") {
  return R"({"schema": "mmaemu-tier/1", "name": "T9", "title": "test", "purpose": "p",
             "when": "never", "budget": {"seconds": 10}, "run": )" +
         run + R"(, "needs": )" + needs + "}";
}

std::string parse_message(const std::string& text) {
  try {
    (void)mmaemu::harness::parse_tier_text(text, "tiers/T9.json");
  } catch (const mmaemu::harness::TierFileError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(TierPaths, PathFieldsAreRelativeWithoutDotDotOrStrayPlaceholders) {
  struct Case {
    std::string value;
    TierPathRoot root;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"mutants/catalogue.json", TierPathRoot::tree, true},
      {"examples/consumer", TierPathRoot::tree, true},
      {"./a/b", TierPathRoot::tree, true},
      {"{out}/bench.json", TierPathRoot::out_or_tree, true},
      {"bench.json", TierPathRoot::out_or_tree, true},
      {"a..b/c", TierPathRoot::tree, true}, // ".." only as a whole component
      {"", TierPathRoot::tree, false},
      {"/etc/passwd", TierPathRoot::tree, false},
      {"/etc/passwd", TierPathRoot::out_or_tree, false},
      {"..", TierPathRoot::tree, false},
      {"../etc/passwd", TierPathRoot::tree, false},
      {"a/../../etc/passwd", TierPathRoot::tree, false},
      {"a/..", TierPathRoot::tree, false},
      {"{out}/../../etc/passwd", TierPathRoot::out_or_tree, false},
      {"{out}/bench.json", TierPathRoot::tree, false},
      {"a/{out}/b", TierPathRoot::out_or_tree, false},
      {"{out}", TierPathRoot::out_or_tree, false},
      {"{outside}/x", TierPathRoot::out_or_tree, false},
      {"{mmaemu}", TierPathRoot::tree, false},
      {"{out}//etc/passwd", TierPathRoot::out_or_tree, false}, // out / "/etc/passwd" is /etc
      {"a//b", TierPathRoot::tree, false},
      {"a/", TierPathRoot::tree, false},
      {"a\nb", TierPathRoot::tree, false},
      {"a\x1b[2Jb", TierPathRoot::tree, false},
      {std::string(5000, 'a'), TierPathRoot::tree, false},
  };
  for (const auto& c : cases) {
    const auto why = mmaemu::harness::tier_path_problem(c.value, c.root);
    EXPECT_EQ(!why.has_value(), c.ok) << "'" << c.value << "': " << why.value_or("accepted");
  }
}

TEST(TierPaths, TheParserRefusesPathFieldsThatLeaveTheTree) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {tier_with_run(R"({"kind": "command", "argv": ["true"], "result": "/etc/passwd"})"),
       "key 'run.result'"},
      {tier_with_run(R"({"kind": "command", "argv": ["true"], "result": "{out}/../../x"})"),
       "key 'run.result'"},
      {tier_with_run(R"({"kind": "mutants", "catalogue": "/etc/passwd"})"), "key 'run.catalogue'"},
      {tier_with_run(R"({"kind": "mutants", "catalogue": "../../etc/passwd"})"),
       "key 'run.catalogue'"},
      {tier_with_run(R"({"kind": "package", "consumer": "/tmp"})"), "key 'run.consumer'"},
      {tier_with_run(R"({"kind": "replay"})", R"({"files": ["docs/../../x"]})"),
       "key 'needs.files[0]'"},
  };
  for (const auto& [text, key] : bad) {
    const std::string m = parse_message(text);
    EXPECT_NE(m.find(key), std::string::npos) << m;
    EXPECT_EQ(lines(m), 0u) << m;
  }
  EXPECT_EQ(parse_message(tier_with_run(
                R"({"kind": "command", "argv": ["true"], "result": "{out}/r.json"})")),
            "(accepted)");
}

TEST(TierPaths, ASymlinkOutOfTheFolderIsRefusedWhenResolved) {
  tiertest::TempDir dir;
  fs::create_directories(dir / "tree");
  fs::create_directories(dir / "out");
  fs::create_symlink("/etc", dir / "tree" / "etc");
  fs::create_symlink("/etc/passwd", dir / "out" / "r.json");
  tiertest::spit(dir / "tree" / "ok.json", "{}");
  EXPECT_THROW(mmaemu::harness::resolve_tier_path("etc/passwd", dir / "tree", dir / "out"),
               std::invalid_argument);
  EXPECT_THROW(mmaemu::harness::resolve_tier_path("{out}/r.json", dir / "tree", dir / "out"),
               std::invalid_argument);
  EXPECT_EQ(mmaemu::harness::resolve_tier_path("ok.json", dir / "tree", dir / "out"),
            dir / "tree" / "ok.json");
  EXPECT_EQ(mmaemu::harness::resolve_tier_path("{out}/new.json", dir / "tree", dir / "out"),
            dir / "out" / "new.json");
}

// A tier folder outside the source tree is code mmaemu would run: only with --trust-tiers.
// And a command tier whose result file is a symlink its program planted to /etc/passwd ends in
// ERROR without the file's text in the output.
TEST(TierPaths, ForeignTierFoldersNeedTrustAndResultsCannotBeSymlinkedOut) {
  tiertest::TempDir dir;
  fs::create_directories(dir / "tiers");
  tiertest::spit(dir / "tiers" / "T9.json", tier_with_run(R"({"kind": "command",
                                   "argv": ["/bin/ln", "-s", "/etc/passwd", "{out}/r.json"],
                                   "result": "{out}/r.json", "timeout_s": 60})"));
  const std::string tiers = (dir / "tiers").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"tier", "list", "--tiers", tiers},
        std::vector<std::string>{"tier", "run", "T9", "--no-log", "--tiers", tiers}}) {
    const auto r = tiertest::run_mmaemu(args);
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--trust-tiers"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(tiertest::run_mmaemu({"tier", "list", "--tiers", tiers, "--trust-tiers"}).status, 0);
  // The committed folder needs no flag.
  EXPECT_EQ(tiertest::run_mmaemu({"tier", "list", "--tiers", tiertest::committed_tiers().string()})
                .status,
            0);
  const auto r =
      tiertest::run_mmaemu({"tier", "run", "T9", "--no-log", "--tiers", tiers, "--trust-tiers",
                            "--out", (dir / "out").string(), "--json", (dir / "r.json").string()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("leads outside"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("root:"), std::string::npos) << r.out;
  EXPECT_EQ(tiertest::slurp(dir / "r.json").find("root:"), std::string::npos);
}

} // namespace
