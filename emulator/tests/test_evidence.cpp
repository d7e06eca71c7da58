// SPDX-License-Identifier: BSD-2-Clause
// The status of a decision is computed from its evidence (evidence.hpp): confirmed only when
// T1 alone kills every mutant, consistent / contradicted by a measurement of the profile's
// platform and mode, unverified otherwise; and the shipped registry's statuses that
// docs/semantics.md and explain show.

#include <gtest/gtest.h>

#include <string>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/emulator/explain.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"
#include "mmaemu/emulator/profile.hpp"

namespace {

namespace ev = mmaemu::evidence;
using mmaemu::Profile;

// A registry of one recording, one measurement of profile "m" (slow accumulation only), an
// instruction-level decision with two mutants and two GEMM-level decisions.
const char* kRegistry = R"json({
  "format": "mmaemu-evidence/1",
  "sources": [
    {"id": "rec", "kind": "hardware_recording", "short": "R.h5", "file": "r.h5",
     "case_family": "c", "architecture": "sm_90"},
    {"id": "meas", "kind": "published_measurement", "short": "M (X, lib 1.0)",
     "reference": "ref", "measured": "m", "size": "s", "modes": ["slow"],
     "architecture": "sm_90", "cublaslt": "1.0", "profiles": {"m": "the measured one"}},
    {"id": "gemmrec", "kind": "hardware_recording", "short": "G.h5", "file": "g.h5",
     "case_family": "c", "profiles": {"m": "recorded on it"}}
  ],
  "decisions": [
    {"id": "model.x", "level": "instruction", "presets": ["hopper"], "title": "x",
     "choice": "x", "mutants": ["model.x1", "model.x2"], "evidence": [{"source": "rec"}]},
    {"id": "plan.split_layout", "level": "gemm", "modes": ["fast", "slow"], "when": "split",
     "title": "split", "mutants": ["plan.s1"],
     "evidence": [{"source": "meas", "states": "grain 128"}]},
    {"id": "plan.promotion", "level": "gemm", "modes": ["slow"], "title": "promotion",
     "shipped": "fp32 adds in k order", "choice": "adds", "mutants": ["plan.p1"],
     "evidence": [{"source": "gemmrec"}, {"source": "meas", "states": "fp32 adds in k order"}]}
  ]
})json";

Profile profile(const std::string& name, int grain) {
  Profile p;
  p.name = name;
  p.preset = "hopper";
  p.capability = "9.0";
  p.split_schemes = {"contiguous"};
  p.gemm.split_grain = grain;
  return p;
}

ev::T4Runs runs(std::initializer_list<std::pair<const char*, ev::MutantRun>> l) {
  ev::T4Runs t;
  t.log = "docs/validation_logs/x/T4.json";
  for (const auto& [id, r] : l)
    t.mutants[id] = r;
  return t;
}

TEST(EvidenceStatus, ConfirmedOnlyWhenT1KillsEveryMutant) {
  const ev::Registry reg = ev::parse_registry(kRegistry);
  const ev::Decision& d = *reg.decision("model.x");
  const Profile p = profile("m", 128);
  const auto both = runs({{"model.x1", {"killed", "T1"}}, {"model.x2", {"killed", "T1"}}});
  const ev::Verdict v = ev::judge(d, p, std::nullopt, reg, both);
  EXPECT_EQ(v.status, ev::Status::confirmed);
  EXPECT_EQ(v.text, "confirmed by R.h5");
  EXPECT_EQ(v.sources, (std::vector<std::string>{"rec"}));
  // One mutant killed only by a unit test: the recordings did not decide it.
  const auto unit =
      runs({{"model.x1", {"killed", "T1"}}, {"model.x2", {"killed", "Decode.Subnormals"}}});
  const ev::Verdict u = ev::judge(d, p, std::nullopt, reg, unit);
  EXPECT_EQ(u.status, ev::Status::unverified);
  EXPECT_EQ(u.text, "unverified");
  EXPECT_NE(u.why.find("model.x2 is killed by Decode.Subnormals, not by T1"), std::string::npos)
      << u.why;
  // A mutant that survived, or that the log does not hold, does not count either.
  EXPECT_EQ(ev::judge(d, p, std::nullopt, reg,
                      runs({{"model.x1", {"killed", "T1"}}, {"model.x2", {"survived", ""}}}))
                .status,
            ev::Status::unverified);
  const ev::Verdict missing =
      ev::judge(d, p, std::nullopt, reg, runs({{"model.x1", {"killed", "T1"}}}));
  EXPECT_EQ(missing.status, ev::Status::unverified);
  EXPECT_NE(missing.why.find("not in the T4 log"), std::string::npos) << missing.why;
}

TEST(EvidenceStatus, AMeasurementOfTheProfileAndModeMakesItConsistentOrContradicted) {
  const ev::Registry reg = ev::parse_registry(kRegistry);
  const ev::Decision& d = *reg.decision("plan.split_layout");
  const auto none = runs({});
  const ev::Verdict ok = ev::judge(d, profile("m", 128), ev::Mode::slow, reg, none);
  EXPECT_EQ(ok.status, ev::Status::consistent);
  EXPECT_EQ(ok.text, "consistent with M (X, lib 1.0)");
  // The profile's data say otherwise: contradicted, computed from the profile.
  const ev::Verdict bad = ev::judge(d, profile("m", 16), ev::Mode::slow, reg, none);
  EXPECT_EQ(bad.status, ev::Status::contradicted);
  EXPECT_EQ(bad.text, "contradicted by M (X, lib 1.0)");
  EXPECT_NE(bad.why.find("states 'grain 128', the profile has 'grain 16'"), std::string::npos)
      << bad.why;
  // A mode the measurement did not cover, or another profile: unverified.
  const ev::Verdict fast = ev::judge(d, profile("m", 128), ev::Mode::fast, reg, none);
  EXPECT_EQ(fast.status, ev::Status::unverified);
  EXPECT_NE(fast.why.find("did not measure use_fast_accum=True"), std::string::npos) << fast.why;
  EXPECT_EQ(ev::judge(d, profile("other", 128), ev::Mode::slow, reg, none).status,
            ev::Status::unverified);
}

TEST(EvidenceStatus, AGemmRecordingConfirmsOnlyTheProfilesItWasRecordedOn) {
  const ev::Registry reg = ev::parse_registry(kRegistry);
  const ev::Decision& d = *reg.decision("plan.promotion");
  const auto t1 = runs({{"plan.p1", {"killed", "T1"}}});
  const ev::Verdict on = ev::judge(d, profile("m", 128), ev::Mode::slow, reg, t1);
  EXPECT_EQ(on.status, ev::Status::confirmed);
  EXPECT_EQ(on.text, "confirmed by G.h5");
  const ev::Verdict off = ev::judge(d, profile("other", 128), ev::Mode::slow, reg, t1);
  EXPECT_EQ(off.status, ev::Status::unverified);
  EXPECT_NE(off.why.find("no recording of this profile"), std::string::npos) << off.why;
  // Without the T1 kill the measurement decides on its profile.
  EXPECT_EQ(ev::judge(d, profile("m", 128), ev::Mode::slow, reg, runs({})).status,
            ev::Status::consistent);
}

TEST(EvidenceStatus, SummaryLinesCountEachStatusWithItsSources) {
  const ev::Registry reg = ev::parse_registry(kRegistry);
  const Profile p = profile("m", 128);
  ev::CallShape call;
  call.fast = false;
  call.S = 2;
  const auto uses = ev::decisions_for_call(
      p, call, reg, runs({{"model.x1", {"killed", "T1"}}, {"model.x2", {"killed", "T1"}}}));
  EXPECT_EQ(ev::summary_line(ev::Level::gemm, ev::count(uses, ev::Level::gemm, reg)),
            "GEMM level: 2 consistent with M (X, lib 1.0)");
  EXPECT_EQ(ev::summary_line(ev::Level::instruction, ev::count(uses, ev::Level::instruction, reg)),
            "instruction level: 1 confirmed by R.h5");
  // Unsplit: the split decision is not relied on.
  call.S = 1;
  const auto one = ev::decisions_for_call(p, call, reg, runs({}));
  EXPECT_EQ(ev::summary_line(ev::Level::gemm, ev::count(one, ev::Level::gemm, reg)),
            "GEMM level: 1 consistent with M (X, lib 1.0)");
  EXPECT_EQ(ev::summary_line(ev::Level::instruction, ev::count(one, ev::Level::instruction, reg)),
            "instruction level: 1 unverified");
  ev::Counts mixed;
  mixed.consistent = 3;
  mixed.consistent_with = {"bitequiv (H100, cuBLASLt 13.1.1)"};
  mixed.unverified = 2;
  EXPECT_EQ(ev::summary_line(ev::Level::gemm, mixed),
            "GEMM level: 3 consistent with bitequiv (H100, cuBLASLt 13.1.1), 2 unverified");
}

TEST(EvidenceStatus, MalformedRegistriesAreValueErrorsNamingTheField) {
  for (const char* text :
       {R"({"format": "other", "sources": [], "decisions": []})",
        R"({"format": "mmaemu-evidence/1", "sources": [{"id": "a", "kind": "rumour",
            "short": "a"}], "decisions": []})",
        R"({"format": "mmaemu-evidence/1", "sources": [], "decisions": [{"id": "d",
            "level": "gemm", "title": "t", "modes": ["slow"], "evidence": [{"source": "nope"}]}]})",
        R"({"format": "mmaemu-evidence/1", "sources": [], "decisions": [
            {"id": "a", "level": "instruction", "title": "t", "mutants": ["m"]},
            {"id": "b", "level": "instruction", "title": "t", "mutants": ["m"]}]})",
        R"({"format": "mmaemu-evidence/1", "sources": [], "decisions": [{"id": "d",
            "level": "gemm", "title": "t"}]})"}) {
    EXPECT_THROW(ev::parse_registry(text), mmaemu::ValueError) << text;
  }
}

// ---- the shipped registry -------------------------------------------------------------

ev::Verdict shipped(const std::string& id, const std::string& profile,
                    std::optional<ev::Mode> mode) {
  const ev::Decision* d = ev::registry().decision(id);
  EXPECT_NE(d, nullptr) << id;
  return ev::judge(*d, mmaemu::get_profile(profile), mode);
}

TEST(ShippedEvidence, TheMeasuredProfilesAreConsistentWithBitequivForSlowAccumulationOnly) {
  for (const char* profile : {"h100-sxm", "h200"}) {
    for (const char* id : {"plan.split_layout", "plan.slow_chunks", "plan.promotion",
                           "plan.reduction", "plan.alpha_before_reduction", "epilogue.scale"}) {
      const ev::Verdict v = shipped(id, profile, ev::Mode::slow);
      EXPECT_EQ(v.status, ev::Status::consistent) << profile << " " << id << ": " << v.why;
      EXPECT_EQ(v.text, "consistent with bitequiv (H100, cuBLASLt 13.1.1)") << id;
      EXPECT_EQ(v.sources, (std::vector<std::string>{"bitequiv-h100-cublaslt-13.1.1"})) << id;
      if (ev::applies(*ev::registry().decision(id), mmaemu::get_profile(profile), ev::Mode::fast)) {
        EXPECT_EQ(shipped(id, profile, ev::Mode::fast).status, ev::Status::unverified) << id;
      }
    }
  }
  // The profiles the measurement does not cover stay unverified.
  for (const char* profile : {"hopper", "hopper-experimental", "ada"}) {
    EXPECT_EQ(shipped("plan.split_layout", profile, ev::Mode::slow).status, ev::Status::unverified)
        << profile;
  }
}

TEST(ShippedEvidence, NoShippedProfileIsLeftContradicted) {
  for (const auto& name : mmaemu::list_profiles()) {
    const Profile& p = mmaemu::get_profile(name);
    for (const auto& d : ev::registry().decisions) {
      for (ev::Mode m : {ev::Mode::slow, ev::Mode::fast}) {
        const auto mode = d.level == ev::Level::gemm ? std::optional<ev::Mode>(m) : std::nullopt;
        if (ev::applies(d, p, mode)) {
          EXPECT_NE(ev::judge(d, p, mode).status, ev::Status::contradicted) << name << " " << d.id;
        }
      }
    }
  }
}

TEST(ShippedEvidence, AProfileChangedAwayFromTheMeasurementIsContradicted) {
  Profile p = mmaemu::get_profile("h100-sxm");
  p.gemm.split_grain = 16;
  p.gemm.scale_fold = mmaemu::ScaleFold::two_multiplies;
  const ev::Registry& reg = ev::registry();
  EXPECT_EQ(ev::judge(*reg.decision("plan.split_layout"), p, ev::Mode::slow).text,
            "contradicted by bitequiv (H100, cuBLASLt 13.1.1)");
  EXPECT_EQ(ev::judge(*reg.decision("epilogue.scale"), p, ev::Mode::slow).status,
            ev::Status::contradicted);
}

TEST(ShippedEvidence, E5m2SubnormalDecodingIsNotConfirmedByTheRecordings) {
  // Its mutant (instruction_model.e5m2_subnormal_binade) survives T1 and is killed only by a unit
  // test; the normal codes' mutant (instruction_model.e5m2_bias_16) is killed by T1.
  const auto& t4 = ev::committed_t4();
  ASSERT_FALSE(t4.log.empty()) << "emulator/data/evidence_t4.json holds no T4 log";
  EXPECT_EQ(shipped("model.e5m2_subnormal_decoding", "hopper", std::nullopt).status,
            ev::Status::unverified);
  EXPECT_EQ(shipped("model.e5m2_normal_decoding", "hopper", std::nullopt).text,
            "confirmed by H100_E5M2.h5");
  EXPECT_EQ(shipped("model.e5m2_normal_decoding", "ada", std::nullopt).text,
            "confirmed by Ada_E5M2.h5");
}

TEST(ShippedEvidence, EveryPlanDecisionHasItsGemmLevelEntry) {
  for (const auto& d : mmaemu::model::list_decisions()) {
    const ev::Decision* e = ev::registry().decision(d.id);
    ASSERT_NE(e, nullptr) << d.id;
    EXPECT_EQ(e->level, ev::Level::gemm) << d.id;
  }
}

TEST(ShippedEvidence, ExplainListsTheCallsDecisionsAndOneSummaryPerLevel) {
  mmaemu::ScaledMmCall c;
  c.input = mmaemu::Tensor::meta(mmaemu::Format::e4m3, {64, 256});
  c.mat2 = mmaemu::Tensor::meta(mmaemu::Format::e4m3, {32, 256}).t();
  c.scale_a = c.scale_b = mmaemu::Tensor::scalar_f32(0x3F800000u);
  c.out_dtype = mmaemu::Format::bf16;
  c.use_fast_accum = false;
  c.profile = "h100-sxm";
  c.splitk = mmaemu::SplitKRequest::explicit_split(2, "contiguous");
  const mmaemu::CallPlan plan = mmaemu::explain(c);
  ASSERT_TRUE(plan.ok) << plan.error_message;
  ASSERT_EQ(plan.evidence_summary.size(), 3u);
  EXPECT_EQ(plan.evidence_summary[1],
            "GEMM level: 6 consistent with bitequiv (H100, cuBLASLt 13.1.1), 2 unverified");
  bool split = false;
  for (const auto& e : plan.evidence) {
    if (e.id == "plan.split_layout") {
      split = true;
      EXPECT_EQ(e.status, "consistent");
      EXPECT_NE(e.choice.find("ceil(ceil(K/128)/S)*128"), std::string::npos) << e.choice;
    }
    EXPECT_NE(e.id, "plan.fast_chain");
  }
  EXPECT_TRUE(split);
  EXPECT_NE(mmaemu::call_plan_json(plan).find("\"evidence\""), std::string::npos);
  // The auto split is unknown on this profile: the split decisions are left out, and said so.
  c.splitk = mmaemu::SplitKRequest::automatic();
  const mmaemu::CallPlan unknown = mmaemu::explain(c);
  EXPECT_FALSE(unknown.ok);
  ASSERT_EQ(unknown.evidence_summary.size(), 3u);
  EXPECT_EQ(unknown.evidence_summary[1],
            "GEMM level: 3 consistent with bitequiv (H100, cuBLASLt 13.1.1), 2 unverified");
  for (const auto& e : unknown.evidence)
    EXPECT_NE(e.id, "plan.split_layout");
}

} // namespace
