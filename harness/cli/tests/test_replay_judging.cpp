// SPDX-License-Identifier: BSD-2-Clause
// The replay judges as honestly as it computes: a recording computed by mmaemu is never a
// hardware PASS of a tier; a refusal is one event per distinct call, however many cases share
// that call; a documented disagreement (xfail) that still fails is XFAIL, one that passes is
// XPASS and fails the run.

#include <gtest/gtest.h>

#include <cstdio>

#include "mmaemu/harness/replay.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "replay_fixtures.hpp"
#include "temp_dir.hpp"

namespace mmaemu::harness {
namespace {

namespace fs = std::filesystem;

recordings::Recording committed(const char* name) {
  return recordings::read_recording(tiertest::committed_recordings() / "public" / name);
}

TEST(ReplayJudging, AComputedRecordingIsNeverAHardwarePassOfT1) {
  tiertest::TempDir dir;
  auto rec = committed("H100_E4M3.h5");
  // The provenance `mmaemu gemm --write` gives its files.
  rec.attrs["computed_by"] = "mmaemu reference backend (not a hardware recording)";
  recordings::write_recording(dir / "computed.h5", rec);
  const TierResult r =
      run_tier(tiertest::committed_tier("T1"), replaytest::options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::unsupported) << r.reason;
  EXPECT_EQ(r.total(Outcome::pass), 0u);
  EXPECT_EQ(r.total(Outcome::unsupported), 5000u);
  ASSERT_EQ(r.sets.size(), 1u);
  EXPECT_EQ(r.sets[0]["outcomes"], std::string(5000, 'U'));
  ASSERT_FALSE(r.cases.empty());
  EXPECT_NE(r.cases[0].message.find("not a hardware recording: computed_by 'mmaemu reference"),
            std::string::npos)
      << r.cases[0].message;

  // Beside a hardware recording, the hardware cases still pass and the computed ones add
  // nothing.
  fs::copy(tiertest::committed_recordings() / "public" / "Ada_E4M3.h5", dir / "hardware.h5");
  const TierResult both =
      run_tier(tiertest::committed_tier("T1"), replaytest::options_for(dir.path()));
  EXPECT_EQ(both.verdict, Outcome::pass) << both.reason;
  EXPECT_EQ(both.total(Outcome::pass), 5000u);
  EXPECT_EQ(both.total(Outcome::unsupported), 5000u);

  // `mmaemu replay` replays any recording (it is how a written file is checked), and says
  // that this one is not hardware.
  const ReplayResult any = replay_files({dir / "computed.h5"});
  EXPECT_EQ(any.passed, 5000u);
  ASSERT_EQ(any.files.size(), 1u);
  EXPECT_NE(any.files[0].not_hardware.find("computed_by"), std::string::npos);
}

TEST(ReplayJudging, AFileWrittenByGemmWriteIsUnsupportedInT1ButReplays) {
  tiertest::TempDir dir;
  const fs::path h5 = dir / "g.h5";
  const auto w = tiertest::run_mmaemu({"gemm", "--M", "4", "--N", "16", "--K", "32", "--fast",
                                       "--splitk", "1", "--out", "bf16", "--write", h5.string()});
  ASSERT_EQ(w.status, 0) << w.err;
  const auto t1 =
      tiertest::run_mmaemu({"tier", "run", "T1", "--recordings", dir.path().string(), "--no-log"});
  EXPECT_EQ(t1.status, 4) << t1.out << t1.err;
  EXPECT_NE(t1.out.find("T1: UNSUPPORTED"), std::string::npos) << t1.out;
  const auto replay = tiertest::run_mmaemu({"replay", h5.string()});
  EXPECT_EQ(replay.status, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("not a hardware recording"), std::string::npos) << replay.out;
}

// gemm cases that torch refuses (e5m2 x e5m2, ReferenceRejectsError): three with one call
// (the same shape and parameters, other operand codes) and one with another K.
recordings::GemmBatch refused_gemm_batch() {
  recordings::GemmBatch b;
  b.name = "refused";
  for (int i = 0; i < 4; ++i) {
    recordings::GemmCase c;
    c.id = "refused/" + std::to_string(i);
    c.profile = "hopper";
    c.fmt_a = c.fmt_b = Format::e5m2;
    c.out_dtype = Format::bf16;
    c.M = 2;
    c.N = 16;
    c.K = i == 3 ? 48 : 32;
    c.a.assign(c.M * c.K, static_cast<std::uint8_t>(0x30 + i));
    c.b.assign(c.N * c.K, 0x3C);
    c.expect_error = "ReferenceRejectsError";
    b.cases.push_back(c);
  }
  return b;
}

TEST(ReplayJudging, ARefusalCountsOncePerDistinctCallNotOncePerCase) {
  const SetResult s = replay_gemm_set(refused_gemm_batch(), "mem.h5");
  EXPECT_EQ(s.passed, 2u) << "two distinct calls";
  EXPECT_EQ(s.unsupported, 2u);
  EXPECT_EQ(s.letters, "PUUP");
  EXPECT_NE(s.results[1].message.find("the same call as refused/0"), std::string::npos)
      << s.results[1].message;

  // gemm_call: every call of the set has the same refused e5m2 output; its fp32 outputs are
  // each computed and compared, so they all count.
  const SetResult calls =
      replay_gemm_call_set(replaytest::gemm_call_recording(3).gemm_call[0], "mem.h5");
  EXPECT_EQ(calls.passed, 3u + 1u);
  EXPECT_EQ(calls.unsupported, 2u);
  EXPECT_EQ(calls.letters, "PUU") << "a call's letter is its worst output";
}

TEST(ReplayJudging, AnXfailThatStillFailsIsXfailAndTheRunPasses) {
  tiertest::TempDir dir;
  auto rec = committed("Ada_E4M3.h5");
  for (auto& e : rec.mma[0].expect)
    e ^= 1u; // every case disagrees
  rec.mma[0].attrs["xfail"] = "synthetic disagreement";
  rec.mma[0].attrs["xfail_evidence"] = "this test";
  recordings::write_recording(dir / "x.h5", rec);
  const TierResult r =
      run_tier(tiertest::committed_tier("T1"), replaytest::options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  EXPECT_EQ(r.total(Outcome::xfail), 5000u);
  EXPECT_EQ(r.sets[0]["outcomes"], std::string(5000, 'X'));
  EXPECT_EQ(r.sets[0]["xfail"], "synthetic disagreement");
  EXPECT_EQ(r.sets[0]["value"], 0) << "an XFAIL is no unexpected mismatch";
}

TEST(ReplayJudging, AnXfailThatPassesIsXpassAndFailsTheRun) {
  tiertest::TempDir dir;
  auto rec = committed("Ada_E4M3.h5");
  rec.mma[0].expect[7] ^= 1u; // one case still disagrees, the other 4999 pass
  rec.mma[0].attrs["xfail"] = "synthetic disagreement";
  rec.mma[0].attrs["xfail_evidence"] = "this test";
  recordings::write_recording(dir / "x.h5", rec);
  const TierResult r =
      run_tier(tiertest::committed_tier("T1"), replaytest::options_for(dir.path()));
  EXPECT_EQ(r.verdict, Outcome::fail);
  EXPECT_EQ(r.total(Outcome::xpass), 4999u);
  EXPECT_EQ(r.total(Outcome::xfail), 1u);
  EXPECT_NE(r.reason.find("4999 case(s) passed unexpectedly (XPASS)"), std::string::npos)
      << r.reason;
  EXPECT_EQ(r.sets[0]["outcomes"].get<std::string>()[7], 'X');
  EXPECT_EQ(r.sets[0]["outcomes"].get<std::string>()[0], 'Y');
  EXPECT_EQ(r.sets[0]["xpassed"], 4999);
  const std::string junit = junit_xml(r);
  EXPECT_NE(junit.find("4999 XPASS (expected to fail)\"/>"), std::string::npos) << junit;
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;

  // `mmaemu replay` judges the same way and exits 1.
  const auto cli = tiertest::run_mmaemu({"replay", (dir / "x.h5").string()});
  EXPECT_EQ(cli.status, 1) << cli.out << cli.err;
}

TEST(ReplayJudging, AnXfailWithoutEvidenceIsAnError) {
  auto rec = committed("Ada_E4M3.h5");
  rec.mma[0].attrs["xfail"] = "no evidence given";
  const SetResult s = replay_batch(rec.mma[0], "x.h5");
  EXPECT_EQ(s.errors, 5000u);
  EXPECT_NE(s.results[0].message.find("without xfail_evidence"), std::string::npos)
      << s.results[0].message;
}

// The reference computes an FP8 set twice, with the code users run and with the block-FMA
// model (ReplayOptions::model_rows). The expected bits are the H100 recording's: with the
// model as shipped, every case passes; with a model that sets the lowest bit of one row's
// result (a stand-in for a flipped modelling decision), that row fails though the fast path
// still reproduces the hardware, and its message names both results.
TEST(ReplayJudging, AnFp8CaseFailsWhenTheBlockFmaModelDisagreesWithTheFastPath) {
  const auto rec = committed("H100_E4M3.h5");
  ASSERT_FALSE(rec.mma.empty());
  const recordings::MmaBatch& batch = rec.mma[0];
  ASSERT_GT(batch.size(), 8u);
  ReplayOptions opt;
  std::size_t model_rows_seen = 0;
  opt.model_rows = [&](const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c,
                       std::size_t rows, std::size_t K, const Preset& p, model::FormatPair fmt,
                       std::uint32_t* out) {
    model::dot_rows(a, b, c, rows, K, p, fmt, out, model::ChainPath::model);
    model_rows_seen += rows;
  };
  const SetResult shipped = replay_batch(batch, "H100_E4M3.h5", opt);
  EXPECT_EQ(shipped.passed, batch.size());
  EXPECT_EQ(shipped.failed, 0u);
  EXPECT_EQ(model_rows_seen, batch.size()); // every case also went through the model

  const std::uint8_t* row7 = batch.a.data() + 7 * batch.K;
  opt.model_rows = [&](const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c,
                       std::size_t rows, std::size_t K, const Preset& p, model::FormatPair fmt,
                       std::uint32_t* out) {
    model::dot_rows(a, b, c, rows, K, p, fmt, out, model::ChainPath::model);
    for (std::size_t r = 0; r < rows; ++r) {
      if (a + r * K == row7)
        out[r] ^= 1u;
    }
  };
  const SetResult flipped = replay_batch(batch, "H100_E4M3.h5", opt);
  EXPECT_EQ(flipped.failed, 1u);
  EXPECT_EQ(flipped.passed, batch.size() - 1);
  ASSERT_EQ(flipped.results.size(), batch.size());
  const CaseResult& c7 = flipped.results[7];
  EXPECT_EQ(c7.outcome, Outcome::fail);
  EXPECT_NE(c7.why, Mismatch::none);
  EXPECT_EQ(c7.actual, batch.expect[7] ^ 1u); // the model's bits are the ones judged
  char fast[16], modelled[16];
  std::snprintf(fast, sizeof fast, "0x%08x", batch.expect[7]);
  std::snprintf(modelled, sizeof modelled, "0x%08x", batch.expect[7] ^ 1u);
  EXPECT_NE(c7.message.find(std::string("fast path gives ") + fast), std::string::npos)
      << c7.message;
  EXPECT_NE(c7.message.find(std::string("block-FMA model ") + modelled), std::string::npos)
      << c7.message;

  // The same with a case filter (the rows replayed one at a time, in place).
  ReplayOptions one = opt;
  one.filter = CaseFilter{7, batch.size()}; // the 8th case alone
  const SetResult only7 = replay_batch(batch, "H100_E4M3.h5", one);
  EXPECT_EQ(only7.failed, 1u);
  EXPECT_EQ(only7.passed, 0u);
}

} // namespace
} // namespace mmaemu::harness
