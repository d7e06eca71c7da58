// SPDX-License-Identifier: BSD-2-Clause
// Hostile text sets: files that are not regular files or are over the size limit are refused
// without blocking or reading them, every error names the file (and line), and what is echoed
// from a file is escaped and cut. The in-memory entry point gives what the folder import gives.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "mmaemu/recordings/import_public.hpp"
#include "mmaemu/support/input_file.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::recordings::import_public_set;
using mmaemu::recordings::import_public_texts;
using mmaemu::recordings::ImportError;
using mmaemu::recordings::PublicSetTexts;
using mmaemu::recordings::Recording;
using testing::HasSubstr;
using testing::Not;
using testsupport::SetData;
using testsupport::SetSpec;
using testsupport::TempDir;

namespace {

template <class F> std::string import_error_of(F f) {
  try {
    f();
  } catch (const ImportError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ImportError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected ImportError, nothing was thrown";
  return {};
}

SetData small_set(const fs::path& dir) {
  SetSpec s;
  s.n = 4;
  s.seed = 9;
  return testsupport::write_set(dir, s);
}

} // namespace

TEST(ImportHostile, FifoAsAnOperandFileIsRefusedWithoutBlocking) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  fs::remove(set.b);
  ASSERT_EQ(::mkfifo(set.b.c_str(), 0600), 0);
  auto result = std::async(std::launch::async,
                           [&] { return import_error_of([&] { import_public_set(set.dir); }); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int fd = ::open(set.b.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0)
      ::close(fd);
    FAIL() << "the import blocked on a FIFO";
  }
  const std::string msg = result.get();
  EXPECT_THAT(msg, HasSubstr(set.b.string()));
  EXPECT_THAT(msg, HasSubstr("FIFO"));
}

TEST(ImportHostile, DFileThatIsAFolderIsRefused) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  fs::remove(set.d);
  fs::create_directory(set.d);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.d.string()));
  EXPECT_THAT(msg, HasSubstr("folder"));
}

TEST(ImportHostile, FileOverTheTextLimitIsRefusedUnread) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  // A sparse file one byte over the limit: refused from its size, never read.
  fs::resize_file(set.c, mmaemu::support::kMaxTextBytes + 1);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.c.string()));
  EXPECT_THAT(msg, HasSubstr(std::to_string(mmaemu::support::kMaxTextBytes)));
}

TEST(ImportHostile, EchoedTokensAreEscapedAndCut) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.a);
  lines[1] = "3f80\x1b[2J" + std::string(500, 'z') + " " + lines[1];
  testsupport::write_lines(set.a, lines);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.a.string() + ":2"));
  EXPECT_THAT(msg, HasSubstr("3f80\\x1b[2J"));
  EXPECT_THAT(msg, Not(HasSubstr("\x1b")));
  EXPECT_LT(msg.size(), set.a.string().size() + 200);
}

TEST(ImportHostile, BinaryLineIsEscapedAndNamed) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  testsupport::replace_line(set.d, 3, std::string("0101\r\x07\x00zz", 9));
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.d.string() + ":3"));
  EXPECT_THAT(msg, HasSubstr("\\x07\\x00"));
}

TEST(ImportHostile, LineWithMoreThanKValuesStopsAtTheFirstExtraValue) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  auto lines = testsupport::read_lines(set.a);
  for (int i = 0; i < 1000; ++i)
    lines[0] += " 3f800000";
  testsupport::write_lines(set.a, lines);
  const std::string msg = import_error_of([&] { import_public_set(set.dir); });
  EXPECT_THAT(msg, HasSubstr(set.a.string() + ":1"));
  EXPECT_THAT(msg, HasSubstr("more than K = 32"));
}

TEST(ImportHostile, TextsFromMemoryGiveTheFolderImport) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  const Recording from_dir = import_public_set(set.dir);
  PublicSetTexts t;
  t.gpu = "H100";
  t.a_path = set.a;
  t.b_path = set.b;
  t.c_path = set.c;
  t.d_path = set.d;
  t.a = testsupport::read_text(set.a);
  t.b = testsupport::read_text(set.b);
  t.c = testsupport::read_text(set.c);
  t.d = testsupport::read_text(set.d);
  const Recording from_mem = import_public_texts(t);
  ASSERT_EQ(from_mem.mma.size(), 1u);
  const auto &x = from_mem.mma[0], &y = from_dir.mma[0];
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.ids, y.ids);
  EXPECT_EQ(x.a, set.a_codes);
  EXPECT_EQ(x.b, set.b_codes);
  EXPECT_EQ(x.a, y.a);
  EXPECT_EQ(x.b, y.b);
  EXPECT_EQ(x.c, y.c);
  EXPECT_EQ(x.expect, set.d_bits);
  EXPECT_EQ(x.attrs, y.attrs); // the same hashes: of the text read, of the file
  EXPECT_EQ(from_mem.attrs, from_dir.attrs);
}

TEST(ImportHostile, SetFilesAreListedForTheOutputCheck) {
  TempDir dir("imph");
  const SetData set = small_set(dir / "set");
  auto files = mmaemu::recordings::public_set_files(set.dir);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0], set.a);
  EXPECT_EQ(files[1], set.b);
  EXPECT_EQ(files[2], set.c);
  EXPECT_EQ(files[3], set.d);
}

TEST(ImportHostile, GpuNameWithASpaceIsRefused) {
  // It would become the set name and the prefix of every case ID.
  TempDir dir("imph");
  SetSpec s;
  s.gpu = "My Ada";
  s.n = 2;
  const SetData set = testsupport::write_set(dir / "set", s);
  mmaemu::recordings::ImportOptions opt;
  opt.preset = "ada";
  const std::string msg = import_error_of([&] { import_public_set(set.dir, opt); });
  EXPECT_THAT(msg, HasSubstr(set.a.string()));
  EXPECT_THAT(msg, HasSubstr("'My Ada'"));
}
