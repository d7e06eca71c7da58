// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu selftest`, `mmaemu info` and `mmaemu gemm --backend cuda:...` as separate processes,
// without a CUDA driver and on the fake libcuda and NVRTC of kernels/tests (the kernels run
// through the host shim): exit codes (0 every kernel passed, 1 one failed, 2 usage, 4 nothing
// could be tested), the selftest JSON, the backends that info lists, and the same result bits
// on a kernel as on the reference.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "fake_cuda_env.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::testing::TempDir;
using testing::HasSubstr;

using RunResult = mmaemu::testing::CliResult;
using Env = mmaemu::testing::CliEnv;

// Runs the built mmaemu with `args` in an environment without any of mmaemu's variables except
// those of `env` (tests/support/cli_run.hpp).
RunResult run_cli(const Env& env, const std::vector<std::string>& args) {
  return mmaemu::testing::run_command(MMAEMU_BIN, env, args);
}

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line))
    n += line.rfind(prefix, 0) == 0;
  return n;
}

std::string sha256_line(const std::string& out) {
  const auto at = out.find("sha256");
  return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
}

// A folder of its own for a test: the cache, an empty fatbin folder (the kernels are then
// compiled by the fake NVRTC), outputs.
class SelftestCli : public ::testing::Test {
protected:
  // fake_cuda_env.hpp: no driver, or the fake driver and NVRTC with no fatbins.
  Env no_driver() const { return mmaemu::testing::no_driver_env(dir_.path()); }
  Env fake() const { return mmaemu::testing::fake_cuda_env(dir_.path()); }
  static Env with(Env env, const std::string& k, const std::string& v) {
    return mmaemu::testing::with_var(std::move(env), k, v);
  }
  TempDir dir_{"selftest_cli"};
};

TEST_F(SelftestCli, WithoutADriverNothingIsTestedExitFour) {
  const auto r = run_cli(no_driver(), {"selftest"});
  EXPECT_EQ(r.status, 4) << r.all();
  EXPECT_EQ(count_lines_starting(r.out, "UNSUPPORTED"), 6u) << r.out;
  EXPECT_THAT(r.out, HasSubstr("no CUDA driver"));
  EXPECT_THAT(r.out, HasSubstr("0 passed, 0 failed, 6 unsupported"));
  const auto disabled = run_cli(with(fake(), "MMAEMU_DISABLE_CUDA", "1"), {"selftest"});
  EXPECT_EQ(disabled.status, 4) << disabled.all();
  EXPECT_THAT(disabled.out, HasSubstr("MMAEMU_DISABLE_CUDA=1"));
}

TEST_F(SelftestCli, FakeDriverPassesEveryKernelAndWritesJson) {
  const fs::path json = dir_ / "selftest.json";
  const auto r = run_cli(fake(), {"selftest", "--json", json.string()});
  EXPECT_EQ(r.status, 0) << r.all();
  // Every kernel with code for the fake sm_90 passes; tc3 (SASS for 8.0, 8.6, 8.9 only) is a
  // by-design skip: UNSUPPORTED.
  EXPECT_EQ(count_lines_starting(r.out, "PASS"), 5u) << r.out;
  EXPECT_THAT(r.out, HasSubstr("5 passed, 0 failed, 1 unsupported"));
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(mmaemu::testing::slurp(json)));
  EXPECT_EQ(j["schema"], "mmaemu-selftest/1");
  EXPECT_EQ(j["passed"], 5);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["unavailable_reason"], "");
  ASSERT_EQ(j["kernels"].size(), 6u);
  for (const auto& k : j["kernels"]) {
    if (k["kernel"] == "tc3") {
      EXPECT_EQ(k["verdict"], "UNSUPPORTED") << k.dump();
      continue;
    }
    EXPECT_EQ(k["verdict"], "PASS") << k.dump();
    EXPECT_EQ(k["source"], "nvrtc") << k.dump();
    EXPECT_EQ(k["cc"], 90) << k.dump();
    ASSERT_EQ(k["gates"].size(), k["kernel"] == "v9" ? 2u : 1u) << k.dump();
    EXPECT_EQ(k["gates"][0]["gate"], "smoke");
    EXPECT_EQ(k["gates"][0]["cached"], false);
  }
  // One kernel, its verdict now from the cache.
  const auto again = run_cli(fake(), {"selftest", "--kernels", "v1"});
  EXPECT_EQ(again.status, 0) << again.all();
  EXPECT_EQ(count_lines_starting(again.out, "PASS"), 1u) << again.out;
  EXPECT_THAT(again.out, HasSubstr("(cached)"));
}

TEST_F(SelftestCli, WrongResultsFailWhenTheGatesRunAgain) {
  const auto r = run_cli(fake(), {"selftest", "--kernels", "v1,h1"});
  ASSERT_EQ(r.status, 0) << r.all();
  const Env wrong = with(fake(), "MMAEMU_FAKE_CUDA_WRONG", "1");
  // The cached verdicts stand until --force.
  const auto cached = run_cli(wrong, {"selftest", "--kernels", "v1,h1"});
  EXPECT_EQ(cached.status, 0) << cached.all();
  const auto forced = run_cli(wrong, {"selftest", "--kernels", "v1,h1", "--force"});
  EXPECT_EQ(forced.status, 1) << forced.all();
  EXPECT_EQ(count_lines_starting(forced.out, "FAIL"), 2u) << forced.out;
  EXPECT_THAT(forced.out, HasSubstr("gate smoke failed"));
  EXPECT_THAT(forced.out, HasSubstr("0 passed, 2 failed"));
}

TEST_F(SelftestCli, UnknownKernelIsAUsageError) {
  for (const Env& env : {fake(), no_driver()}) {
    const auto r = run_cli(env, {"selftest", "--kernels", "zz"});
    EXPECT_EQ(r.status, 2) << r.all();
    EXPECT_THAT(r.err, HasSubstr("zz"));
  }
  EXPECT_EQ(run_cli(no_driver(), {"selftest", "--device", "-1"}).status, 2);
}

TEST_F(SelftestCli, GemmOnAKernelWithoutADriverIsUnavailable) {
  const auto r =
      run_cli(no_driver(), {"gemm", "--M", "16", "--N", "16", "--K", "32", "--backend", "cuda:v4"});
  EXPECT_EQ(r.status, 4) << r.all(); // unavailable, not a bit mismatch
  EXPECT_THAT(r.err, HasSubstr("BackendUnavailableError"));
  EXPECT_THAT(r.err, HasSubstr("cuda:v4"));
}

TEST_F(SelftestCli, GemmOnAKernelHasTheReferenceSha256) {
  struct Case {
    const char* backend;
    const char* profile;
  };
  for (const Case c : {Case{"cuda:v4", "ada"}, Case{"cuda:h1", "hopper"}}) {
    std::vector<std::string> args = {"gemm",      "--M",     "16",       "--N", "16",
                                     "--K",       "32",      "--splitk", "1",   "--fast",
                                     "--profile", c.profile, "--seed",   "5",   "--backend"};
    auto on_kernel = args;
    on_kernel.push_back(c.backend);
    args.push_back("reference");
    const auto ref = run_cli(fake(), args);
    const auto kern = run_cli(fake(), on_kernel);
    ASSERT_EQ(ref.status, 0) << ref.all();
    ASSERT_EQ(kern.status, 0) << kern.all();
    EXPECT_NE(sha256_line(ref.out), "");
    EXPECT_EQ(sha256_line(kern.out), sha256_line(ref.out)) << c.backend;
    // The kernel was compiled by the fake NVRTC (empty fatbin folder): one warning says so.
    EXPECT_THAT(kern.err, HasSubstr("compiled with NVRTC")) << kern.all();
  }
}

// Without a driver every backend is listed, and the reason is stated once (not on every
// kernel's line).
TEST_F(SelftestCli, InfoListsEveryBackendWithoutADriverAndSaysWhyOnce) {
  const fs::path json = dir_ / "info.json";
  const auto r = run_cli(no_driver(), {"info", "--json", json.string()});
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("reference      available"));
  EXPECT_THAT(r.out, HasSubstr("cuda           unavailable: no CUDA driver"));
  std::size_t said = 0;
  for (std::size_t at = 0; (at = r.out.find("no CUDA driver", at)) != std::string::npos; ++at)
    ++said;
  EXPECT_EQ(said, 1u) << r.out;
  for (const char* k : {"cuda:v4", "cuda:v1", "cuda:h4", "cuda:h1"})
    EXPECT_THAT(r.out, HasSubstr(std::string(k) + std::string(14 - std::string(k).size(), ' ') +
                                 " unavailable (no CUDA, above)"));
  const auto j = nlohmann::json::parse(mmaemu::testing::slurp(json));
  ASSERT_EQ(j["backends"].size(), 7u) << j["backends"].dump();
  EXPECT_EQ(j["backends"][0]["name"], "reference");
  EXPECT_EQ(j["backends"][0]["available"], true);
  for (std::size_t i = 1; i < 7; ++i) {
    const auto& b = j["backends"][i];
    EXPECT_EQ(b["available"], false) << b.dump();
    EXPECT_EQ(b["validated_here"], false) << b.dump();
    EXPECT_EQ(b["source"], "") << b.dump();
    EXPECT_THAT(b["reason"].get<std::string>(), HasSubstr("no CUDA driver"));
  }
  EXPECT_FALSE(j.contains("device"));
  const auto dev = run_cli(with(fake(), "MMAEMU_DISABLE_CUDA", "1"), {"info", "--device", "1"});
  ASSERT_EQ(dev.status, 0) << dev.all();
  EXPECT_THAT(dev.out, HasSubstr("device 1: unavailable"));
  EXPECT_THAT(dev.out, HasSubstr("cuda           unavailable: CUDA is disabled"));
  EXPECT_THAT(dev.out, HasSubstr("cuda:h1        unavailable (no CUDA, above)"));
}

TEST_F(SelftestCli, InfoOnTheFakeDeviceGivesEachKernelsStatus) {
  const fs::path json = dir_ / "info.json";
  const auto r = run_cli(with(fake(), "MMAEMU_FAKE_CUDA_CC", "75"),
                         {"info", "--device", "0", "--json", json.string()});
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("device 0: mmaemu fake GPU"));
  EXPECT_THAT(r.out, HasSubstr("cuda:v1        available (nvrtc, not validated here)"));
  EXPECT_THAT(r.out, HasSubstr("cuda:v4        unavailable: cuda:v4 needs compute capability 8.0"));
  const auto j = nlohmann::json::parse(mmaemu::testing::slurp(json));
  EXPECT_EQ(j["device"]["available"], true);
  EXPECT_EQ(j["device"]["cc"], 75);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : j["backends"])
    by_name[b["name"].get<std::string>()] = b;
  ASSERT_EQ(by_name.size(), 7u);
  for (const char* k : {"cuda:v1", "cuda:h1"}) {
    EXPECT_EQ(by_name[k]["available"], true) << by_name[k].dump();
    EXPECT_EQ(by_name[k]["source"], "nvrtc");
    EXPECT_EQ(by_name[k]["reason"], "");
  }
  for (const char* k : {"cuda:v4", "cuda:v9", "cuda:tc3", "cuda:h4"}) {
    EXPECT_EQ(by_name[k]["available"], false) << by_name[k].dump();
    EXPECT_THAT(by_name[k]["reason"].get<std::string>(), HasSubstr("compute capability"));
  }
  // A device that does not exist.
  const auto none = run_cli(fake(), {"info", "--device", "4"});
  ASSERT_EQ(none.status, 0) << none.all();
  EXPECT_THAT(none.out, HasSubstr("device 4: unavailable (device 4 does not exist (1 visible))"));
}

} // namespace
