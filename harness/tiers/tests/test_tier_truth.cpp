// SPDX-License-Identifier: BSD-2-Clause
// T2 on a synthetic truth: recordings whose expected bits come from an independent
// derivation (tests/support/ref_chain.hpp) or from the committed hardware recordings, a
// manifest.json, and the read-only rules (snapshot, pinned sha256, never written into).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <random>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/harness/tier_truth.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "mmaemu/support/digest.hpp"
#include "ref_chain.hpp"
#include "tier_test_support.hpp"

namespace mmaemu::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The hopper preset's parameters, written out independently of emulator/src/preset.cpp.
constexpr reftest::Params kHopper{32, 13, 13, false, -133};

// K = 64 random finite E4M3 codes per case, c = +0 (wgmma zeroes the accumulator); the
// expected bits from the binary64 reference chain. Case 0 multiplies zeros: +0 by the
// chain's rule. Case 1 has a NaN operand: the canonical NaN 0x7FFFFFFF (docs/semantics.md).
recordings::MmaBatch synthetic_batch(const std::string& name, unsigned seed) {
  recordings::MmaBatch b;
  b.name = name;
  b.preset = "hopper";
  b.K = 64;
  b.c_policy = "zero";
  b.attrs["gpu"] = "synthetic";
  std::mt19937 rng(seed);
  const int n = 40;
  for (int i = 0; i < n; ++i) {
    std::vector<std::uint8_t> a(b.K), bb(b.K);
    for (std::uint32_t k = 0; k < b.K; ++k) {
      auto finite = [&] {
        std::uint8_t c;
        do
          c = static_cast<std::uint8_t>(rng() & 0xFF);
        while ((c & 0x7F) == 0x7F); // E4M3 NaN
        return c;
      };
      a[k] = i == 0 ? 0 : finite();
      bb[k] = finite();
    }
    std::uint32_t expect;
    if (i == 1) {
      a[5] = 0x7F;
      expect = 0x7FFFFFFFu;
    } else {
      expect = reftest::chain(reftest::kE4M3, reftest::kE4M3, a, bb, 0u, kHopper);
    }
    char id[32];
    std::snprintf(id, sizeof id, "%s/%05d", name.c_str(), i);
    b.ids.push_back(id);
    b.a.insert(b.a.end(), a.begin(), a.end());
    b.b.insert(b.b.end(), bb.begin(), bb.end());
    b.c.push_back(0u);
    b.expect.push_back(expect);
  }
  return b;
}

class Truth : public ::testing::Test {
protected:
  void SetUp() override {
    truth = tmp / "truth";
    fs::create_directories(truth / "sub");
    fs::copy(tiertest::committed_recordings() / "public" / "H100_E4M3.h5",
             truth / "sub/H100_E4M3.h5");
    recordings::Recording rec;
    rec.attrs["source"] = "synthetic (ref_chain.hpp)";
    rec.mma.push_back(synthetic_batch("SYN_A", 1));
    rec.mma.push_back(synthetic_batch("SYN_B", 2));
    recordings::write_recording(truth / "synthetic.h5", rec);
    write_manifest();
    opt.text = stderr;
    result.tier = "T2";
  }
  void write_manifest(bool with_sha = true) {
    json m = {{"format", "test-truth"}, {"recordings", json::array()}};
    for (const char* p : {"synthetic.h5", "sub/H100_E4M3.h5"}) {
      json e = {{"path", p}};
      if (with_sha)
        e["sha256"] = support::sha256_file(truth / p);
      m["recordings"].push_back(e);
    }
    tiertest::spit(truth / "manifest.json", m.dump(2));
  }
  void rewrite_synthetic(const std::function<void(recordings::Recording&)>& edit) {
    auto rec = recordings::read_recording(truth / "synthetic.h5");
    edit(rec);
    fs::remove(truth / "synthetic.h5");
    recordings::write_recording(truth / "synthetic.h5", rec);
    write_manifest();
  }
  json replay_json() { return json::parse(tiertest::slurp(tmp / "out/replay.json")); }

  tiertest::TempDir tmp;
  fs::path truth;
  RunOptions opt;
  TierResult result;
};

TEST_F(Truth, AMatchingTruthPassesAndIsLeftExactlyAsItWas) {
  const TreeSnapshot before = snapshot_tree(truth);
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::pass) << result.reason;
  EXPECT_EQ(result.total(Outcome::pass), 80u + 5000u); // cases only: the truth checks are not
  ASSERT_EQ(result.checks.size(), 2u);
  EXPECT_TRUE(result.checks[0].ok && result.checks[1].ok);
  EXPECT_TRUE(diff_snapshots(before, snapshot_tree(truth)).empty());
  const json r = replay_json();
  EXPECT_EQ(r["verdict"], "PASS");
  EXPECT_EQ(r["manifest_sha256"], support::sha256_file(truth / "manifest.json"));
  EXPECT_EQ(r["totals"]["zero_sign"], 0);
  EXPECT_EQ(r["totals"]["nan_payload"], 0);
  EXPECT_EQ(r["recordings"].size(), 2u);
  EXPECT_NE(tiertest::slurp(tmp / "out/delta.txt").find("sub/H100_E4M3.h5"), std::string::npos);
  EXPECT_TRUE(fs::exists(tmp / "out/delta.md"));
}

TEST_F(Truth, ZeroSignAndNanPayloadMismatchesAreCountedAndFail) {
  rewrite_synthetic([](recordings::Recording& rec) {
    rec.mma[0].expect[0] = 0x80000000u; // -0 where the chain gives +0
    rec.mma[0].expect[1] = 0x7FC00000u; // another NaN than the canonical one
    rec.mma[1].expect[3] ^= 0x10u;      // a value
  });
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::fail);
  EXPECT_EQ(result.total(Outcome::fail), 3u);
  const json r = replay_json();
  EXPECT_EQ(r["verdict"], "FAIL");
  EXPECT_EQ(r["totals"]["zero_sign"], 1);
  EXPECT_EQ(r["totals"]["nan_payload"], 1);
  EXPECT_EQ(r["totals"]["value"], 1);
  EXPECT_EQ(r["checks"]["zero_sign_is_0"], false);
  const json& syn = r["recordings"][1]; // sorted: "sub/..." < "synthetic.h5"
  EXPECT_EQ(syn["path"], "synthetic.h5");
  EXPECT_EQ(syn["mismatches"].size(), 3u);
}

TEST_F(Truth, AChangeDuringTheRunFailsEvenIfEveryCaseMatches) {
  opt.between_snapshots = [&] { tiertest::spit(truth / "sub/new-file.txt", "x"); };
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::fail);
  EXPECT_NE(result.reason.find("T2/truth_unchanged"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("added: sub/new-file.txt"), std::string::npos) << result.reason;
  EXPECT_EQ(replay_json()["snapshot"]["unchanged"], false);
}

TEST_F(Truth, ARecordingThatDiffersFromItsManifestSha256Fails) {
  write_manifest();
  json m = json::parse(tiertest::slurp(truth / "manifest.json"));
  m["recordings"][0]["sha256"] = std::string(64, '0');
  tiertest::spit(truth / "manifest.json", m.dump());
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::fail);
  EXPECT_NE(result.reason.find("differs from manifest.json"), std::string::npos) << result.reason;
}

TEST_F(Truth, APinnedManifestSha256MustMatch) {
  ::setenv("MMAEMU_TRUTH_MANIFEST_SHA256", std::string(64, 'a').c_str(), 1);
  run_truth_replay(truth, tmp / "out", opt, result);
  ::unsetenv("MMAEMU_TRUTH_MANIFEST_SHA256");
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::fail);
  EXPECT_NE(result.reason.find("not the pinned"), std::string::npos) << result.reason;
}

TEST_F(Truth, ExpectedErrorsMustBeReproducedByExactClass) {
  rewrite_synthetic([](recordings::Recording& rec) {
    rec.mma[1].preset = "sm_120"; // refused by the emulator with ValueError
    rec.mma[1].attrs["expect_error"] = "ValueError";
  });
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::pass) << result.reason;
  // The set's 40 cases are one call: its refusal is reproduced once, not 40 times.
  EXPECT_EQ(replay_json()["recordings"][1]["expected_errors_reproduced"], 1);

  rewrite_synthetic([](recordings::Recording& rec) {
    rec.mma[1].attrs["expect_error"] = "ReferenceRejectsError";
  });
  TierResult again;
  again.tier = "T2";
  run_truth_replay(truth, tmp / "out2", opt, again);
  judge_tier(again, "no case ran");
  EXPECT_EQ(again.verdict, Outcome::fail);
  EXPECT_NE(again.reason.find("expected ReferenceRejectsError, got ValueError"), std::string::npos)
      << again.reason;
}

TEST_F(Truth, OutOfScopeSetsAreListedNotCountedAsPass) {
  rewrite_synthetic([](recordings::Recording& rec) {
    rec.mma[1].attrs["scope"] = "out";
    rec.mma[1].attrs["scope_reason"] = "bias";
  });
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::pass) << result.reason;
  EXPECT_EQ(result.total(Outcome::unsupported), 40u);
  EXPECT_EQ(replay_json()["totals"]["not_applicable"], 40);
}

TEST_F(Truth, AnUnreadableRecordingIsAnError) {
  tiertest::spit(truth / "synthetic.h5", "not HDF5 at all");
  write_manifest();
  run_truth_replay(truth, tmp / "out", opt, result);
  judge_tier(result, "no case ran");
  EXPECT_EQ(result.verdict, Outcome::error);
  EXPECT_NE(result.reason.find("synthetic.h5"), std::string::npos) << result.reason;
}

TEST_F(Truth, WithoutAManifestItIsAnErrorAndNothingIsWritten) {
  fs::remove(truth / "manifest.json");
  run_truth_replay(truth, tmp / "out", opt, result);
  EXPECT_EQ(result.verdict, Outcome::error);
  EXPECT_NE(result.reason.find("manifest.json"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "out/replay.json"));
}

TEST_F(Truth, AnOutputFolderInsideTheTruthIsRefused) {
  const TreeSnapshot before = snapshot_tree(truth);
  EXPECT_THROW(run_truth_replay(truth, truth / "results", opt, result), ValueError);
  EXPECT_TRUE(diff_snapshots(before, snapshot_tree(truth)).empty());
}

TEST_F(Truth, ShardsCoverTheTruthBetweenThem) {
  std::size_t passed = 0;
  for (std::size_t k = 1; k <= 3; ++k) {
    TierResult part;
    part.tier = "T2";
    RunOptions o = opt;
    o.shard = parse_shard(std::to_string(k) + "/3");
    run_truth_replay(truth, tmp / ("out" + std::to_string(k)), o, part);
    judge_tier(part, "no case ran");
    EXPECT_EQ(part.verdict, Outcome::pass) << part.reason;
    passed += part.total(Outcome::pass); // the truth checks are checks, not cases
    EXPECT_EQ(part.checks.size(), 2u);
  }
  EXPECT_EQ(passed, 5080u);
}

TEST(TreeSnapshot, SeesSizeMtimeAdditionsAndRemovalsButNotGit) {
  tiertest::TempDir dir;
  tiertest::spit(dir / "a", "1");
  fs::create_directories(dir / ".git");
  tiertest::spit(dir / ".git/HEAD", "x");
  const TreeSnapshot s0 = snapshot_tree(dir.path());
  EXPECT_EQ(s0.size(), 1u);
  tiertest::spit(dir / ".git/HEAD", "changed");
  EXPECT_TRUE(diff_snapshots(s0, snapshot_tree(dir.path())).empty());
  tiertest::spit(dir / "a", "22");
  tiertest::spit(dir / "b", "");
  const auto d = diff_snapshots(s0, snapshot_tree(dir.path()));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].rfind("changed: a", 0), 0u);
  EXPECT_EQ(d[1], "added: b");
}

} // namespace
} // namespace mmaemu::harness
