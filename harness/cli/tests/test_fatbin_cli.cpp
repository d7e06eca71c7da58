// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu fatbin check` on the committed kernels/bin (consistent with the embedded sources;
// stale against an edited copy; a corrupted fatbin and a garbage manifest named) and one real
// `fatbin build` of one module with the local nvcc (FatbinBuildNvcc: ctest label nvcc, skipped
// without nvcc >= 12.8). The pieces of `fatbin build` that need no nvcc are tested beside their
// sources, in kernels/tests/test_fatbin_build_pieces.cpp.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "mmaemu/kernels/fatbin_build.hpp"
#include "mmaemu/support/process.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using mmaemu::testing::slurp;
using mmaemu::testing::spit;
using mmaemu::testing::TempDir;
using testing::HasSubstr;
using testing::Not;
namespace mk = mmaemu::kernels;

namespace {

using CliRun = mmaemu::testing::CliResult;

CliRun run_cli(const std::vector<std::string>& args) {
  return mmaemu::testing::run_command(MMAEMU_BIN, {}, args);
}

const fs::path kSource = MMAEMU_SOURCE_DIR;
const fs::path kBin = kSource / "kernels" / "bin";

// A mutant's copy of the repository has no committed fatbins (mutants/: they would be stale
// against its edited kernel sources); these tests then have nothing to check.
#define SKIP_WITHOUT_COMMITTED_FATBINS()                                                           \
  do {                                                                                             \
    if (!fs::exists(kBin / "manifest.json"))                                                       \
      GTEST_SKIP() << kBin << " has no committed fatbins (a mutant's copy of the repository)";     \
  } while (0)
const fs::path kCuda = kSource / "kernels" / "cuda";

void flip_byte(const fs::path& p, std::size_t at) {
  std::string s = slurp(p);
  ASSERT_GT(s.size(), at);
  s[at] = static_cast<char>(s[at] ^ 0x01);
  spit(p, s);
}

TEST(FatbinCheckCli, CommittedFatbinsMatchTheEmbeddedSources) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  const CliRun r = run_cli({"fatbin", "check", "--dir", kBin.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("consistent"));
}

TEST(FatbinCheckCli, CommittedFatbinsMatchTheSourceTree) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  const CliRun r = run_cli(
      {"fatbin", "check", "--dir", kBin.string(), "--sources", kCuda.string(), "--json", "-"});
  EXPECT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("consistent"), true);
}

TEST(FatbinCheckCli, EditedSourceCopyIsStaleAndNamed) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  TempDir t("fatbin_src");
  fs::copy(kCuda, t.path() / "cuda", fs::copy_options::recursive);
  flip_byte(t.path() / "cuda" / "v1.cu", 40);
  const CliRun r =
      run_cli({"fatbin", "check", "--dir", kBin.string(), "--sources", (t / "cuda").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("v1.cu"));
  EXPECT_THAT(r.err, HasSubstr("stale"));
  EXPECT_THAT(r.err, Not(HasSubstr("h4.cu")));
}

TEST(FatbinCheckCli, CorruptedFatbinCopyIsNamed) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  TempDir t("fatbin_bin");
  fs::copy(kBin, t.path() / "bin", fs::copy_options::recursive);
  flip_byte(t.path() / "bin" / "v4.fatbin", 1000);
  const CliRun r = run_cli({"fatbin", "check", "--dir", (t / "bin").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("v4.fatbin"));
  EXPECT_THAT(r.err, Not(HasSubstr("v1.fatbin")));
}

TEST(FatbinCheckCli, MissingFatbinIsNamed) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  TempDir t("fatbin_bin");
  fs::copy(kBin, t.path() / "bin", fs::copy_options::recursive);
  fs::remove(t.path() / "bin" / "h1.fatbin");
  const CliRun r = run_cli({"fatbin", "check", "--dir", (t / "bin").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("h1.fatbin"));
}

TEST(FatbinCheckCli, GarbageManifestExits2) {
  TempDir t("fatbin_bad");
  spit(t / "manifest.json", "{\"format\": \"mmaemu-fatbin/1\", \"modules\": [\x01");
  const CliRun r = run_cli({"fatbin", "check", "--dir", t.path().string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("manifest"));
}

TEST(FatbinCheckCli, MissingManifestExits2) {
  TempDir t("fatbin_none");
  const CliRun r = run_cli({"fatbin", "check", "--dir", t.path().string(), "--json", "-"});
  EXPECT_EQ(r.status, 2) << r.err;
}

TEST(FatbinBuildCli, UnknownModuleExits2BeforeAnyCompile) {
  TempDir t("fatbin_out");
  const CliRun r = run_cli({"fatbin", "build", "--modules", "v1,v7", "--out", (t / "o").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--modules: 'v7'"));
  EXPECT_FALSE(fs::exists(t / "o"));
}

TEST(FatbinBuildCli, NvccThatIsNotAFileExits2) {
  TempDir t("fatbin_out");
  const CliRun r =
      run_cli({"fatbin", "build", "--nvcc", (t / "no-nvcc").string(), "--out", (t / "o").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--nvcc"));
}

TEST(FatbinBuildCli, NvccOlderThan12_8IsRefused) {
  TempDir t("fatbin_old");
  const fs::path fake = t / "nvcc";
  spit(fake, "#!/bin/sh\necho 'Cuda compilation tools, release 12.0, V12.0.140'\n");
  fs::permissions(fake, fs::perms::owner_all);
  const CliRun r = run_cli(
      {"fatbin", "build", "--nvcc", fake.string(), "--out", (t / "o").string(), "--modules", "v1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("12.0.140"));
  EXPECT_THAT(r.err, HasSubstr("12.8"));
  EXPECT_FALSE(fs::exists(t / "o"));
}

// nvcc of at least 12.8 as `fatbin build` would find it, or nothing.
std::optional<fs::path> usable_nvcc() {
  const auto nvcc = mk::find_nvcc("");
  if (!nvcc)
    return std::nullopt;
  const auto r = mmaemu::support::run_process({nvcc->string(), "--version"},
                                              mmaemu::support::ProcessOptions::with_timeout(60));
  const auto v = mk::parse_nvcc_version(r.output);
  if (r.exit_code != 0 || !v || !v->at_least(mk::kMinNvccMajor, mk::kMinNvccMinor))
    return std::nullopt;
  return nvcc;
}

TEST(FatbinBuildNvcc, OneModuleBuildsAndAFailedRebuildKeepsIt) {
  SKIP_WITHOUT_COMMITTED_FATBINS();
  const auto nvcc = usable_nvcc();
  if (!nvcc)
    GTEST_SKIP() << "no nvcc >= 12.8 ($NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin)";
  TempDir t("fatbin_nvcc");
  const fs::path out = t / "out";
  const CliRun r = run_cli({"fatbin", "build", "--release", "--modules", "v1", "--out",
                            out.string(), "--nvcc", nvcc->string(), "--sources", kCuda.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("fatbin: v1: nvcc v1.cu"));
  const auto manifest = nlohmann::json::parse(slurp(out / "manifest.json"));
  ASSERT_EQ(manifest.at("modules").size(), 1u);
  EXPECT_EQ(manifest["modules"][0]["module"], "v1");
  EXPECT_EQ(manifest["modules"][0]["sass"], nlohmann::json({75, 80, 86, 89, 90, 100, 120}));
  EXPECT_EQ(manifest["modules"][0]["ptx"], 75);
  const auto report = nlohmann::json::parse(slurp(out / "build_report.json"));
  EXPECT_EQ(report.at("ok"), true);
  EXPECT_EQ(report["modules"]["v1"]["ptxas"].size(), 7u);
  EXPECT_EQ(report["modules"]["v1"]["forbidden_ptx"].size(), 7u); // 7 archs, compute_75 shared
  EXPECT_THAT(slurp(out / "cuobjdump.txt"), HasSubstr("v1.7.sm_120.cubin"));
  // The same sources with the same flags give the committed bytes when nvcc is the one the
  // committed fatbins were built with.
  const auto committed = nlohmann::json::parse(slurp(kBin / "manifest.json"));
  if (committed.at("nvcc") == manifest.at("nvcc")) {
    for (const auto& m : committed["modules"]) {
      if (m["module"] == "v1") {
        EXPECT_EQ(m["sha256"], manifest["modules"][0]["sha256"]);
      }
    }
  }

  // A broken source: nvcc fails, exit 1, the old fatbin stays, no temporary folder is left.
  const std::string before = slurp(out / "v1.fatbin");
  fs::copy(kCuda, t.path() / "broken", fs::copy_options::recursive);
  spit(t.path() / "broken" / "v1.cu", slurp(kCuda / "v1.cu") + "\nthis is not C++;\n");
  const CliRun bad =
      run_cli({"fatbin", "build", "--release", "--modules", "v1", "--out", out.string(), "--nvcc",
               nvcc->string(), "--sources", (t / "broken").string()});
  EXPECT_EQ(bad.status, 1) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("v1: nvcc failed"));
  EXPECT_EQ(slurp(out / "v1.fatbin"), before);
  for (const auto& e : fs::directory_iterator(t.path()))
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr("fatbin-build"))) << e.path();
}

} // namespace
