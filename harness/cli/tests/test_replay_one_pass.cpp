// SPDX-License-Identifier: BSD-2-Clause
// One pass per recording: a T1 run and `mmaemu replay` read each file once (its sha256
// computed while it is read) and parse each gemm_call description once, however many outputs
// a call has; a --shard run parses only what it reads and books the same letters.

#include <gtest/gtest.h>

#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "replay_fixtures.hpp"

namespace mmaemu::harness {
namespace {

namespace fs = std::filesystem;

// Two files: a committed hardware recording (5000 mma cases) and 3 gemm_calls of 2 outputs.
struct TwoFiles {
  tiertest::TempDir dir;
  std::vector<fs::path> files;
  TwoFiles() {
    fs::copy(tiertest::committed_recordings() / "public" / "H100_E4M3.h5", dir / "a_mma.h5");
    recordings::write_recording(dir / "b_calls.h5", replaytest::gemm_call_recording(3));
    files = {dir / "a_mma.h5", dir / "b_calls.h5"};
  }
};

TEST(ReplayOnePass, T1ReadsEachFileOnceAndParsesEachCallOnce) {
  TwoFiles f;
  const TierSpec t1 = tiertest::committed_tier("T1");
  const std::uint64_t reads = support::whole_file_reads();
  const std::uint64_t parses = gemm_call_parse_count();
  const TierResult r = run_tier(t1, replaytest::options_for(f.dir.path()));
  EXPECT_EQ(support::whole_file_reads() - reads, 2u) << "one read per recording";
  EXPECT_EQ(gemm_call_parse_count() - parses, 3u) << "one parse per call, not per output";
  EXPECT_EQ(r.verdict, Outcome::pass) << r.reason;
  // The digest the log records is the digest of the file's bytes.
  ASSERT_EQ(r.inputs.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_EQ(r.inputs[i].sha256, support::sha256_file(f.files[i]));
  // 5000 mma cases; 3 calls of one fp32 output (32.0) and one refused e5m2 output each (the
  // same refusal: judged at the first call).
  ASSERT_EQ(r.sets.size(), 2u);
  EXPECT_EQ(r.sets[0]["outcomes"], std::string(5000, 'P'));
  EXPECT_EQ(r.sets[1]["outcomes"], "PUU");
  EXPECT_EQ(r.sets[1]["outputs"], 6);
}

TEST(ReplayOnePass, ReplayCommandReadsEachFileOnceAndReportsItsDigest) {
  TwoFiles f;
  const std::uint64_t reads = support::whole_file_reads();
  const std::uint64_t parses = gemm_call_parse_count();
  const ReplayResult r = replay_files(f.files);
  EXPECT_EQ(support::whole_file_reads() - reads, 2u);
  EXPECT_EQ(gemm_call_parse_count() - parses, 3u);
  ASSERT_EQ(r.files.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.files[i].sha256, support::sha256_file(f.files[i]));
    EXPECT_EQ(r.files[i].bytes, fs::file_size(f.files[i]));
  }
  EXPECT_EQ(r.passed, 5000u + 4u);
  EXPECT_EQ(r.unsupported, 2u);
  EXPECT_EQ(r.failed + r.errors, 0u);
}

TEST(ReplayOnePass, AShardReadsOnceAndBooksTheLettersOfTheWholeRunAtItsIndices) {
  TwoFiles f;
  const TierSpec t1 = tiertest::committed_tier("T1");
  const TierResult whole = run_tier(t1, replaytest::options_for(f.dir.path()));
  ASSERT_EQ(whole.sets.size(), 2u);
  EXPECT_EQ(whole.sets[1]["outcomes"], "PUU");
  for (std::size_t k = 1; k <= 2; ++k) {
    RunOptions o = replaytest::options_for(f.dir.path());
    o.shard = parse_shard(std::to_string(k) + "/2");
    const std::uint64_t reads = support::whole_file_reads();
    const TierResult part = run_tier(t1, o);
    EXPECT_EQ(support::whole_file_reads() - reads, 2u);
    ASSERT_EQ(part.sets.size(), whole.sets.size());
    for (std::size_t s = 0; s < whole.sets.size(); ++s) {
      const std::string all = whole.sets[s]["outcomes"];
      std::string mine;
      for (std::size_t i = k - 1; i < all.size(); i += 2)
        mine += all[i];
      EXPECT_EQ(part.sets[s]["outcomes"], mine) << s;
      EXPECT_EQ(part.sets[s]["cases_total"], whole.sets[s]["cases_total"]);
    }
  }
}

TEST(ReplayOnePass, AMalformedDescriptionMakesTheFileUnreadableNamingCallAndKey) {
  tiertest::TempDir dir;
  auto rec = replaytest::gemm_call_recording(2);
  auto call = replaytest::unit_call();
  call["input"]["strides"] = {32, 1, 1}; // three strides for two dimensions
  rec.gemm_call[0].calls[1].call_json = call.dump();
  recordings::write_recording(dir / "bad.h5", rec);
  const std::uint64_t reads = support::whole_file_reads();
  const ReplayRecording rr = read_recording_for_replay(dir / "bad.h5");
  EXPECT_EQ(support::whole_file_reads() - reads, 1u);
  EXPECT_NE(rr.info.error.find("gemm_call 'calls/1': key 'input"), std::string::npos)
      << rr.info.error;
  EXPECT_EQ(rr.info.sha256, support::sha256_file(dir / "bad.h5")) << "hashed while read";
  EXPECT_TRUE(rr.rec.gemm_call.empty());
}

// Every output of a call is built from the one typed call: each gets a fresh out= tensor, so
// that what scaled_mm writes into one output's out= never reaches the next.
TEST(ReplayOnePass, EachOutputOfACallGetsAFreshOutTensor) {
  recordings::GemmCall gc = replaytest::unit_gemm_call("c/0");
  auto call = replaytest::unit_call();
  call["out"] = {{"dtype", "fp32"}, {"shape", {2, 16}}, {"fill", "0x7fc00000"}};
  gc.call_json = call.dump();
  gc.outputs = {gc.outputs[0], gc.outputs[0]};
  gc.outputs[1].name = "fp32_again";
  const GemmCallDesc d = parse_recorded_call(gc, "mem.h5");
  for (const auto& o : gc.outputs) {
    GemmCallArgs a;
    prepare_output_call(gc, d, o, "reference", a);
    ASSERT_TRUE(a.has_out);
    EXPECT_EQ(a.out.bits_flat(0), 0x7fc00000u) << o.name << ": out= starts as described";
    scaled_mm(a.call);
    EXPECT_EQ(a.out.bits_flat(0), replaytest::kThirtyTwo) << o.name;
  }
}

} // namespace
} // namespace mmaemu::harness
