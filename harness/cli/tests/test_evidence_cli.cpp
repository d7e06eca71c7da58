// SPDX-License-Identifier: BSD-2-Clause
// The evidence registry against the tree (every catalogue mutant and every plan decision has
// its entry), and `mmaemu evidence` / `explain` / `replay` as a user runs them: the status
// tables of docs/semantics.md are generated, a hand edit or a newer T4 log makes `evidence
// check` fail, and the statuses follow the T4 log rather than any typed text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;

namespace {

const fs::path kSource = MMAEMU_SOURCE_DIR;

mmaemu::testing::CliResult run_cli(const std::vector<std::string>& args) {
  return mmaemu::testing::run_command(MMAEMU_BIN, {}, args);
}

nlohmann::json read_json(const fs::path& p) {
  return nlohmann::json::parse(mmaemu::testing::slurp(p));
}

TEST(EvidenceRegistry, EveryCatalogueMutantBelongsToADecisionOrToAGroupThatIsNone) {
  const auto& reg = mmaemu::evidence::registry();
  std::set<std::string> in_decisions;
  for (const auto& d : reg.decisions)
    in_decisions.insert(d.mutants.begin(), d.mutants.end());
  const auto cat = read_json(kSource / "mutants" / "catalogue.json");
  std::set<std::string> ids;
  for (const auto& m : cat["mutants"]) {
    const std::string id = m["id"], group = m["group"];
    ids.insert(id);
    EXPECT_TRUE(in_decisions.count(id) || reg.not_decisions.count(group))
        << id << " (group " << group << ") is in no decision of the registry";
    EXPECT_FALSE(in_decisions.count(id) && reg.not_decisions.count(group)) << id;
  }
  for (const auto& id : in_decisions)
    EXPECT_TRUE(ids.count(id)) << "the registry names " << id << ", not in the catalogue";
}

TEST(EvidenceRegistry, EveryRecordingItNamesIsCommitted) {
  for (const auto& s : mmaemu::evidence::registry().sources) {
    if (s.kind == "hardware_recording") {
      EXPECT_TRUE(fs::is_regular_file(kSource / s.file)) << s.id << ": " << s.file;
    }
  }
}

TEST(EvidenceRegistry, TheBitequivEntryKeepsItsIdAndCoversTheMeasuredProfiles) {
  const auto* s = mmaemu::evidence::registry().source("bitequiv-h100-cublaslt-13.1.1");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->kind, "published_measurement");
  EXPECT_EQ(s->architecture, "sm_90");
  EXPECT_EQ(s->cublaslt, "13.1.1");
  EXPECT_EQ(s->modes, (std::vector<mmaemu::evidence::Mode>{mmaemu::evidence::Mode::slow}));
  EXPECT_EQ(s->profiles.size(), 2u);
  EXPECT_TRUE(s->profiles.count("h100-sxm") && s->profiles.count("h200"));
}

// A copy of the files `evidence check` reads: the registry, the extract, the catalogue, the
// page, the T4 logs of the latest date and (empty stand-ins for) the recordings.
struct TreeCopy {
  mmaemu::testing::TempDir dir{"evidence"};
  TreeCopy() {
    for (const char* rel : {"emulator/data/evidence.json", "emulator/data/evidence_t4.json",
                            "mutants/catalogue.json", "docs/semantics.md"}) {
      fs::create_directories((dir.path() / rel).parent_path());
      fs::copy_file(kSource / rel, dir.path() / rel);
    }
    const auto& t4 = mmaemu::evidence::committed_t4();
    const fs::path log = kSource / t4.log;
    fs::create_directories((dir.path() / t4.log).parent_path());
    fs::copy_file(log, dir.path() / t4.log);
    for (const auto& s : mmaemu::evidence::registry().sources) {
      if (s.kind == "hardware_recording") {
        fs::create_directories((dir.path() / s.file).parent_path());
        mmaemu::testing::spit(dir.path() / s.file, "");
      }
    }
  }
  fs::path operator/(const std::string& rel) const { return dir.path() / rel; }
  std::string src() const { return dir.path().string(); }
};

TEST(EvidenceCli, CheckPassesOnTheCommittedTree) {
  const auto r = run_cli({"evidence", "check", "--source-dir", kSource.string()});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("are current"));
}

TEST(EvidenceCli, AHandEditedStatusFailsTheCheckAndWriteRestoresIt) {
  TreeCopy tree;
  ASSERT_EQ(run_cli({"evidence", "check", "--source-dir", tree.src()}).status, 0);
  // Claim the E5M2 subnormal decoding confirmed by hand.
  const fs::path page = tree / "docs/semantics.md";
  std::string doc = mmaemu::testing::slurp(page);
  const std::string row = "`model.e5m2_subnormal_decoding`";
  const auto at = doc.find(row);
  ASSERT_NE(at, std::string::npos);
  const auto cell = doc.find("**unverified**", at);
  ASSERT_NE(cell, std::string::npos);
  doc.replace(cell, std::string("**unverified**").size(), "**confirmed by Ada_E5M2.h5**");
  mmaemu::testing::spit(page, doc);
  const auto bad = run_cli({"evidence", "check", "--source-dir", tree.src()});
  EXPECT_EQ(bad.status, 1) << bad.all();
  EXPECT_THAT(bad.err, HasSubstr("docs/semantics.md"));
  ASSERT_EQ(run_cli({"evidence", "write", "--source-dir", tree.src()}).status, 0);
  EXPECT_EQ(mmaemu::testing::slurp(page), mmaemu::testing::slurp(kSource / "docs/semantics.md"));
}

TEST(EvidenceCli, ANewerT4LogChangesTheComputedStatusOnlyThroughWrite) {
  TreeCopy tree;
  // A later T4 run in which T1 kills the subnormal-decoding mutant. It is written with the
  // ids of the logs before 2026-12-06 (model.* for instruction_model.*), which the evidence
  // reads in today's ids: the extract names instruction_model.e5m2_subnormal_binade.
  const auto& t4 = mmaemu::evidence::committed_t4();
  nlohmann::json log = read_json(kSource / t4.log);
  log["durations"]["finished_utc"] = "2999-01-01T00:00:00Z";
  for (auto& m : log["details"]["mutants"]) {
    const std::string id = m["id"];
    if (id.rfind("instruction_model.", 0) == 0)
      m["id"] = "model." + id.substr(std::string("instruction_model.").size());
    if (m["id"] == "model.e5m2_subnormal_binade")
      m["killed_by"] = "T1";
  }
  fs::create_directories(tree / "docs/validation_logs/2999-01-01");
  mmaemu::testing::spit(tree / "docs/validation_logs/2999-01-01/mutants.json", log.dump());
  const auto stale = run_cli({"evidence", "check", "--source-dir", tree.src()});
  EXPECT_EQ(stale.status, 1) << stale.all();
  EXPECT_THAT(stale.err, HasSubstr("evidence_t4.json"));
  ASSERT_EQ(run_cli({"evidence", "write", "--source-dir", tree.src()}).status, 0);
  const auto extract = read_json(tree / "emulator/data/evidence_t4.json");
  EXPECT_EQ(extract["log"], "docs/validation_logs/2999-01-01/mutants.json");
  EXPECT_EQ(extract["mutants"]["instruction_model.e5m2_subnormal_binade"]["by"], "T1");
  EXPECT_FALSE(extract["mutants"].contains("model.e5m2_subnormal_binade"));
  EXPECT_EQ(extract["mutants"]["instruction_model.frac_14"]["by"], "T1");
  const std::string doc = mmaemu::testing::slurp(tree / "docs/semantics.md");
  const auto at = doc.find("`model.e5m2_subnormal_decoding`");
  ASSERT_NE(at, std::string::npos);
  const std::string row = doc.substr(at, doc.find('\n', at) - at);
  EXPECT_THAT(row, HasSubstr("**confirmed by Ada_E5M2.h5, H100_E5M2.h5**"));
}

TEST(EvidenceCli, WriteRefusesARegistryThatLeavesAMutantOut) {
  TreeCopy tree;
  nlohmann::json cat = read_json(tree / "mutants/catalogue.json");
  nlohmann::json extra = cat["mutants"][4];
  const std::string id = extra["group"].get<std::string>() + ".unregistered_decision";
  extra["id"] = id;
  cat["mutants"].push_back(extra);
  mmaemu::testing::spit(tree / "mutants/catalogue.json", cat.dump(2));
  const auto r = run_cli({"evidence", "write", "--source-dir", tree.src()});
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr(id));
}

TEST(EvidenceCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli({"evidence"}).status, 2);
  mmaemu::testing::TempDir empty("evidence-empty");
  const auto r = run_cli({"evidence", "check", "--source-dir", empty.path().string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--source-dir"));
  EXPECT_EQ(run_cli({"evidence", "show", "--profile", "nope"}).status, 2);
}

TEST(EvidenceCli, ShowListsEveryDecisionOfAProfileInBothModes) {
  mmaemu::testing::TempDir dir("evidence-show");
  const auto json = (dir / "show.json").string();
  const auto r = run_cli({"evidence", "show", "--profile", "h100-sxm", "--json", json});
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("decision    GEMM plan.split_layout: consistent with bitequiv "
                               "(H100, cuBLASLt 13.1.1)"));
  const auto j = read_json(json);
  EXPECT_EQ(j["profile"], "h100-sxm");
  EXPECT_TRUE(j["modes"].contains("slow") && j["modes"].contains("fast"));
}

TEST(EvidenceCli, ExplainPrintsEachDecisionWithItsStatusAndASummaryPerLevel) {
  mmaemu::testing::TempDir dir("evidence-explain");
  const auto json = (dir / "plan.json").string();
  const auto r = run_cli({"explain", "64", "32", "1920", "--splitk", "2,contiguous", "--profile",
                          "h100-sxm", "--out", "bfloat16", "--json", json});
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("evidence    GEMM level: 6 consistent with bitequiv (H100, "
                               "cuBLASLt 13.1.1), 2 unverified"));
  EXPECT_THAT(r.out, HasSubstr("evidence    instruction level: "));
  EXPECT_THAT(r.out, HasSubstr("decision    GEMM plan.split_layout: consistent with bitequiv"));
  EXPECT_THAT(r.out, HasSubstr("decision    instruction model.frac: confirmed by H100_E4M3.h5"));
  const auto j = read_json(json);
  ASSERT_TRUE(j.contains("evidence"));
  EXPECT_EQ(j["evidence"]["summary"].size(), 3u);
  bool found = false;
  for (const auto& d : j["evidence"]["decisions"]) {
    if (d["id"] == "plan.split_layout") {
      found = true;
      EXPECT_EQ(d["status"], "consistent");
      EXPECT_EQ(d["sources"], nlohmann::json::array({"bitequiv-h100-cublaslt-13.1.1"}));
    }
  }
  EXPECT_TRUE(found);
  // The default profile (cuBLASLt 12.8.3, not measured): nothing is consistent there.
  const auto hopper = run_cli({"explain", "64", "32", "1920", "--splitk", "2,contiguous"});
  ASSERT_EQ(hopper.status, 0) << hopper.all();
  EXPECT_THAT(hopper.out, HasSubstr("evidence    GEMM level: 8 unverified"));
  EXPECT_THAT(hopper.out, Not(HasSubstr("consistent with")));
}

TEST(EvidenceCli, ReplayCountsTheEvidenceOfWhatItReplayed) {
  mmaemu::testing::TempDir dir("evidence-replay");
  const auto json = (dir / "replay.json").string();
  const auto r = run_cli(
      {"replay", (kSource / "recordings/data/public/H100_E4M3.h5").string(), "--json", json});
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("evidence    preset hopper: instruction level: "));
  EXPECT_THAT(r.out, HasSubstr("confirmed by H100_E4M3.h5"));
  const auto j = read_json(json);
  ASSERT_EQ(j["evidence"].size(), 1u);
  EXPECT_EQ(j["evidence"][0]["preset"], "hopper");
  EXPECT_GT(j["evidence"][0]["confirmed"].get<int>(), 0);
}

} // namespace
