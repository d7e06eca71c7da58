// SPDX-License-Identifier: BSD-2-Clause
// The mmaemu-fatbin/1 manifest: round trip, one clear error for any damaged or hostile file,
// where fatbins are looked for, which architectures run where, and check_fatbins' problems.

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "loader_test_env.hpp"
#include "mmaemu/kernels/fatbin_manifest.hpp"
#include "mmaemu/kernels/kernel_sources.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::kernels::FatbinEntry;
using mmaemu::kernels::FatbinManifest;
using mmaemu::kernels::ManifestError;
using mmaemu::testing::EnvGuard;
using mmaemu::testing::spit;
using mmaemu::testing::TempDir;

const std::string kHex(64, 'a');

FatbinManifest sample() {
  FatbinManifest m;
  m.source_sha256 = kHex;
  m.nvcc = "12.8.61";
  m.flags = {"-O3", "--fmad=false"};
  m.modules.push_back({"v1", "v1.fatbin", std::string(64, 'b'), {75, 80, 86}, 75});
  m.modules.push_back({"v9", "v9.fatbin", std::string(64, 'c'), {80, 89}, std::nullopt});
  return m;
}

TEST(FatbinManifest, RoundTripsThroughAFile) {
  TempDir dir("manifest");
  const FatbinManifest m = sample();
  mmaemu::kernels::write_manifest(dir / "manifest.json", m);
  const FatbinManifest r = mmaemu::kernels::read_manifest(dir / "manifest.json");
  EXPECT_EQ(r.format, "mmaemu-fatbin/1");
  EXPECT_EQ(r.source_sha256, kHex);
  EXPECT_EQ(r.nvcc, "12.8.61");
  EXPECT_EQ(r.flags, m.flags);
  ASSERT_EQ(r.modules.size(), 2u);
  EXPECT_EQ(r.modules[0].sass, (std::vector<int>{75, 80, 86}));
  EXPECT_EQ(r.modules[0].ptx, 75);
  EXPECT_FALSE(r.modules[1].ptx.has_value());
  ASSERT_NE(r.find("v9"), nullptr);
  EXPECT_EQ(r.find("v9")->file, "v9.fatbin");
  EXPECT_EQ(r.find("v4"), nullptr);
  EXPECT_EQ(mmaemu::kernels::manifest_to_json(r), mmaemu::testing::slurp(dir / "manifest.json"));
}

TEST(FatbinManifest, DamagedOrHostileTextGivesOneManifestError) {
  const std::string good = mmaemu::kernels::manifest_to_json(sample());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "not valid JSON"},
      {"[]", "not a JSON object"},
      {good.substr(0, good.size() / 2), "not valid JSON"},
      {std::string(100000, '['), "nested deeper"},
      {std::string("{\"format\": \"\xff\xfe\"}"), "not valid JSON"},
      {replaced("mmaemu-fatbin/1", "mmaemu-fatbin/2"), "format"},
      {replaced("\"format\"", "\"formats\""), "key 'format': missing"},
      {replaced(kHex, "AAAA"), "source_sha256"},
      {replaced(std::string(64, 'b'), std::string(64, 'B')), "sha256"},
      {replaced("\"v1.fatbin\"", "\"../v1.fatbin\""), "plain file name"},
      {replaced("\"v1.fatbin\"", "\"..\""), "plain file name"},
      {replaced("\"v1.fatbin\"", "\"/etc/passwd\""), "plain file name"},
      // Control characters in a file name (a newline, an escape, a tab) would reach the
      // terminal and the logs that name the file.
      {replaced("\"v1.fatbin\"", "\"v1\\n.fatbin\""), "plain file name"},
      {replaced("\"v1.fatbin\"", "\"v1\\u001b[31m.fatbin\""), "plain file name"},
      {replaced("\"v1.fatbin\"", "\"v1\\t.fatbin\""), "plain file name"},
      {replaced("\"v1.fatbin\"", "\"v1\\u001f.fatbin\""), "plain file name"},
      {replaced("\"v1.fatbin\"", "17"), "key 'modules[0].file': expected a string, got integer 17"},
      {replaced("\"v9\"", "\"v1\""), "listed twice"},
      {replaced("\"v9\"", "\"v 9\\n\""), "plain word"},
      {replaced("75,", "7500000000000,"),
       "key 'modules[0].sass[0]': expected an integer from 30 to 199, got integer 7500000000000"},
      {replaced("75,", "\"75\","), "key 'modules[0].sass[0]': expected an integer, got string"},
      {replaced("75,", "75.0,"), "key 'modules[0].sass[0]': expected an integer, got number 75.0"},
      {replaced("\"modules\"", "\"module_list\""), "key 'modules': missing"},
      // Unknown keys, at the top and in a module, are refused, named with their path (escaped).
      {replaced("\"nvcc\"", "\"nvcc_path\": \"/x\", \"nvcc\""),
       "key 'nvcc_path': not a key of mmaemu-fatbin/1"},
      {replaced("\"ptx\": 75", "\"ptx\": 75, \"PTX\": 80"),
       "key 'modules[0].PTX': not a key of a mmaemu-fatbin/1 module"},
      {replaced("\"sass\"", "\"extra\\u001b\": 1, \"sass\""),
       "key 'modules[0].extra\\x1b': not a key"},
      // A key given twice would have its first value dropped in silence.
      {replaced("\"nvcc\"", "\"nvcc\": \"x\", \"nvcc\""), "key 'nvcc': appears twice"},
  };
  for (const auto& [text, expect] : cases) {
    try {
      mmaemu::kernels::parse_manifest(text, "test.json");
      ADD_FAILURE() << "accepted: " << text.substr(0, 80);
    } catch (const ManifestError& e) {
      const std::string what = e.what();
      // "test.json: ..." or, for a syntax error, "test.json:<line>:<column>: ...".
      EXPECT_EQ(what.rfind("test.json:", 0), 0u) << what;
      EXPECT_NE(what.find(expect), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(FatbinManifest, UnreadableFilesGiveAManifestErrorNamingThePath) {
  TempDir dir("manifest-bad");
  EXPECT_THROW(mmaemu::kernels::read_manifest(dir / "missing.json"), ManifestError);
  fs::create_directory(dir / "folder.json");
  EXPECT_THROW(mmaemu::kernels::read_manifest(dir / "folder.json"), ManifestError);
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  EXPECT_THROW(mmaemu::kernels::read_manifest(dir / "fifo.json"), ManifestError);
  spit(dir / "big.json", std::string((1u << 20) + 1, ' '));
  try {
    mmaemu::kernels::read_manifest(dir / "big.json");
    FAIL() << "accepted an oversized manifest";
  } catch (const ManifestError& e) {
    EXPECT_NE(std::string(e.what()).find("big.json"), std::string::npos) << e.what();
  }
}

TEST(FatbinManifest, WriteRefusesAnInvalidManifest) {
  TempDir dir("manifest-w");
  FatbinManifest m = sample();
  m.modules[0].file = "sub/v1.fatbin";
  EXPECT_THROW(mmaemu::kernels::write_manifest(dir / "manifest.json", m), ManifestError);
  EXPECT_FALSE(fs::exists(dir / "manifest.json"));
}

TEST(FatbinManifest, SassRunsOnTheSameMajorWithAtLeastItsMinor) {
  using mmaemu::kernels::sass_runs_on;
  EXPECT_TRUE(sass_runs_on(86, 86));
  EXPECT_TRUE(sass_runs_on(86, 89));
  EXPECT_FALSE(sass_runs_on(86, 80));
  EXPECT_FALSE(sass_runs_on(86, 90));
  EXPECT_TRUE(sass_runs_on(80, 80));
  EXPECT_TRUE(sass_runs_on(80, 89));
  EXPECT_FALSE(sass_runs_on(80, 90));
  EXPECT_FALSE(sass_runs_on(75, 80));
  EXPECT_TRUE(sass_runs_on(120, 121));
  EXPECT_FALSE(sass_runs_on(100, 120));
  using mmaemu::kernels::ptx_runs_on;
  EXPECT_TRUE(ptx_runs_on(80, 80));
  EXPECT_TRUE(ptx_runs_on(80, 120));
  EXPECT_FALSE(ptx_runs_on(80, 75));
  const FatbinEntry sass_only{"v9", "v9.fatbin", kHex, {80, 86, 89}, std::nullopt};
  EXPECT_TRUE(mmaemu::kernels::can_run(sass_only, 87));
  EXPECT_FALSE(mmaemu::kernels::can_run(sass_only, 90));
  const FatbinEntry with_ptx{"v4", "v4.fatbin", kHex, {80, 86}, 80};
  EXPECT_TRUE(mmaemu::kernels::can_run(with_ptx, 90));
  EXPECT_FALSE(mmaemu::kernels::can_run(with_ptx, 75));
}

TEST(FatbinManifest, FatbinDirIsTheEnvironmentsThenAnExistingCandidate) {
  EnvGuard env;
  env.set("MMAEMU_FATBIN_DIR", "/nonexistent/fatbins");
  EXPECT_EQ(mmaemu::kernels::fatbin_dir(), fs::path("/nonexistent/fatbins"));
  env.unset("MMAEMU_FATBIN_DIR");
  const fs::path d = mmaemu::kernels::fatbin_dir();
  EXPECT_TRUE(d.string().ends_with("kernels/bin")) << d;
}

// Architectures are compute capabilities times ten: 30 (sm_30) to 199 are read, nothing
// else; a manifest that names others is refused when read and when written.
TEST(FatbinManifest, ArchitecturesFrom30To199AreTheRange) {
  for (int a : {30, 75, 199}) {
    FatbinManifest m = sample();
    m.modules[0].sass = {a};
    m.modules[0].ptx = a;
    const std::string text = mmaemu::kernels::manifest_to_json(m);
    EXPECT_NO_THROW(mmaemu::kernels::parse_manifest(text, "t.json")) << a;
  }
  for (int a : {0, 29, 200, 750}) {
    FatbinManifest m = sample();
    m.modules[0].sass = {75};
    m.modules[0].ptx = 75;
    std::string text = mmaemu::kernels::manifest_to_json(m);
    const auto at = text.find("75");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 2, std::to_string(a));
    EXPECT_THROW(mmaemu::kernels::parse_manifest(text, "t.json"), ManifestError) << a;
    m.modules[0].sass = {a};
    TempDir dir("fatbin-arch");
    EXPECT_THROW(mmaemu::kernels::write_manifest(dir / "manifest.json", m), ManifestError) << a;
  }
}

// A module must carry code: no SASS and no PTX is refused when written and when read.
TEST(FatbinManifest, AModuleWithNeitherSassNorPtxIsRefused) {
  FatbinManifest m = sample();
  m.modules[1].sass.clear();
  m.modules[1].ptx = std::nullopt;
  TempDir dir("fatbin-empty");
  try {
    mmaemu::kernels::write_manifest(dir / "manifest.json", m);
    ADD_FAILURE() << "written";
  } catch (const ManifestError& e) {
    EXPECT_NE(std::string(e.what()).find("neither SASS nor PTX"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mmaemu::kernels::parse_manifest(mmaemu::kernels::manifest_to_json(m), "t.json"),
               ManifestError);
}

// check_fatbins compares each entry's PTX architecture with its KernelSpec's: another one, or
// none where the spec has one, is a problem naming the module.
TEST(FatbinManifest, CheckFatbinsNamesAPtxArchitectureThatDiffersOrIsMissing) {
  for (bool missing : {false, true}) {
    TempDir dir("fatbins-ptx");
    FatbinManifest m = mmaemu::testing::write_fatbins(dir.path());
    const auto it = std::find_if(m.modules.begin(), m.modules.end(),
                                 [](const FatbinEntry& e) { return e.ptx.has_value(); });
    ASSERT_NE(it, m.modules.end()) << "no kernel spec with PTX";
    const std::string module = it->module;
    if (missing)
      it->ptx = std::nullopt;
    else
      it->ptx = *it->ptx == 199 ? 198 : *it->ptx + 1;
    mmaemu::kernels::write_manifest(dir / "manifest.json", m);
    const auto problems = mmaemu::kernels::check_fatbins(dir.path());
    ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
    EXPECT_NE(problems[0].find(module), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("differ from its KernelSpec"), std::string::npos) << problems[0];
  }
}

TEST(FatbinManifest, CheckFatbinsIsEmptyForAGoodBuild) {
  TempDir dir("fatbins-ok");
  mmaemu::testing::write_fatbins(dir.path());
  EXPECT_EQ(mmaemu::kernels::check_fatbins(dir.path()), std::vector<std::string>{});
}

TEST(FatbinManifest, CheckFatbinsNamesEveryProblem) {
  TempDir dir("fatbins-bad");
  FatbinManifest m = mmaemu::testing::write_fatbins(dir.path());
  m.source_sha256 = std::string(64, '0');
  m.modules.erase(m.modules.begin()); // the first spec's module has no entry
  m.modules[0].sass.pop_back();       // architectures differ from the spec
  fs::remove(dir / m.modules[1].file);
  spit(dir / m.modules[2].file, "tampered");
  mmaemu::kernels::write_manifest(dir / "manifest.json", m);
  const auto problems = mmaemu::kernels::check_fatbins(dir.path());
  auto has = [&](const std::string& what) {
    return std::any_of(problems.begin(), problems.end(),
                       [&](const std::string& p) { return p.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(has("stale")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("has no manifest entry")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("differ from its KernelSpec")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has(m.modules[1].file)) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("the manifest says")) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems.size(), 5u) << ::testing::PrintToString(problems);

  TempDir empty("fatbins-none");
  const auto none = mmaemu::kernels::check_fatbins(empty.path());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].find("manifest.json"), std::string::npos) << none[0];
}

} // namespace
