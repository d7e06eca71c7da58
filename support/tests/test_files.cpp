// SPDX-License-Identifier: BSD-2-Clause
// Inputs: only regular files, bounded, never blocking. Outputs: never a special file or an
// input; written whole or not at all.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::support {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/mmaemu-support-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void put(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

TEST(InputFile, ReadsARegularFile) {
  TempDir t;
  put(t.path / "a", "hello");
  EXPECT_EQ(read_input_file(t.path / "a", 100, "log"), "hello");
  EXPECT_EQ(check_input_file(t.path / "a", 100, "log"), 5u);
}

TEST(InputFile, RefusesAFifoWithoutBlocking) {
  TempDir t;
  const fs::path fifo = t.path / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(read_input_file(fifo, 100, "key"), FileError);
  EXPECT_THROW(check_input_file(fifo, 100, "key"), FileError);
  try {
    read_input_file(fifo, 100, "key");
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(InputFile, RefusesDevicesFoldersAndMissingFiles) {
  TempDir t;
  for (const char* dev : {"/dev/zero", "/dev/null", "/dev/urandom"}) {
    EXPECT_THROW(read_input_file(dev, 100, "input"), FileError) << dev;
  }
  EXPECT_THROW(read_input_file(t.path, 100, "input"), FileError);
  EXPECT_THROW(read_input_file(t.path / "missing", 100, "input"), FileError);
  // A symlink to a device is judged by its target.
  fs::create_symlink("/dev/zero", t.path / "z");
  EXPECT_THROW(read_input_file(t.path / "z", 100, "input"), FileError);
}

TEST(InputFile, RefusesAFileOverTheLimit) {
  TempDir t;
  put(t.path / "big", std::string(101, 'x'));
  EXPECT_THROW(read_input_file(t.path / "big", 100, "tier file"), FileError);
  EXPECT_EQ(read_input_file(t.path / "big", 101, "tier file").size(), 101u);
}

TEST(OutputPath, RefusesSpecialFilesSymlinksToThemAndInputs) {
  TempDir t;
  EXPECT_THROW(check_output_path("/dev/null"), FileError);
  fs::create_symlink("/dev/null", t.path / "n");
  EXPECT_THROW(check_output_path(t.path / "n"), FileError);
  EXPECT_THROW(check_output_path(t.path), FileError);
  put(t.path / "in.h5", "data");
  EXPECT_THROW(check_output_path(t.path / "in.h5", {t.path / "in.h5"}), FileError);
  // The same file under another name is still the input.
  fs::create_symlink(t.path / "in.h5", t.path / "alias.h5");
  EXPECT_THROW(check_output_path(t.path / "alias.h5", {t.path / "in.h5"}), FileError);
  EXPECT_NO_THROW(check_output_path(t.path / "new.json", {t.path / "in.h5"}));
  EXPECT_NO_THROW(check_output_path(t.path / "in.h5", {t.path / "other"}));
}

TEST(AtomicWrite, WritesWholeFilesAndLeavesNoTemporary) {
  TempDir t;
  write_file_atomic(t.path / "out.json", "{}\n");
  EXPECT_EQ(read_input_file(t.path / "out.json", 100, "out"), "{}\n");
  write_file_atomic(t.path / "out.json", "[]\n");
  EXPECT_EQ(read_input_file(t.path / "out.json", 100, "out"), "[]\n");
  EXPECT_EQ(entries(t.path), 1u);
}

TEST(AtomicWrite, PrivateModeIsKept) {
  TempDir t;
  write_file_atomic(t.path / "k.pem", "secret", 0600);
  struct stat st {};
  ASSERT_EQ(::stat((t.path / "k.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(AtomicWrite, NeverReplacesASpecialFileOrAnInput) {
  TempDir t;
  fs::create_symlink("/dev/null", t.path / "n");
  EXPECT_THROW(write_file_atomic(t.path / "n", "x"), FileError);
  EXPECT_TRUE(fs::is_symlink(t.path / "n"));
  put(t.path / "r.h5", "recording");
  EXPECT_THROW(write_file_atomic(t.path / "r.h5", "{}", 0644, {t.path / "r.h5"}), FileError);
  EXPECT_EQ(read_input_file(t.path / "r.h5", 100, "r"), "recording");
  EXPECT_THROW(write_file_atomic(t.path / "no" / "such" / "x", "x"), FileError);
  EXPECT_EQ(entries(t.path), 2u);
}

TEST(AtomicWrite, AFailingWriterLeavesNothing) {
  TempDir t;
  put(t.path / "keep", "old");
  EXPECT_THROW(write_file_atomic_with(t.path / "keep",
                                      [](const fs::path& tmp) {
                                        put(tmp, "partial");
                                        throw std::runtime_error("writer failed");
                                      }),
               std::runtime_error);
  EXPECT_EQ(read_input_file(t.path / "keep", 100, "keep"), "old");
  EXPECT_EQ(entries(t.path), 1u);
}

TEST(AtomicWrite, ExclusiveNeverReplaces) {
  TempDir t;
  EXPECT_TRUE(write_file_exclusive(t.path / "log.json", "first"));
  EXPECT_FALSE(write_file_exclusive(t.path / "log.json", "second"));
  EXPECT_EQ(read_input_file(t.path / "log.json", 100, "log"), "first");
  EXPECT_EQ(entries(t.path), 1u);
}

TEST(Printable, EscapesControlBytesAndCuts) {
  EXPECT_EQ(printable("ok"), "ok");
  EXPECT_EQ(printable("a\nb\x1b[2J"), "a\\x0ab\\x1b[2J");
  EXPECT_EQ(printable("\\"), "\\\\");
  EXPECT_EQ(printable("\xff"), "\\xff");
  EXPECT_EQ(printable(std::string(100, 'x'), 4), "xxxx...(100 bytes)");
}

} // namespace
} // namespace mmaemu::support
