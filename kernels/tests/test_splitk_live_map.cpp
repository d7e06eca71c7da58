// SPDX-License-Identifier: BSD-2-Clause
// The split-K live map (kernels/data/splitk_live_map.json) without any library: which cuBLASLt
// answers become a split decision (only ALGO_ID 66 / STAGES_ID 36 on sm_90 with cuBLASLt 13,
// fp8 e4m3, FAST_ACCUM 0: what the bitequiv measurement covers), that every other answer
// declines naming the algorithm, and how resolve_splitk goes on after a decline (envelope, or
// SplitKUnknownError). The expected decisions are the measurement's statements
// (shared/scaled-mm-facts.md, "the bitequiv profile"), not the map's code.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/emulator/warnings.hpp"
#include "mmaemu/kernels/splitk_live_map.hpp"

namespace {

using mmaemu::Format;
using mmaemu::Profile;
using mmaemu::SplitDecision;
using mmaemu::SplitKQuery;
using mmaemu::SplitKRequest;
using mmaemu::kernels::decision_from_answer;
using mmaemu::kernels::LiveAnswer;
using mmaemu::kernels::LiveMap;
using mmaemu::kernels::parse_live_map_json;
using mmaemu::kernels::shipped_live_map;

constexpr const char* kEvidence = "bitequiv-h100-cublaslt-13.1.1";

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// An H200 with cuBLASLt 13.1.0 answering nvjet, unsplit.
LiveAnswer h200(int algo = 66, int stages = 36, int splitk = 1, std::string scheme = "none") {
  LiveAnswer a;
  a.device_name = "NVIDIA H200";
  a.cc = 90;
  a.sm_count = 132;
  a.cublaslt_version = "13.1.0";
  a.library = "/opt/site-packages/nvidia/cu13/lib/libcublasLt.so.13";
  a.algo_id = algo;
  a.tile_id = 21;
  a.stages_id = stages;
  a.splitk_num = splitk;
  a.reduction_scheme = std::move(scheme);
  return a;
}

SplitKQuery call(std::int64_t K = 1920, bool fast = false, Format a = Format::e4m3,
                 Format b = Format::e4m3) {
  return SplitKQuery{2048, 5760, K, a, b, Format::bf16, fast, true};
}

std::optional<SplitDecision> decide(const LiveAnswer& a, const SplitKQuery& q, std::string& why,
                                    const Profile& p = mmaemu::get_profile("h200"),
                                    const LiveMap& map = shipped_live_map()) {
  return decision_from_answer(a, q, p, map, why);
}

TEST(SplitKLiveMap, ShippedRowsNameTheBitequivEvidenceAndNoPairIsRecorded) {
  const LiveMap& m = shipped_live_map();
  ASSERT_EQ(m.rows.size(), 2u);
  for (const auto& row : m.rows) {
    EXPECT_EQ(row.evidence, kEvidence) << row.id;
    EXPECT_EQ(row.cc, 90) << row.id;
    EXPECT_EQ(row.cublaslt_major, 13) << row.id;
    EXPECT_EQ(row.algo_id, 66) << row.id;
    EXPECT_EQ(row.stages_id, 36) << row.id;
    EXPECT_EQ(row.use_fast_accum, std::vector<bool>{false}) << row.id;
  }
  // No (GPU, cuBLASLt) pair has committed GEMM recordings: nothing live is verified.
  EXPECT_TRUE(m.recorded_pairs.empty());
}

TEST(SplitKLiveMap, NvjetUnsplitIsSOne) {
  std::string why;
  const auto d = decide(h200(), call(), why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->S, 1);
  EXPECT_EQ(d->scheme, "none");
  EXPECT_EQ(d->source, "live-query");
  EXPECT_FALSE(d->verified);
  EXPECT_EQ(d->evidence, kEvidence);
  EXPECT_TRUE(has(d->note, "ALGO_ID 66")) << d->note;
  EXPECT_TRUE(has(d->note, kEvidence)) << d->note;
  EXPECT_TRUE(has(d->note, "libcublasLt.so.13")) << d->note;
}

TEST(SplitKLiveMap, NvjetSplitWithFp32PartialsIsContiguousS) {
  for (const int S : {2, 3, 4, 15}) {
    std::string why;
    const auto d = decide(h200(66, 36, S, "compute_type"), call(), why);
    ASSERT_TRUE(d) << why;
    EXPECT_EQ(d->S, S);
    EXPECT_EQ(d->scheme, "contiguous");
    EXPECT_FALSE(d->verified);
    EXPECT_EQ(d->evidence, kEvidence);
  }
}

TEST(SplitKLiveMap, NvjetSplitWithAnotherReductionSchemeDeclinesNamingIt) {
  for (const char* scheme : {"none", "inplace", "output_type", "unknown(3)"}) {
    std::string why;
    EXPECT_FALSE(decide(h200(66, 36, 4, scheme), call(), why)) << scheme;
    EXPECT_TRUE(has(why, "ALGO_ID 66")) << why;
    EXPECT_TRUE(has(why, "STAGES_ID 36")) << why;
    EXPECT_TRUE(has(why, "SPLITK_NUM 4")) << why;
    EXPECT_TRUE(has(why, std::string("reduction ") + scheme)) << why;
    EXPECT_TRUE(has(why, "covers the reduction scheme(s) compute_type only")) << why;
    EXPECT_TRUE(has(why, "NVIDIA H200")) << why;
  }
}

TEST(SplitKLiveMap, AnotherAlgorithmOrStagesDeclinesNamingIt) {
  struct Case {
    int algo, stages, S;
    const char* scheme;
  };
  for (const Case c : {Case{67, 36, 1, "none"}, Case{66, 35, 1, "none"}, Case{23, 14, 1, "none"},
                       Case{0, 0, 4, "compute_type"}}) {
    std::string why;
    EXPECT_FALSE(decide(h200(c.algo, c.stages, c.S, c.scheme), call(), why));
    EXPECT_TRUE(has(why, "ALGO_ID " + std::to_string(c.algo) + ",")) << why;
    EXPECT_TRUE(has(why, "STAGES_ID " + std::to_string(c.stages) + ",")) << why;
    EXPECT_TRUE(has(why, "SPLITK_NUM " + std::to_string(c.S))) << why;
    EXPECT_TRUE(has(why, "no measured mapping")) << why;
    EXPECT_TRUE(has(why, "splitk_live_map.json")) << why;
  }
}

TEST(SplitKLiveMap, SplitKNumZeroIsNoSplitCountAndDeclines) {
  std::string why;
  EXPECT_FALSE(decide(h200(66, 36, 0, "none"), call(), why));
  EXPECT_TRUE(has(why, "SPLITK_NUM 0")) << why;
}

TEST(SplitKLiveMap, WhatTheMeasurementDidNotCoverDeclines) {
  std::string why;
  EXPECT_FALSE(decide(h200(), call(1920, /*fast=*/true), why));
  EXPECT_TRUE(has(why, "covers FAST_ACCUM 0 only")) << why;

  EXPECT_FALSE(decide(h200(), call(1920, false, Format::e4m3, Format::e5m2), why));
  EXPECT_TRUE(has(why, "covers mat1 e4m3 x mat2 e4m3 only")) << why;

  LiveAnswer old = h200();
  old.cublaslt_version = "12.8.3";
  EXPECT_FALSE(decide(old, call(), why));
  EXPECT_TRUE(has(why, "cuBLASLt 12.8.3")) << why;

  LiveAnswer ada = h200();
  ada.cc = 89;
  EXPECT_FALSE(decide(ada, call(), why));
  EXPECT_TRUE(has(why, "sm_89")) << why;
}

TEST(SplitKLiveMap, ASplitOnAProfileWithoutTheSchemeDeclines) {
  std::string why;
  EXPECT_FALSE(decide(h200(66, 36, 2, "compute_type"), call(), why, mmaemu::get_profile("ada")));
  EXPECT_TRUE(has(why, "contiguous")) << why;
  EXPECT_TRUE(has(why, "'ada'")) << why;
}

TEST(SplitKLiveMap, MoreSplitsThanKDeclines) {
  std::string why;
  EXPECT_FALSE(decide(h200(66, 36, 64, "compute_type"), call(32), why));
  EXPECT_TRUE(has(why, "exceeds K = 32")) << why;
}

TEST(SplitKLiveMap, OnlyARecordedPairIsVerified) {
  LiveMap m = shipped_live_map();
  m.recorded_pairs.push_back({"NVIDIA H200", "13.1.0", "recordings/data/h200/"});
  std::string why;
  auto d = decide(h200(66, 36, 2, "compute_type"), call(), why, mmaemu::get_profile("h200"), m);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->verified);
  LiveAnswer other = h200(66, 36, 2, "compute_type");
  other.cublaslt_version = "13.0.2";
  d = decide(other, call(), why, mmaemu::get_profile("h200"), m);
  ASSERT_TRUE(d) << why;
  EXPECT_FALSE(d->verified);
}

TEST(SplitKLiveMap, MalformedMapsAreValueErrorsNamingTheField) {
  const std::string row =
      R"({"id": "r", "evidence": "e", "why": "w", "when": {"capability": "9.0",
      "cublaslt_major": 13, "algo_id": 66, "stages_id": 36, "splitk": "SPLIT",
      "reduction_schemes": ["none"], "a": ["e4m3"], "b": ["e4m3"], "use_fast_accum": [false]},
      "decide": {"scheme": "none"}})";
  auto with = [&](const std::string& from, const std::string& to) {
    std::string r = row;
    r.replace(r.find(from), from.size(), to);
    return R"({"format": "mmaemu-splitk-live-map/1", "rows": [)" + r +
           R"(], "recorded_pairs": []})";
  };
  // The template itself parses once SPLIT is a valid value.
  EXPECT_EQ(parse_live_map_json(with("SPLIT", "1")).rows.size(), 1u);
  struct Case {
    std::string text;
    const char* names;
  };
  for (const Case& c : std::vector<Case>{
           {with("SPLIT", "2"), "splitk"},
           {with("\"e4m3\"], \"b\"", "\"fp32\"], \"b\""), ".a"},
           {with("\"9.0\"", "\"nine\""), "capability"},
           {with("\"none\"]", "\"serial\"]"), "reduction_schemes"},
           {with("\"algo_id\": 66", "\"algo_id\": -1"), "algo_id"},
           {with("\"evidence\": \"e\",", ""), "evidence"},
           {with("\"decide\": {\"scheme\": \"none\"}", "\"decide\": {\"scheme\": \"contiguous\"}"),
            "decide.scheme"},
           {R"({"format": "other/1", "rows": [], "recorded_pairs": []})", "format"},
           {R"({"format": "mmaemu-splitk-live-map/1", "rows": []})", "recorded_pairs"},
           {"{", "JSON"},
       }) {
    std::string text = c.text;
    if (text.find("\"splitk\": \"SPLIT\"") != std::string::npos)
      text.replace(text.find("SPLIT"), 5, "1");
    try {
      parse_live_map_json(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const mmaemu::ValueError& e) {
      EXPECT_TRUE(has(e.what(), c.names)) << e.what();
    }
  }
}

// ---- resolve_splitk with a live query installed ------------------------------------------------

class LiveStep : public ::testing::Test {
protected:
  void SetUp() override {
    mmaemu::reset_warnings_once();
    previous_ = mmaemu::set_warning_sink([this](const mmaemu::Warning& w) { seen_.push_back(w); });
  }
  void TearDown() override {
    mmaemu::set_splitk_live_query(nullptr);
    mmaemu::set_warning_sink(previous_);
    mmaemu::reset_warnings_once();
  }
  // Installs a live query that answers `a` through the shipped map.
  static void answer(LiveAnswer a) {
    mmaemu::set_splitk_live_query([a](const SplitKQuery& q, const Profile& p, std::string& why) {
      return decision_from_answer(a, q, p, shipped_live_map(), why);
    });
  }
  std::vector<mmaemu::Warning> seen_;
  mmaemu::WarningSink previous_;
};

TEST_F(LiveStep, AMappedSplitDecidesAutoAndWarnsUnverified) {
  answer(h200(66, 36, 2, "compute_type"));
  const auto d =
      mmaemu::resolve_splitk(call(), mmaemu::get_profile("h200"), SplitKRequest::automatic());
  EXPECT_EQ(d.source, "live-query");
  EXPECT_EQ(d.S, 2);
  EXPECT_EQ(d.scheme, "contiguous");
  EXPECT_EQ(d.evidence, kEvidence);
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].cls, mmaemu::WarningClass::unverified_split);
}

TEST_F(LiveStep, ADeclinedAnswerIsNamedInSplitKUnknownError) {
  answer(h200(67, 36, 1, "none"));
  try {
    mmaemu::resolve_splitk(call(), mmaemu::get_profile("h200"), SplitKRequest::automatic());
    FAIL() << "expected SplitKUnknownError";
  } catch (const mmaemu::SplitKUnknownError& e) {
    EXPECT_TRUE(has(e.what(), "live-query: cuBLASLt 13.1.0 on NVIDIA H200")) << e.what();
    EXPECT_TRUE(has(e.what(), "ALGO_ID 67")) << e.what();
    EXPECT_TRUE(has(e.what(), "no envelope")) << e.what();
  }
}

TEST_F(LiveStep, ADeclinedAnswerGoesOnToTheEnvelope) {
  answer(h200(67, 36, 1, "none"));
  Profile p = mmaemu::get_profile("h200");
  p.envelope = mmaemu::SplitKEnvelope{1, 1 << 20, true, "test envelope"};
  const auto d = mmaemu::resolve_splitk(call(), p, SplitKRequest::automatic(), false);
  EXPECT_EQ(d.source, "envelope");
  EXPECT_EQ(d.S, 1);
  // strict: no envelope, the decline is the error.
  EXPECT_THROW(mmaemu::resolve_splitk(call(), p, SplitKRequest::automatic(), true),
               mmaemu::SplitKUnknownError);
}

TEST_F(LiveStep, AnExplicitSplitOrWorkspaceZeroNeverAsks) {
  int asked = 0;
  mmaemu::set_splitk_live_query([&](const SplitKQuery&, const Profile&, std::string& why) {
    ++asked;
    why = "asked";
    return std::optional<SplitDecision>();
  });
  mmaemu::resolve_splitk(call(), mmaemu::get_profile("h200"), SplitKRequest::explicit_split(1));
  mmaemu::resolve_splitk(call(), mmaemu::get_profile("hopper-ws0"), SplitKRequest::automatic());
  SplitKQuery odd = call();
  odd.layout_std = false;
  EXPECT_THROW(mmaemu::resolve_splitk(odd, mmaemu::get_profile("h200"), SplitKRequest::automatic()),
               mmaemu::SplitKUnknownError);
  EXPECT_EQ(asked, 0);
}

} // namespace
