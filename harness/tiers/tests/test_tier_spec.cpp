// SPDX-License-Identifier: BSD-2-Clause
// Tier files: the committed declarations load, and a bad file is a clear error naming it.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "tier_test_support.hpp"

namespace mmaemu::harness {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

const char* kGood = R"({
  "schema": "mmaemu-tier/1",
  "name": "T9",
  "title": "test",
  "purpose": "a tier of the tests",
  "when": "never",
  "budget": {"seconds": 10},
  "run": {"kind": "replay"},
  "needs": {}
}
)";

TEST(TierSpec, EveryCommittedTierLoadsInTierOrder) {
  const auto tiers = load_tiers(tiertest::committed_tiers());
  std::vector<std::string> names;
  for (const auto& t : tiers)
    names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"T0", "T1", "T1s", "T2", "T3", "T3p", "T4", "T4g",
                                             "T6", "T6g", "T7"}));
  for (const auto& t : tiers) {
    EXPECT_FALSE(t.purpose.empty()) << t.name;
    EXPECT_GT(t.budget_seconds, 0) << t.name;
    EXPECT_EQ(t.file_sha256.size(), 64u) << t.name;
  }
}

TEST(TierSpec, CommittedTiersDeclareTheSeedsDataAndDevices) {
  EXPECT_EQ(tiertest::committed_tier("T0").run["labels"], nlohmann::json::array({"unit"}));
  const auto t2 = tiertest::committed_tier("T2");
  ASSERT_EQ(t2.env.size(), 1u);
  EXPECT_EQ(t2.env[0].name, "MMAEMU_TRUTH_DIR");
  const auto t3 = tiertest::committed_tier("T3");
  ASSERT_EQ(t3.devices.size(), 1u);
  EXPECT_EQ(t3.devices[0].kind, "cuda");
  EXPECT_EQ(tiertest::committed_tier("T3p").devices.at(0).name, "RTX 4060");
  EXPECT_EQ(tiertest::committed_tier("T1").budget_data_mib.value_or(0), 20.0);
  EXPECT_EQ(tiertest::committed_tier("T7").kind, "package");
}

TEST(TierSpec, AFileThatDoesNotParseIsNamedWithLineAndColumn) {
  tiertest::TempDir dir;
  tiertest::spit(dir / "T9.json", "{\n  \"schema\": \"mmaemu-tier/1\",\n  \"name\": T9\n}\n");
  const std::string m = message_of([&] { load_tier_file(dir / "T9.json"); });
  EXPECT_NE(m.find("T9.json:3:"), std::string::npos) << m;
  EXPECT_THROW(load_tiers(dir.path()), TierFileError);
}

TEST(TierSpec, SchemaViolationsNameTheKey) {
  tiertest::TempDir dir;
  std::string text = kGood;
  tiertest::spit(dir / "T9.json", text);
  EXPECT_EQ(load_tier_file(dir / "T9.json").kind, "replay");

  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = kGood;
    t.replace(t.find(from), from.size(), to);
    tiertest::spit(dir / "T9.json", t);
    return message_of([&] { load_tier_file(dir / "T9.json"); });
  };
  EXPECT_NE(with("\"replay\"", "\"pytest\"").find("key 'run.kind': is 'pytest'"),
            std::string::npos);
  EXPECT_NE(with("\"name\": \"T9\"", "\"name\": \"T8\"").find("must equal the file's stem"),
            std::string::npos);
  EXPECT_NE(with("\"when\"", "\"whne\"").find("key 'when': missing"), std::string::npos);
  EXPECT_NE(with("\"needs\": {}", "\"needs\": {\"gpu\": true}").find("key 'needs.gpu': not a key"),
            std::string::npos);
  EXPECT_NE(with("{\"seconds\": 10}", "{\"seconds\": -1}").find("'budget.seconds'"),
            std::string::npos);
  EXPECT_NE(with("\"needs\": {}", "\"needs\": {\"devices\": [{\"kind\": \"tpu\", \"why\": \"x\"}]}")
                .find("only 'cuda'"),
            std::string::npos);
}

TEST(TierSpec, AnUnknownTierListsTheKnownOnes) {
  const auto tiers = load_tiers(tiertest::committed_tiers());
  const std::string m = message_of([&] { find_tier(tiers, "T5"); });
  EXPECT_NE(m.find("'T5'"), std::string::npos);
  EXPECT_NE(m.find("T0, T1, T1s"), std::string::npos) << m;
  EXPECT_THROW(load_tiers(tiertest::committed_tiers() / "absent"), TierFileError);
}

TEST(Shard, ParsesKOverNAndRejectsTheRestNamingTheOption) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  EXPECT_TRUE(s.selects(1));
  EXPECT_TRUE(s.selects(6));
  EXPECT_FALSE(s.selects(2));
  for (const char* bad : {"0/4", "5/4", "1/0", "x/4", "1-4", "1/", "/4", "-1/4", "1/4x"}) {
    const std::string m = message_of([&] { parse_shard(bad); });
    EXPECT_NE(m.find("--shard: '" + std::string(bad) + "'"), std::string::npos) << m;
  }
}

// Hostile tier files: every one ends in a TierFileError of one line that names the file and
// the key, never a raw nlohmann exception, a crash, a hang or an unbounded message.

// The message of loading `text` as dir/<name>.json.
std::string load_message(const tiertest::TempDir& dir, const std::string& text,
                         const std::string& name = "T9") {
  tiertest::spit(dir / (name + ".json"), text);
  try {
    load_tier_file(dir / (name + ".json"));
  } catch (const TierFileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a TierFileError) ") + e.what();
  }
  return "(no exception)";
}

std::string replaced(std::string t, const std::string& from, const std::string& to) {
  const auto p = t.find(from);
  if (p == std::string::npos)
    throw std::runtime_error("no '" + from + "' in the tier text");
  return t.replace(p, from.size(), to);
}

TEST(TierSpecHostile, TypeErrorsNameFileAndKeyNotTheJsonLibrary) {
  tiertest::TempDir dir;
  const std::string file = (dir / "T9.json").string();
  EXPECT_EQ(load_message(dir, replaced(kGood, "{\"seconds\": 10}", "{\"seconds\": \"10\"}")),
            file + ": key 'budget.seconds': expected a number, got string");
  EXPECT_EQ(load_message(dir, replaced(kGood, "\"title\": \"test\"", "\"title\": 7")),
            file + ": key 'title': expected a string, got integer 7");
  EXPECT_EQ(load_message(dir, replaced(kGood, "\"needs\": {}", "\"needs\": []")),
            file + ": key 'needs': expected an object, got array");
  EXPECT_EQ(load_message(dir, "[1, 2]"), file + ": the file must hold a JSON object, not array");
  EXPECT_EQ(load_message(dir, replaced(kGood, "{\"seconds\": 10}", "{\"seconds\": 1e999}")),
            file + ": not valid JSON (number overflow parsing '1e999')");
  for (const char* bad : {"-1", "1e12", "true", "null", "[]"}) {
    const std::string m = load_message(
        dir, replaced(kGood, "{\"seconds\": 10}", std::string("{\"seconds\": ") + bad + "}"));
    EXPECT_EQ(m.rfind(file + ": key 'budget.seconds': expected a number", 0), 0u) << m;
  }
}

TEST(TierSpecHostile, RunParametersAreTypedForEveryKind) {
  tiertest::TempDir dir;
  auto run = [&](const std::string& run_json) {
    return load_message(dir, replaced(kGood, "{\"kind\": \"replay\"}", run_json));
  };
  // Before: accepted here, then nlohmann's type_error.302 escaped from the runner.
  EXPECT_NE(run(R"({"kind": "ctest", "labels": ["unit"], "jobs": "2"})")
                .find("key 'run.jobs': expected an integer, got string"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "ctest", "labels": ["unit"], "jobs": 2.5})").find("key 'run.jobs'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "ctest", "labels": ["unit"], "jobs": -1})").find("key 'run.jobs'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "ctest", "labels": ["unit"], "timeout_s": "x"})")
                .find("key 'run.timeout_s': expected a number, got string"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "ctest", "labels": [1]})").find("key 'run.labels[0]'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "ctest", "labels": ["a|.*"]})").find("not a ctest label"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "ctest"})").find("key 'run.labels': missing"), std::string::npos);
  EXPECT_NE(run(R"({"kind": "command", "argv": []})").find("key 'run.argv'"), std::string::npos);
  EXPECT_NE(run(R"({"kind": "command", "argv": ["x", 2]})").find("key 'run.argv[1]'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "command", "argv": ["x"], "figures": {"r": {"target": "9"}}})")
                .find("key 'run.figures.r.target'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "command", "argv": ["x"], "targets": {"r": {"better": "up"}}})")
                .find("key 'run.targets.r.better'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "truth", "env": "A B"})").find("key 'run.env'"), std::string::npos);
  EXPECT_NE(run(R"({"kind": "package", "consumer": "../../etc"})").find("key 'run.consumer'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "package", "timeout_s": null})").find("key 'run.timeout_s'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "mutants", "mutant_tier": "tpu"})").find("key 'run.mutant_tier'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "mutants", "exclude_tests": "^A\\."})").find("key 'run.exclude_why'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "mutants", "exclude_tests": "(", "exclude_why": "w"})")
                .find("key 'run.exclude_tests': is not a regular expression"),
            std::string::npos);
  // first_tests: each key a mutant group, each value a regex, with its reason.
  EXPECT_NE(run(R"({"kind": "mutants", "first_tests": {"replay": "^Replay"}})")
                .find("key 'run.first_tests_why'"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "mutants", "first_tests": {"replays": "^R"}, "first_tests_why": "w"})")
                .find("'replays', which is not a mutant group"),
            std::string::npos);
  EXPECT_NE(run(R"({"kind": "mutants", "first_tests": {"replay": "("}, "first_tests_why": "w"})")
                .find("'replay' must map to a regular expression"),
            std::string::npos);
  EXPECT_EQ(
      run(R"({"kind": "mutants", "first_tests": {"replay": "^Replay"}, "first_tests_why": "w"})"),
      "(no exception)");
  // The committed kinds' parameters load.
  for (
      const char* good :
      {R"({"kind": "ctest", "labels": ["unit"], "exclude_labels": ["slow"], "jobs": 1, "timeout_s": 60})",
       R"({"kind": "truth", "env": "MMAEMU_TRUTH_DIR"})",
       R"({"kind": "command", "argv": ["{mmaemu}", "info"], "result": "{out}/r.json", "timeout_s": 5,
            "figures": {"ratio": {"unit": "x", "target": 20, "better": "lower"}}})",
       R"({"kind": "package", "generator": "TGZ", "consumer": "examples/consumer", "timeout_s": 900})",
       R"({"kind": "mutants", "catalogue": "mutants/catalogue.json", "mutant_tier": "gpu",
            "mutant_timeout_s": 60, "exclude_tests": "^A\\.", "exclude_why": "w"})"}) {
    EXPECT_EQ(run(good), "(no exception)") << good;
  }
}

TEST(TierSpecHostile, UnknownKeysAreErrorsAtEveryLevel) {
  tiertest::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\"when\": \"never\",", "\"when\": \"never\", \"whatever\": 1,"},
      {"{\"seconds\": 10}", "{\"seconds\": 10, \"minutes\": 1}"},
      {"{\"kind\": \"replay\"}", "{\"kind\": \"replay\", \"labels\": [\"unit\"]}"},
      {"\"needs\": {}",
       "\"needs\": {\"env\": [{\"name\": \"X\", \"what\": \"y\", \"why\": \"z\"}]}"},
      {"\"needs\": {}",
       "\"needs\": {\"devices\": [{\"kind\": \"cuda\", \"why\": \"x\", \"count\": 2}]}"},
  };
  const std::vector<std::string> keys = {"whatever", "budget.minutes", "run.labels",
                                         "needs.env[0].why", "needs.devices[0].count"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string m = load_message(dir, replaced(kGood, cases[i].first, cases[i].second));
    EXPECT_NE(m.find("key '" + keys[i] + "': not a key"), std::string::npos) << m;
  }
}

TEST(TierSpecHostile, TierNamesMustBeSafeInFileNames) {
  tiertest::TempDir dir;
  // The name equals the file's stem but would not be a safe file name part.
  for (const std::string& name : {std::string(".."), std::string("T\x01"), std::string("-T"),
                                  std::string(40, 'T'), std::string("T 9")}) {
    nlohmann::json j = nlohmann::json::parse(kGood);
    j["name"] = name;
    const std::string m = load_message(dir, j.dump(), name);
    EXPECT_NE(m.find("key 'name'"), std::string::npos) << m;
    EXPECT_EQ(m.find('\x01'), std::string::npos) << "control characters are escaped";
  }
  // A tier name with a very long number sorts without overflow.
  tiertest::TempDir many;
  for (const std::string& name : {std::string("T99999999999999999999999"), std::string("T2")}) {
    nlohmann::json j = nlohmann::json::parse(kGood);
    j["name"] = name;
    tiertest::spit(many / (name + ".json"), j.dump());
  }
  std::vector<TierSpec> tiers;
  ASSERT_NO_THROW(tiers = load_tiers(many.path()));
  EXPECT_EQ(tiers.at(0).name, "T2");
}

TEST(TierSpecHostile, FifosAndDevicesAreRefusedWithoutBlocking) {
  tiertest::TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "T8.json").c_str(), 0600), 0);
  const std::string m = message_of([&] { load_tier_file(dir / "T8.json"); });
  EXPECT_NE(m.find("T8.json"), std::string::npos) << m;
  EXPECT_NE(m.find("FIFO"), std::string::npos) << m;
  // In a folder: a *.json that is not a regular file is refused by name, not skipped.
  tiertest::spit(dir / "T9.json", kGood);
  const std::string all = message_of([&] { load_tiers(dir.path()); });
  EXPECT_NE(all.find("T8.json"), std::string::npos) << all;
  std::filesystem::remove(dir / "T8.json");
  std::filesystem::create_symlink("/dev/zero", dir / "T7.json");
  const std::string z = message_of([&] { load_tier_file(dir / "T7.json"); });
  EXPECT_NE(z.find("character device"), std::string::npos) << z;
}

TEST(TierSpecHostile, MessagesAreOneBoundedLine) {
  tiertest::TempDir dir;
  // A long unterminated string: the parser's echo of it is left out.
  const std::string open = "{\"schema\": \"" + std::string(1 << 20, 'x');
  const std::string m1 = load_message(dir, open);
  EXPECT_LT(m1.size(), 600u) << m1.substr(0, 600);
  EXPECT_NE(m1.find("T9.json:1:"), std::string::npos) << m1.substr(0, 600);
  // A long, control-character-laden value echoed back.
  const std::string m2 = load_message(
      dir, replaced(kGood, "\"mmaemu-tier/1\"", "\"\\u001b[31m" + std::string(100000, 'y') + "\""));
  EXPECT_LT(m2.size(), 600u);
  EXPECT_EQ(m2.find('\x1b'), std::string::npos);
  EXPECT_EQ(m2.find('\n'), std::string::npos);
  // Deep nesting is refused while parsing (nothing recursive ever sees it).
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string m3 =
      load_message(dir, replaced(kGood, "\"needs\": {}", "\"needs\": {}, \"notes\": " + deep));
  EXPECT_NE(m3.find("nested deeper than"), std::string::npos) << m3.substr(0, 300);
}

} // namespace
} // namespace mmaemu::harness
