// SPDX-License-Identifier: BSD-2-Clause
// Writing and reading mmaemu-recording/1 files: bit-identical round trips, failures that
// leave nothing behind, and read errors that name the file.

#include <H5Cpp.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/recordings/recording.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::Format;
using mmaemu::recordings::MmaBatch;
using mmaemu::recordings::read_recording;
using mmaemu::recordings::Recording;
using mmaemu::recordings::RecordingError;
using mmaemu::recordings::write_recording;
using testing::HasSubstr;
using testsupport::TempDir;

namespace {

MmaBatch make_batch(const std::string& name, Format fa, Format fb, const std::string& preset,
                    std::uint32_t K, std::size_t n, unsigned seed, bool zero_c) {
  std::mt19937 rng(seed);
  MmaBatch b;
  b.name = name;
  b.fmt_a = fa;
  b.fmt_b = fb;
  b.preset = preset;
  b.K = K;
  b.c_policy = zero_c ? "zero" : "from_file";
  for (std::size_t i = 0; i < n; ++i) {
    b.ids.push_back(name + "/" + std::to_string(i + 1));
    for (std::uint32_t k = 0; k < K; ++k) {
      b.a.push_back(static_cast<std::uint8_t>(rng()));
      b.b.push_back(static_cast<std::uint8_t>(rng()));
    }
    b.c.push_back(zero_c ? 0u : static_cast<std::uint32_t>(rng()));
    b.expect.push_back(static_cast<std::uint32_t>(rng()));
  }
  b.attrs["gpu"] = "TestGPU";
  b.attrs["source"] = "unit test, seed " + std::to_string(seed);
  b.attrs["sha256:a_TestGPU_E4M3.txt"] = std::string(64, 'a');
  return b;
}

Recording two_batches() {
  Recording rec;
  rec.attrs["source"] = "test_recording_io";
  rec.attrs["note"] = "two mma batches";
  rec.mma.push_back(make_batch("set_one", Format::e4m3, Format::e4m3, "hopper", 32, 7, 11, true));
  rec.mma.push_back(make_batch("set_two", Format::e5m2, Format::e4m3, "ada", 16, 5, 12, false));
  return rec;
}

const MmaBatch* find_batch(const Recording& rec, const std::string& name) {
  for (const auto& b : rec.mma)
    if (b.name == name)
      return &b;
  return nullptr;
}

// Integer-vector equality; these are raw codes and bit patterns, never floats.
void expect_same_batch(const MmaBatch& want, const MmaBatch& got) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.fmt_a, want.fmt_a);
  EXPECT_EQ(got.fmt_b, want.fmt_b);
  EXPECT_EQ(got.preset, want.preset);
  EXPECT_EQ(got.K, want.K);
  EXPECT_EQ(got.c_policy, want.c_policy);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_EQ(got.a, want.a);
  EXPECT_EQ(got.b, want.b);
  EXPECT_EQ(got.c, want.c);
  EXPECT_EQ(got.expect, want.expect);
  EXPECT_EQ(got.attrs, want.attrs);
}

// Calls f, which must throw RecordingError; returns its message.
template <class F> std::string recording_error_of(F f) {
  try {
    f();
  } catch (const RecordingError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected RecordingError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected RecordingError, nothing was thrown";
  return {};
}

void write_h5_string_attr(H5::H5Object& obj, const std::string& key, const std::string& value) {
  H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  H5::DataSpace scalar(H5S_SCALAR);
  H5::Attribute attr = obj.createAttribute(key, t, scalar);
  attr.write(t, value);
}

} // namespace

TEST(RecordingIo, RoundTripOfTwoBatchesIsBitIdentical) {
  TempDir dir("io");
  const fs::path file = dir / "two.h5";
  const Recording rec = two_batches();
  write_recording(file, rec);
  ASSERT_TRUE(fs::is_regular_file(file));

  const Recording got = read_recording(file);
  ASSERT_EQ(got.mma.size(), 2u);
  EXPECT_EQ(got.case_count(), 12u);
  for (const auto& want : rec.mma) {
    const MmaBatch* b = find_batch(got, want.name);
    ASSERT_NE(b, nullptr) << want.name;
    expect_same_batch(want, *b);
  }
  // File attributes come back, with the format and created_by added on write.
  EXPECT_EQ(got.attrs.at("format"), mmaemu::recordings::kFormatName);
  EXPECT_EQ(got.attrs.at("created_by"), "mmaemu");
  EXPECT_EQ(got.attrs.at("source"), "test_recording_io");
  EXPECT_EQ(got.attrs.at("note"), "two mma batches");
  EXPECT_EQ(got.attrs.size(), 4u);
}

TEST(RecordingIo, RoundTripKeepsAGivenCreatedByAndLeavesOnlyTheFile) {
  TempDir dir("io");
  Recording rec = two_batches();
  rec.attrs["created_by"] = "someone else";
  write_recording(dir / "x.h5", rec);
  EXPECT_EQ(read_recording(dir / "x.h5").attrs.at("created_by"), "someone else");
  EXPECT_EQ(testsupport::entries(dir.path()), std::vector<std::string>{"x.h5"});
}

TEST(RecordingIo, RewriteReplacesAnExistingFile) {
  TempDir dir("io");
  Recording rec = two_batches();
  write_recording(dir / "x.h5", rec);
  rec.mma.pop_back();
  write_recording(dir / "x.h5", rec);
  const Recording got = read_recording(dir / "x.h5");
  ASSERT_EQ(got.mma.size(), 1u);
  expect_same_batch(rec.mma[0], got.mma[0]);
  EXPECT_EQ(testsupport::entries(dir.path()), std::vector<std::string>{"x.h5"});
}

TEST(RecordingIo, WriteIntoMissingFolderFailsAndLeavesNothing) {
  TempDir dir("io");
  const fs::path file = dir / "no_such_folder" / "x.h5";
  const std::string msg = recording_error_of([&] { write_recording(file, two_batches()); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_FALSE(fs::exists(dir / "no_such_folder"));
  EXPECT_TRUE(testsupport::entries(dir.path()).empty());
}

TEST(RecordingIo, WriteWithDuplicateBatchNamesFailsAndLeavesNothing) {
  TempDir dir("io");
  Recording rec = two_batches();
  rec.mma[1].name = rec.mma[0].name;
  for (auto& id : rec.mma[1].ids)
    id = "other/" + id; // unique ids: only the batch names collide
  const fs::path file = dir / "dup.h5";
  const std::string msg = recording_error_of([&] { write_recording(file, rec); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("set_one"));
  EXPECT_TRUE(testsupport::entries(dir.path()).empty());
}

TEST(RecordingIo, WriteWithInconsistentSizesFailsAndLeavesNothing) {
  TempDir dir("io");
  const fs::path file = dir / "bad.h5";
  {
    Recording rec = two_batches();
    rec.mma[0].a.pop_back(); // n*K - 1 codes
    EXPECT_THAT(recording_error_of([&] { write_recording(file, rec); }), HasSubstr(file.string()));
  }
  {
    Recording rec = two_batches();
    rec.mma[1].expect.push_back(0u); // n + 1 results
    EXPECT_THAT(recording_error_of([&] { write_recording(file, rec); }), HasSubstr(file.string()));
  }
  {
    Recording rec = two_batches();
    rec.mma[1].c.pop_back();
    EXPECT_THAT(recording_error_of([&] { write_recording(file, rec); }), HasSubstr(file.string()));
  }
  EXPECT_TRUE(testsupport::entries(dir.path()).empty());
}

TEST(RecordingIo, FailedWriteLeavesAnExistingFileUnchanged) {
  TempDir dir("io");
  const fs::path file = dir / "keep.h5";
  const Recording good = two_batches();
  write_recording(file, good);
  const std::string before = testsupport::read_text(file);
  Recording bad = two_batches();
  bad.mma[0].b.pop_back();
  recording_error_of([&] { write_recording(file, bad); });
  EXPECT_EQ(testsupport::read_text(file), before);
  EXPECT_EQ(testsupport::entries(dir.path()), std::vector<std::string>{"keep.h5"});
}

TEST(RecordingIo, ReadMissingFileNamesTheFile) {
  TempDir dir("io");
  const fs::path file = dir / "missing.h5";
  EXPECT_THAT(recording_error_of([&] { read_recording(file); }), HasSubstr(file.string()));
}

TEST(RecordingIo, ReadTextFileNamesTheFile) {
  TempDir dir("io");
  const fs::path file = dir / "text.h5";
  testsupport::write_text(file, "this is not an HDF5 file\nat all\n");
  EXPECT_THAT(recording_error_of([&] { read_recording(file); }), HasSubstr(file.string()));
}

TEST(RecordingIo, ReadEmptyFileNamesTheFile) {
  TempDir dir("io");
  const fs::path file = dir / "empty.h5";
  testsupport::write_text(file, "");
  EXPECT_THAT(recording_error_of([&] { read_recording(file); }), HasSubstr(file.string()));
}

TEST(RecordingIo, ReadTruncatedFileNamesTheFile) {
  TempDir dir("io");
  const fs::path whole = dir / "whole.h5";
  Recording rec;
  // Random codes do not compress: the file is large enough that half of it cuts the data.
  rec.mma.push_back(make_batch("big", Format::e4m3, Format::e4m3, "hopper", 32, 3000, 5, false));
  write_recording(whole, rec);
  const std::string bytes = testsupport::read_text(whole);
  ASSERT_GT(bytes.size(), 100000u);
  const fs::path half = dir / "half.h5";
  testsupport::write_text(half, bytes.substr(0, bytes.size() / 2));
  EXPECT_THAT(recording_error_of([&] { read_recording(half); }), HasSubstr(half.string()));
}

TEST(RecordingIo, ReadTruncatedCommittedRecordingNamesTheFile) {
  TempDir dir("io");
  const std::string bytes =
      testsupport::read_text(fs::path(MMAEMU_SOURCE_DIR) / "recordings/data/public/Ada_E4M3.h5");
  ASSERT_GT(bytes.size(), 1000u);
  const fs::path half = dir / "Ada_half.h5";
  testsupport::write_text(half, bytes.substr(0, bytes.size() / 2));
  EXPECT_THAT(recording_error_of([&] { read_recording(half); }), HasSubstr(half.string()));
}

TEST(RecordingIo, ReadHdf5OfAnotherFormatNamesTheFile) {
  TempDir dir("io");
  const fs::path file = dir / "other.h5";
  {
    H5::H5File f(file.string(), H5F_ACC_TRUNC);
    write_h5_string_attr(f, "format", "something-else/1");
    f.createGroup("cases");
  }
  const std::string msg = recording_error_of([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("something-else/1"));
}

TEST(RecordingIo, ReadHdf5WithoutFormatAttributeNamesTheFile) {
  TempDir dir("io");
  const fs::path file = dir / "noformat.h5";
  {
    H5::H5File f(file.string(), H5F_ACC_TRUNC);
    write_h5_string_attr(f, "created_by", "not mmaemu");
    f.createGroup("cases");
  }
  EXPECT_THAT(recording_error_of([&] { read_recording(file); }), HasSubstr(file.string()));
}

TEST(RecordingIo, ReadBatchWithMissingDatasetNamesFileAndDataset) {
  TempDir dir("io");
  for (const char* dataset : {"c", "a", "id", "expect"}) {
    SCOPED_TRACE(dataset);
    const fs::path file = dir / (std::string("missing_") + dataset + ".h5");
    write_recording(file, two_batches());
    {
      H5::H5File f(file.string(), H5F_ACC_RDWR);
      f.unlink(std::string("cases/set_two/") + dataset);
    }
    const std::string msg = recording_error_of([&] { read_recording(file); });
    EXPECT_THAT(msg, HasSubstr(file.string()));
    EXPECT_THAT(msg, HasSubstr(std::string("'") + dataset + "'"));
  }
}
