// SPDX-License-Identifier: BSD-2-Clause
// What `mmaemu recordings fill` and `mmaemu replay` say about a bad recording: one line that
// names the file (and the call and output), escaped once. `fill` printed `mmaemu:
// std::bad_alloc` for a call that creates 2^28-element tensors and a bare ValueError for a
// recorded split that is none; an unreadable file named with a control byte came out as
// `\\x1b` (escaped twice).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "replay_fixtures.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::testing::run_command;
using mmaemu::testing::TempDir;
using nlohmann::json;
namespace rec = mmaemu::recordings;

// A recording of one call `call` whose one fp32 output has split `splitk`.
fs::path write_one_call(const fs::path& p, const json& call, const std::string& splitk) {
  rec::Recording r;
  rec::GemmCallBatch b;
  b.name = "msg";
  b.attrs["gpu"] = "none (synthetic)";
  rec::GemmCall gc;
  gc.id = "msg/0";
  gc.call_json = call.dump();
  gc.input_storage.assign(64, 0x38);
  gc.mat2_storage.assign(512, 0x38);
  gc.outputs = {{"fp32", mmaemu::Format::fp32, true, splitk, {2, 16}, {}, "ValueError"}};
  b.calls.push_back(std::move(gc));
  r.gemm_call.push_back(std::move(b));
  rec::write_recording(p, r);
  return p;
}

bool one_line(const std::string& s) {
  return !s.empty() && s.find('\n') == s.size() - 1;
}

TEST(RecordingMessages, FillOfAnOverBudgetCallNamesTheFileNotBadAlloc) {
  TempDir dir("messages");
  json call = replaytest::unit_call();
  for (const char* k : {"bias", "out"})
    call[k] = {{"dtype", "fp32"}, {"shape", {std::int64_t{1} << 28}}, {"fill", "0"}};
  const fs::path f = write_one_call(dir / "big.h5", call, "1");
  const auto r = run_command(MMAEMU_BIN, {}, {"recordings", "fill", f.string(), "--json", "-"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("mmaemu: " + f.string() + ": gemm_call 'msg/0': over budget: "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(RecordingMessages, FillOfARecordedSplitThatIsNoneNamesTheFileCallAndOutput) {
  TempDir dir("messages");
  const fs::path f = write_one_call(dir / "split.h5", replaytest::unit_call(), "banana");
  const auto r = run_command(MMAEMU_BIN, {}, {"recordings", "fill", f.string(), "--json", "-"});
  EXPECT_EQ(r.status, 2) << r.all();
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("mmaemu: " + f.string() + ": gemm_call 'msg/0' output 'fp32': ValueError"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("banana"), std::string::npos) << r.err;
}

TEST(RecordingMessages, AnUnreadableFileIsNamedEscapedOnce) {
  TempDir dir("messages");
  const fs::path f = dir / "j\x1bunk.h5";
  mmaemu::testing::spit(f, "junk");
  const auto r = run_command(MMAEMU_BIN, {}, {"replay", f.string()});
  EXPECT_EQ(r.status, 2) << r.all();
  const std::string escaped = (dir / "j\\x1bunk.h5").string();
  EXPECT_NE(r.err.find("mmaemu: ERROR " + escaped + ": not an HDF5 file"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("\\\\x1b"), std::string::npos) << "escaped twice: " << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "not escaped: " << r.err;
}

} // namespace
