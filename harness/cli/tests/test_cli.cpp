// SPDX-License-Identifier: BSD-2-Clause
// The `mmaemu` command line, run as a separate process: exit codes (0 ok, 1 mismatch,
// 2 usage or bad input), the replay summary and mismatch listing, JSON reports, and imports
// that leave no partial files.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::recordings::read_recording;
using mmaemu::recordings::Recording;
using mmaemu::recordings::write_recording;
using testing::HasSubstr;
using testsupport::TempDir;

namespace {

using RunResult = mmaemu::testing::CliResult;

// Runs the built mmaemu with `args`, capturing stdout and stderr separately; mmaemu's
// variables are cleared (tests/support/cli_run.hpp).
RunResult run_cli(const std::vector<std::string>& args) {
  return mmaemu::testing::run_command(MMAEMU_BIN, {}, args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    out.push_back(line);
  return out;
}

std::vector<std::string> nonempty_lines(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : lines_of(text))
    if (l.find_first_not_of(" \t\r") != std::string::npos)
      out.push_back(l);
  return out;
}

std::string last_line(const std::string& text) {
  const auto lines = nonempty_lines(text);
  return lines.empty() ? std::string() : lines.back();
}

std::size_t count_containing(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (const auto& l : lines_of(text))
    if (l.find(needle) != std::string::npos)
      ++n;
  return n;
}

fs::path committed(const std::string& name) {
  return fs::path(MMAEMU_SOURCE_DIR) / "recordings" / "data" / "public" / name;
}

// The committed Ada recording with the expect bits of `altered` cases changed (last bit).
fs::path altered_recording(const TempDir& dir, std::size_t altered, std::set<std::string>* ids) {
  Recording rec = read_recording(committed("Ada_E4M3.h5"));
  auto& b = rec.mma.at(0);
  for (std::size_t j = 0; j < altered; ++j) {
    const std::size_t i = 17 + 331 * j; // spread over the set
    b.expect.at(i) ^= 1u;
    if (ids)
      ids->insert(b.ids[i]);
  }
  const fs::path file = dir / "altered.h5";
  write_recording(file, rec);
  return file;
}

// The committed H100 recording with its set marked out of scope and every expected bit
// flipped: if anything were replayed, every case would fail.
fs::path out_of_scope_recording(const TempDir& dir) {
  Recording rec = read_recording(committed("H100_E4M3.h5"));
  auto& b = rec.mma.at(0);
  for (auto& e : b.expect)
    e = ~e;
  b.attrs["scope"] = "out";
  b.attrs["scope_reason"] = "synthetic: not a hardware claim";
  const fs::path file = dir / "scoped.h5";
  write_recording(file, rec);
  return file;
}

} // namespace

// The four public sets (docs/recordings.md), 5000 cases each.
TEST(Cli, ReplayOfCommittedRecordingsPassesEveryCase) {
  const auto r =
      run_cli({"replay", committed("Ada_E4M3.h5").string(), committed("Ada_E5M2.h5").string(),
               committed("H100_E4M3.h5").string(), committed("H100_E5M2.h5").string()});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(last_line(r.out), "20000 passed, 0 failed") << r.all();
}

TEST(Cli, ReplayWithAlteredExpectBitsExitsOneAndListsTenMismatches) {
  TempDir dir("cli");
  std::set<std::string> altered_ids;
  const fs::path file = altered_recording(dir, 12, &altered_ids);
  const auto r = run_cli({"replay", file.string()});
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_EQ(last_line(r.out), "4988 passed, 12 failed") << r.all();
  EXPECT_EQ(count_containing(r.out, "expected 0x"), 10u) << r.out;
  EXPECT_EQ(count_containing(r.out, "actual   0x"), 10u) << r.out;
  std::size_t listed = 0;
  for (const auto& l : lines_of(r.out)) {
    const auto pos = l.find("FAIL ");
    if (pos == std::string::npos)
      continue;
    ++listed;
    const std::string rest = l.substr(pos + 5);
    const std::string id = rest.substr(0, rest.find(' '));
    EXPECT_TRUE(altered_ids.count(id)) << "listed a case that was not altered: " << l;
  }
  EXPECT_EQ(listed, 10u) << r.out;
}

TEST(Cli, ReplayJsonReportHasTheCounts) {
  TempDir dir("cli");
  const fs::path file = altered_recording(dir, 12, nullptr);
  const fs::path json_path = dir / "report.json";
  const auto r = run_cli({"replay", file.string(), "--json", json_path.string()});
  EXPECT_EQ(r.status, 1) << r.all();
  ASSERT_TRUE(fs::is_regular_file(json_path)) << r.all();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(testsupport::read_text(json_path)));
  EXPECT_EQ(j.at("passed").get<std::size_t>(), 4988u);
  EXPECT_EQ(j.at("failed").get<std::size_t>(), 12u);
  EXPECT_EQ(j.at("errors").get<std::size_t>(), 0u);
  EXPECT_EQ(j.at("verdict").get<std::string>(), "FAIL");
  ASSERT_EQ(j.at("sets").size(), 1u);
  EXPECT_EQ(j["sets"][0].at("cases").get<std::size_t>(), 5000u);
  EXPECT_EQ(j["sets"][0].at("not_passed").size(), 12u); // all of them, not only the first 10
  // Only the report is left beside the recording: no temporary file.
  EXPECT_EQ(testsupport::entries(dir.path()),
            (std::vector<std::string>{"altered.h5", "report.json"}));
}

TEST(Cli, ReplayJsonReportOfPassingRecordings) {
  TempDir dir("cli");
  const fs::path json_path = dir / "ok.json";
  const auto r = run_cli({"replay", committed("Ada_E4M3.h5").string(),
                          committed("Ada_E5M2.h5").string(), committed("H100_E4M3.h5").string(),
                          committed("H100_E5M2.h5").string(), "--json", json_path.string()});
  EXPECT_EQ(r.status, 0) << r.all();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(testsupport::read_text(json_path)));
  EXPECT_EQ(j.at("passed").get<std::size_t>(), 20000u);
  EXPECT_EQ(j.at("failed").get<std::size_t>(), 0u);
  EXPECT_EQ(j.at("verdict").get<std::string>(), "PASS");
  EXPECT_EQ(j.at("sets").size(), 4u);
}

TEST(Cli, ReplayOfMissingFileExitsTwoAndNamesIt) {
  TempDir dir("cli");
  const fs::path file = dir / "no_such_recording.h5";
  const auto r = run_cli({"replay", file.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr(file.string()));
}

TEST(Cli, ReplayOfTruncatedFileExitsTwoAndNamesIt) {
  TempDir dir("cli");
  const std::string bytes = testsupport::read_text(committed("H100_E4M3.h5"));
  const fs::path file = dir / "truncated.h5";
  testsupport::write_text(file, bytes.substr(0, bytes.size() / 2));
  const auto r = run_cli({"replay", file.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr(file.string()));
}

TEST(Cli, ReplayOfAnOutOfScopeSetTestsNothingAndExitsFour) {
  TempDir dir("cli");
  const fs::path file = out_of_scope_recording(dir);
  const fs::path json_path = dir / "scoped.json";
  const auto r = run_cli({"replay", file.string(), "--json", json_path.string()});
  EXPECT_EQ(r.status, 4) << r.all();
  EXPECT_EQ(last_line(r.out), "0 passed, 0 failed, 5000 unsupported") << r.all();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(testsupport::read_text(json_path))) << r.all();
  EXPECT_EQ(j.at("verdict").get<std::string>(), "UNSUPPORTED");
  EXPECT_EQ(j.at("passed").get<std::size_t>(), 0u);
  EXPECT_EQ(j.at("failed").get<std::size_t>(), 0u);
  EXPECT_EQ(j.at("unsupported").get<std::size_t>(), 5000u);
  ASSERT_EQ(j.at("sets").size(), 1u);
  EXPECT_EQ(j["sets"][0].at("scope").get<std::string>(), "out");
  EXPECT_THAT(j["sets"][0]["not_passed"][0].at("message").get<std::string>(),
              HasSubstr("synthetic: not a hardware claim"));
}

// The set is one call: its refusal is judged once (the other 4999 cases are the same call).
TEST(Cli, ReplayOfAnExpectedErrorSetPassesOnlyOnThatErrorClass) {
  TempDir dir("cli");
  Recording rec = read_recording(committed("Ada_E4M3.h5"));
  rec.mma.at(0).preset = "sm_120"; // refused by the emulator with ValueError
  rec.mma.at(0).attrs["expect_error"] = "ValueError";
  write_recording(dir / "refused.h5", rec);
  const auto ok = run_cli({"replay", (dir / "refused.h5").string()});
  EXPECT_EQ(ok.status, 0) << ok.all();
  EXPECT_EQ(last_line(ok.out), "1 passed, 0 failed, 4999 unsupported") << ok.all();

  rec.mma.at(0).attrs["expect_error"] = "ReferenceRejectsError";
  write_recording(dir / "other.h5", rec);
  const auto bad = run_cli({"replay", (dir / "other.h5").string()});
  EXPECT_EQ(bad.status, 1) << bad.all();
  EXPECT_EQ(last_line(bad.out), "0 passed, 1 failed, 4999 unsupported") << bad.all();
  EXPECT_THAT(bad.out, HasSubstr("expected ReferenceRejectsError, got ValueError"));
}

TEST(Cli, ReplayJsonRefusesToOverwriteAnInputRecording) {
  TempDir dir("cli");
  const fs::path file = altered_recording(dir, 3, nullptr);
  const std::string before = testsupport::read_text(file);
  const auto r = run_cli(
      {"replay", committed("H100_E4M3.h5").string(), file.string(), "--json", file.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--json"));
  EXPECT_EQ(nonempty_lines(r.err).size(), 1u) << r.err;
  EXPECT_EQ(testsupport::read_text(file), before); // the recording is untouched
  EXPECT_EQ(testsupport::entries(dir.path()), std::vector<std::string>{"altered.h5"});
  // The same file under another name (a hard link) is the same input.
  fs::create_hard_link(file, dir / "link.json");
  const auto r2 = run_cli({"replay", file.string(), "--json", (dir / "link.json").string()});
  EXPECT_EQ(r2.status, 2) << r2.all();
  EXPECT_EQ(testsupport::read_text(file), before);
}

TEST(Cli, ReplayJsonRefusesASpecialFileOrAFolder) {
  TempDir dir("cli");
  for (const std::string& out : {std::string("/dev/null"), dir.path().string()}) {
    const auto r = run_cli({"replay", committed("Ada_E4M3.h5").string(), "--json", out});
    EXPECT_EQ(r.status, 2) << out << ": " << r.all();
    EXPECT_THAT(r.err, HasSubstr("--json")) << out;
    EXPECT_EQ(r.out.find("passed"), std::string::npos) << "replayed before refusing: " << r.out;
  }
}

TEST(Cli, ReplayReportsAnUnreadableFileAndStillReplaysTheOthers) {
  TempDir dir("cli");
  const fs::path broken = dir / "broken.h5";
  testsupport::write_text(broken, "this is not HDF5");
  const fs::path missing = dir / "missing.h5";
  const fs::path json_path = dir / "r.json";
  const auto r =
      run_cli({"replay", committed("Ada_E4M3.h5").string(), broken.string(), missing.string(),
               committed("H100_E4M3.h5").string(), "--json", json_path.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_EQ(last_line(r.out), "10000 passed, 0 failed, 2 unreadable") << r.all();
  // One line on stderr per unreadable file, naming it.
  const auto err = nonempty_lines(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_THAT(err[0], HasSubstr(broken.string()));
  EXPECT_THAT(err[0], HasSubstr("ERROR"));
  EXPECT_THAT(err[1], HasSubstr(missing.string()));
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(testsupport::read_text(json_path))) << r.all();
  EXPECT_EQ(j.at("verdict").get<std::string>(), "ERROR");
  EXPECT_EQ(j.at("passed").get<std::size_t>(), 10000u);
  EXPECT_EQ(j.at("sets").size(), 2u);
  ASSERT_EQ(j.at("unreadable").size(), 2u);
  EXPECT_EQ(j["unreadable"][0].at("path").get<std::string>(), broken.string());
}

TEST(Cli, ReplayWithAnUnavailableBackendExitsFourAndAnUnknownOneTwo) {
  for (const char* b : {"cuda", "cuda:v4"}) {
    const auto r = run_cli({"replay", committed("Ada_E4M3.h5").string(), "--backend", b});
    EXPECT_EQ(r.status, 4) << r.all();
    EXPECT_THAT(r.err, HasSubstr("BackendUnavailableError"));
    EXPECT_THAT(r.err, HasSubstr(b));
  }
  const auto r = run_cli({"replay", committed("Ada_E4M3.h5").string(), "--backend", "gpu9"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("gpu9"));
}

// A gemm_call whose description points past its storage (offset 2^63-1) makes its file
// unreadable (exit 2, one line naming the file, call and key); the other files still replay.
TEST(Cli, ReplayRefusesAFileWithAMalformedCallDescriptionAndReplaysTheOthers) {
  TempDir dir("cli");
  Recording rec;
  mmaemu::recordings::GemmCall gc;
  gc.id = "crafted/0";
  const nlohmann::json view = {{"dtype", "float8_e4m3fn"},
                               {"shape", {1, 16}},
                               {"strides", {16, 1}},
                               {"offset", 9223372036854775807LL}};
  nlohmann::json call = {
      {"input", view},
      {"mat2", {{"dtype", "float8_e4m3fn"}, {"shape", {16, 16}}, {"strides", {1, 16}}}},
      {"scale_a", {{"dtype", "float32"}, {"shape", nlohmann::json::array()}}},
      {"scale_b", {{"dtype", "float32"}, {"shape", nlohmann::json::array()}}}};
  gc.call_json = call.dump();
  gc.input_storage.assign(16, 0x38);
  gc.mat2_storage.assign(256, 0x38);
  gc.outputs = {{"fp32",
                 mmaemu::Format::fp32,
                 true,
                 "1",
                 {1, 16},
                 std::vector<std::uint32_t>(16, 0x41800000u),
                 ""}};
  rec.gemm_call.push_back({"crafted", {gc}, {}});
  const fs::path bad = dir / "crafted.h5";
  write_recording(bad, rec);
  const auto r = run_cli({"replay", bad.string(), committed("H100_E4M3.h5").string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_EQ(last_line(r.out), "5000 passed, 0 failed, 1 unreadable") << r.all();
  const auto err = nonempty_lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_THAT(err[0], HasSubstr(bad.string()));
  EXPECT_THAT(err[0], HasSubstr("crafted/0"));
  EXPECT_THAT(err[0], HasSubstr("key 'input'"));
}

TEST(Cli, ImportPublicWritesARecordingThatReplays) {
  TempDir dir("cli");
  testsupport::SetSpec spec;
  spec.gpu = "H200";
  spec.fmt_a = spec.fmt_b = "E5M2";
  spec.n = 50;
  const auto set = testsupport::write_set(dir / "set", spec);
  fs::create_directory(dir / "out");
  const fs::path out = dir / "out" / "H200_E5M2.h5";
  const auto r = run_cli({"recordings", "import-public", set.dir.string(), "--out", out.string()});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(testsupport::entries(dir / "out"), std::vector<std::string>{"H200_E5M2.h5"});
  const auto rr = run_cli({"replay", out.string()});
  EXPECT_EQ(rr.status, 0) << rr.all();
  EXPECT_EQ(last_line(rr.out), "50 passed, 0 failed");
}

TEST(Cli, ImportPublicOfBadSetExitsTwoWithOneLineAndLeavesNoFile) {
  TempDir dir("cli");
  testsupport::SetSpec spec;
  spec.n = 6;
  const auto set = testsupport::write_set(dir / "set", spec);
  auto lines = testsupport::read_lines(set.a);
  lines[2].replace(0, 8, "3f70000g");
  testsupport::write_lines(set.a, lines);
  fs::create_directory(dir / "out");
  const fs::path out = dir / "out" / "bad.h5";
  const auto r = run_cli({"recordings", "import-public", set.dir.string(), "--out", out.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  const auto printed = nonempty_lines(r.all());
  ASSERT_EQ(printed.size(), 1u) << r.all();
  EXPECT_THAT(printed[0], HasSubstr(set.a.string() + ":3"));
  EXPECT_TRUE(testsupport::entries(dir / "out").empty());
}

TEST(Cli, ImportPublicIntoMissingFolderExitsTwo) {
  TempDir dir("cli");
  const auto set = testsupport::write_set(dir / "set", testsupport::SetSpec{});
  const fs::path out = dir / "no_such_folder" / "x.h5";
  const auto r = run_cli({"recordings", "import-public", set.dir.string(), "--out", out.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr(out.string()));
  EXPECT_FALSE(fs::exists(dir / "no_such_folder"));
}

TEST(Cli, ImportPublicWithUnknownPresetExitsTwo) {
  TempDir dir("cli");
  const auto set = testsupport::write_set(dir / "set", testsupport::SetSpec{});
  const auto r = run_cli({"recordings", "import-public", set.dir.string(), "--out",
                          (dir / "x.h5").string(), "--preset", "no_such_preset"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_FALSE(fs::exists(dir / "x.h5"));
}

TEST(Cli, InfoListsThePresets) {
  const auto r = run_cli({"info"});
  EXPECT_EQ(r.status, 0) << r.all();
  std::set<std::string> names;
  for (const auto& l : lines_of(r.out)) {
    std::istringstream ss(l);
    std::string first;
    ss >> first;
    names.insert(first);
  }
  for (const char* p : {"ada", "hopper", "b200_mma_sync"})
    EXPECT_TRUE(names.count(p)) << p << " missing from:\n" << r.out;
}

// The bits, their fields and the decimal value beside them (E4M3 0x38 is 1, 0x40 is 2).
TEST(Cli, DotPrintsTheBitsAndTheirDecimalValue) {
  const auto r = run_cli({"dot", "--a", "38", "--b", "38", "--preset", "hopper"});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(last_line(r.out), "0x3f800000 (s=0 e=0x7f f=0x000000) = 1") << r.all();
  const auto three = run_cli({"dot", "--a", "38", "38", "--b", "38", "40", "--json", "-"});
  EXPECT_EQ(three.status, 0) << three.all();
  const auto j = nlohmann::json::parse(three.out);
  EXPECT_EQ(j.at("bits"), "0x40400000");
  EXPECT_EQ(j.at("value"), "3");
  EXPECT_THAT(three.err, HasSubstr("0x40400000 (s=0 e=0x80 f=0x400000) = 3"));
}

// Hand-derived: eight products of (1 + 2^-10) x 1 on ampere_fp16 (one block of 8) are
// 8 + 2^-7 exactly: binary32 0x41002000, and with an fp16 accumulator 0x4801.
TEST(Cli, DotOfFp16BfAndTf32CodesUsesTheirPresets) {
  std::vector<std::string> args{"dot",  "--fmt-a",  "fp16",        "--fmt-b",
                                "fp16", "--preset", "ampere_fp16", "--a"};
  for (int i = 0; i < 8; ++i)
    args.push_back("3c01");
  args.push_back("--b");
  for (int i = 0; i < 8; ++i)
    args.push_back("3c00");
  auto r = run_cli(args);
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(last_line(r.out).substr(0, 10), "0x41002000") << r.all();
  args.insert(args.end(), {"--acc", "fp16"});
  r = run_cli(args);
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(last_line(r.out).substr(0, 6), "0x4801") << r.all();
  // tf32 values as their binary32 patterns: 1.5 * 2 + 0.25 * 4 = 4.
  r = run_cli({"dot", "--fmt-a", "tf32", "--fmt-b", "tf32", "--preset", "ada_tf32", "--a",
               "3fc00000", "3e800000", "--b", "40000000", "40800000"});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(last_line(r.out).substr(0, 10), "0x40800000") << r.all();
  // A pattern with low bits is not a tf32 value; an FP8 preset takes no fp16 codes.
  r = run_cli({"dot", "--fmt-a", "tf32", "--fmt-b", "tf32", "--preset", "ada_tf32", "--a",
               "3fc00001", "--b", "40000000"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("'3fc00001' is not a tf32 value"));
  r = run_cli({"dot", "--fmt-a", "fp16", "--fmt-b", "fp16", "--a", "3c00", "--b", "3c00"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("preset 'hopper' takes e4m3 or e5m2"));
}

TEST(Cli, DotWithBadCodeExitsTwo) {
  const auto r = run_cli({"dot", "--a", "zz", "--b", "38"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("zz"));
}

TEST(Cli, NoSubcommandExitsTwo) {
  EXPECT_EQ(run_cli({}).status, 2);
}

TEST(Cli, UnknownSubcommandExitsTwo) {
  EXPECT_EQ(run_cli({"nosuchcmd"}).status, 2);
}

// `mmaemu explain`: exit 0 for a valid call, 1 when the call would raise, 2 for usage
// errors, 4 when explain is unavailable (a CUDA device that is not there).
TEST(CliExplain, ValidCallExitsZeroAndWritesJson) {
  TempDir dir("explain");
  const auto json = (dir / "plan.json").string();
  const auto r = run_cli({"explain", "64", "32", "128", "--fast", "--splitk", "1", "--out",
                          "bfloat16", "--json", json});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("validation  ok"));
  const auto j = nlohmann::json::parse(testsupport::read_text(json));
  EXPECT_EQ(j["validation"], "ok");
  EXPECT_EQ(j["split"]["S"], 1);
  EXPECT_EQ(j["backend"], "reference");
}

TEST(CliExplain, SchemeOfAnotherPresetExitsOne) {
  const auto r = run_cli({"explain", "64", "32", "128", "--splitk", "2,serial"});
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("ValueError"));
  const auto ada =
      run_cli({"explain", "64", "32", "128", "--splitk", "2,serial", "--profile", "ada"});
  EXPECT_EQ(ada.status, 0) << ada.all();
  EXPECT_THAT(ada.out, HasSubstr("UnverifiedSplitWarning"));
}

TEST(CliExplain, AutoSplitWithEmptyTableExitsOneNamingIt) {
  const auto r = run_cli({"explain", "64", "32", "128"});
  EXPECT_EQ(r.status, 1) << r.all();
  EXPECT_THAT(r.out, HasSubstr("SplitKUnknownError"));
  EXPECT_THAT(r.out, HasSubstr("empty"));
  const auto ws0 = run_cli({"explain", "64", "32", "128", "--profile", "hopper-ws0"});
  EXPECT_EQ(ws0.status, 0) << ws0.all();
  EXPECT_THAT(ws0.out, HasSubstr("source=workspace0"));
}

TEST(CliExplain, TorchRejectionsExitOne) {
  EXPECT_EQ(
      run_cli({"explain", "16", "32", "64", "--a", "e5m2", "--b", "e5m2", "--splitk", "1"}).status,
      1);
  EXPECT_EQ(run_cli({"explain", "16", "32", "72", "--splitk", "1"}).status, 1); // K % 16
  EXPECT_EQ(run_cli({"explain", "16", "32", "64", "--out", "e5m2", "--splitk", "1"}).status, 1);
  const auto b200 = run_cli({"explain", "16", "32", "64", "--profile", "b200-mma-sync-experimental",
                             "--splitk", "1", "--out", "bf16"});
  EXPECT_EQ(b200.status, 1) << b200.all();
  EXPECT_THAT(b200.out, HasSubstr("UnsupportedFeatureError"));
}

TEST(CliExplain, UsageErrorsExitTwoAndCudaDeviceExitsFour) {
  EXPECT_EQ(run_cli({"explain", "16", "32"}).status, 2);
  EXPECT_EQ(run_cli({"explain", "16", "32", "64", "--out", "float7"}).status, 2);
  EXPECT_EQ(run_cli({"explain", "16", "32", "64", "--splitk", "2,diagonal"}).status, 2);
  EXPECT_EQ(run_cli({"explain", "16", "32", "64", "--scale-a", "abc"}).status, 2);
  const auto dev = run_cli({"explain", "16", "32", "64", "--device", "cuda"});
  EXPECT_EQ(dev.status, 4) << dev.all();
  EXPECT_THAT(dev.err, HasSubstr("cuda"));
}

TEST(CliGemm, SameSeedSameSha256AndItReplays) {
  TempDir dir("gemm");
  const auto h5 = (dir / "g.h5").string();
  const std::vector<std::string> args = {"gemm",   "--M",      "8", "--N",   "16",   "--K",    "64",
                                         "--fast", "--splitk", "1", "--out", "bf16", "--seed", "3"};
  auto with_write = args;
  with_write.insert(with_write.end(), {"--write", h5});
  const auto r1 = run_cli(with_write);
  const auto r2 = run_cli(args);
  ASSERT_EQ(r1.status, 0) << r1.all();
  ASSERT_EQ(r2.status, 0) << r2.all();
  auto sha = [](const std::string& out) {
    const auto at = out.find("sha256");
    return out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(sha(r1.out), sha(r2.out));
  const auto replay = run_cli({"replay", h5});
  EXPECT_EQ(replay.status, 0) << replay.all();
  EXPECT_EQ(last_line(replay.out), "1 passed, 0 failed");
}

// Every figure says what it compares, and the default is torch's slow accumulation (the
// default of gemm and explain too).
TEST(CliBench, GemmLabelsEveryFigureWithWhatItCompares) {
  const auto r =
      run_cli({"bench", "gemm", "--M", "32", "--N", "64", "--K", "128", "--threads", "1"});
  EXPECT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("accum      slow (use_fast_accum=False: torch's default"));
  EXPECT_THAT(r.out, HasSubstr("GMAC/s  the exact emulation"));
  EXPECT_THAT(r.out, HasSubstr("GMAC/s  the baseline: OpenBLAS cblas_sgemm"));
  EXPECT_THAT(r.out, HasSubstr(" x  reference time / sgemm time (lower is faster)"));
  EXPECT_THAT(r.out, HasSubstr("the call's peak (operands + what it allocated); limit "));
  // A small shape's peak is in kB, not "0 MB".
  EXPECT_THAT(r.out, testing::Not(HasSubstr(" 0 MB")));
  EXPECT_THAT(r.out, testing::Not(HasSubstr("ratio:")));
  const auto fast = run_cli(
      {"bench", "gemm", "--M", "32", "--N", "64", "--K", "128", "--threads", "1", "--fast"});
  EXPECT_EQ(fast.status, 0) << fast.all();
  EXPECT_THAT(fast.out, HasSubstr("accum      fast (use_fast_accum=True"));
}

// The sweep's table and JSON on a small N and K (the rows' M are the sweep's own) and small
// split calls: 28 rows of M, 11 split calls (the unsplit call and S = 2, 4, 8 of each profile's
// schemes), every figure named by profile, accumulation and M (and K, S and scheme), the ratios
// positive, and model::dot's figures.
TEST(CliBench, SweepWritesTheTableAndItsFigures) {
  TempDir dir("cli");
  const fs::path json_path = dir / "sweep.json";
  const auto r = run_cli({"bench", "gemm", "--sweep", "--N", "32", "--K", "48", "--split-M", "8",
                          "--split-K", "64", "--threads", "1", "--json", json_path.string()});
  ASSERT_EQ(r.status, 0) << r.all();
  for (const char* row : {"hopper   fast       1", "ada      slow    2048",
                          "ada      fast       8     64 4,pairwise", "dot      hopper K=4096"})
    EXPECT_THAT(r.out, HasSubstr(row));
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(testsupport::read_text(json_path)));
  ASSERT_EQ(j.at("rows").size(), 39u);
  std::set<std::string> names;
  for (const auto& b : j.at("benchmarks")) {
    names.insert(b.at("name").get<std::string>());
    EXPECT_GT(b.at("value").get<double>(), 0.0) << b.dump();
  }
  for (const char* name :
       {"ratio_hopper_fast_M2048", "ratio_hopper_slow_M16", "ratio_ada_fast_M1",
        "ratio_ada_slow_M200", "gmacs_ada_slow_M128", "slow_over_fast_hopper_M2048",
        "ratio_hopper_fast_M8_K64_S1", "ratio_hopper_fast_M8_K64_S4_contiguous",
        "ratio_ada_fast_M8_K64_S8_pairwise", "split_over_unsplit_hopper_S2_contiguous",
        "split_over_unsplit_ada_S4_serial", "split_over_unsplit_ada_S8_pairwise",
        "dot_gmacs_hopper_K4096", "dot_gmacs_ada_K4096"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  int split_rows = 0;
  for (const auto& row : j.at("rows")) {
    EXPECT_EQ(row.at("N").get<int>(), 32);
    const bool split_call = row.at("M").get<int>() == 8;
    EXPECT_EQ(row.at("K").get<int>(), split_call ? 64 : 48);
    split_rows += split_call;
  }
  EXPECT_EQ(split_rows, 11);
}

// --splitk times the split call and the unsplit call of the same shape in one run.
TEST(CliBench, GemmSplitKTimesTheUnsplitCallToo) {
  TempDir dir("cli");
  const fs::path json_path = dir / "split.json";
  const auto r =
      run_cli({"bench", "gemm", "--M", "8", "--N", "32", "--K", "256", "--splitk", "4,pairwise",
               "--profile", "ada", "--threads", "1", "--json", json_path.string()});
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("split 4,pairwise"));
  EXPECT_THAT(r.out, HasSubstr("unsplit "));
  EXPECT_THAT(last_line(r.out), testing::StartsWith("split_over_unsplit: "));
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(testsupport::read_text(json_path)));
  EXPECT_EQ(j.at("splitk").get<int>(), 4);
  EXPECT_EQ(j.at("scheme").get<std::string>(), "pairwise");
  EXPECT_EQ(j.at("unsplit").at("splitk").get<int>(), 1);
  EXPECT_GT(j.at("split_over_unsplit").get<double>(), 0.0);
}

TEST(CliBench, GemmSplitKRefusesAutoForeignSchemesAndTheSweep) {
  // Usage errors (2), and a scheme of another preset: a ValueError of the call itself (1, as
  // gemm and explain; docs/api.md, "Conventions").
  for (const auto& [args, status] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"--splitk", "auto"}, 2},
           {{"--splitk", "2,serial"}, 1},
           {{"--splitk", "3,sideways"}, 2},
           {{"--sweep", "--splitk", "2,contiguous"}, 2}}) {
    std::vector<std::string> argv = {"bench", "gemm", "--M", "4", "--N", "16", "--K", "32"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_cli(argv);
    EXPECT_EQ(r.status, status) << r.all();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(CliBench, SweepRefusesFastOrSlow) {
  const auto r = run_cli({"bench", "gemm", "--sweep", "--slow", "--N", "16", "--K", "16"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("--sweep"));
}
