// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu recordings show` lists every set of a recording, of every kind: mma, gemm and
// gemm_call (the seeds of the recording fuzz target hold one gemm and one gemm_call set).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tier_test_support.hpp"

namespace {

using ::testing::HasSubstr;
using tiertest::run_mmaemu;

const std::filesystem::path kSeeds = tiertest::source_dir() / "fuzz" / "corpus" / "recording";

std::vector<std::string> kinds_of(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& s : j.at("sets"))
    out.push_back(s.at("kind").get<std::string>());
  return out;
}

TEST(RecordingsShow, ListsGemmSetsWithTheirCases) {
  const auto r = run_mmaemu({"recordings", "show", (kSeeds / "gemm.h5").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": gemm, "));
  const auto j = run_mmaemu({"recordings", "show", (kSeeds / "gemm.h5").string(), "--json", "-"});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_THAT(kinds_of(doc), ::testing::Contains("gemm"));
  std::size_t cases = 0;
  for (const auto& s : doc["sets"])
    cases += s.value("cases", std::size_t{0});
  // The sets account for every case of the file (the first line's count).
  EXPECT_THAT(r.out, HasSubstr(", " + std::to_string(cases) + " cases\n"));
  EXPECT_GT(cases, 0u);
}

TEST(RecordingsShow, ListsGemmCallSetsWithTheirCallsAndOutputs) {
  const auto r = run_mmaemu({"recordings", "show", (kSeeds / "gemm-call.h5").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": gemm_call, "));
  const auto j =
      run_mmaemu({"recordings", "show", (kSeeds / "gemm-call.h5").string(), "--json", "-"});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_THAT(kinds_of(doc), ::testing::Contains("gemm_call"));
  for (const auto& s : doc["sets"]) {
    if (s["kind"] == "gemm_call") {
      EXPECT_GT(s["calls"].get<std::size_t>(), 0u);
      EXPECT_GE(s["outputs"].get<std::size_t>(), s["calls"].get<std::size_t>());
    }
  }
}

} // namespace
