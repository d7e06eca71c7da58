// SPDX-License-Identifier: BSD-2-Clause
// Hostile recordings: each file here is refused with one RecordingError line naming the file
// and the object, before anything outside the file is read and before a declared size is
// allocated. Every case was accepted, misread or crashed the process before the reader checked
// objects before reading them (except where a comment says otherwise).

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <new>
#include <string>
#include <vector>

#include "../src/hdf5_guard.hpp"
#include "hostile_h5.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using hostile::check;
using hostile::Id;
using mmaemu::recordings::read_recording;
using mmaemu::recordings::read_recording_image;
using mmaemu::recordings::ReadGuard;
using mmaemu::recordings::Recording;
using mmaemu::recordings::RecordingError;
using mmaemu::recordings::write_recording;
using testing::AnyOf;
using testing::HasSubstr;
using testing::Not;
using testsupport::TempDir;

namespace {

// Calls f, which must throw RecordingError with a one-line message; returns the message.
template <class F> std::string refused(F f) {
  try {
    f();
  } catch (const RecordingError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected RecordingError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected RecordingError, nothing was thrown";
  return {};
}

fs::path good_file(const TempDir& dir, const std::string& name = "rec.h5") {
  const fs::path file = dir / name;
  write_recording(file, hostile::small_recording());
  return file;
}

const std::string kSet = "/cases/set_one";

} // namespace

// --- numbers ------------------------------------------------------------------------------

TEST(RecordingHostile, KWithTrailingLettersIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  hostile::set_string_attr(file, kSet, "K", "4abc"); // std::stoul read 4
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("cases/set_one"));
  EXPECT_THAT(msg, HasSubstr("K"));
  EXPECT_THAT(msg, HasSubstr("4abc"));
}

TEST(RecordingHostile, KThatWrapsTo32BitsIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  // 2^32 + 4: a cast to uint32 made it K = 4, the shape of the datasets.
  hostile::set_string_attr(file, kSet, "K", "4294967300");
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("4294967300"));
  EXPECT_THAT(msg, HasSubstr("limit"));
}

TEST(RecordingHostile, KIn32abcAnd4294967328FormsIsRefused) {
  // The two examples, on a batch of K = 32 (both read as 32 before).
  TempDir dir("hostile");
  const fs::path file = dir / "k32.h5";
  write_recording(file, hostile::small_recording(2, 32));
  EXPECT_EQ(read_recording(file).mma.at(0).K, 32u);
  for (const char* k : {"32abc", "4294967328"}) {
    SCOPED_TRACE(k);
    hostile::set_string_attr(file, kSet, "K", k);
    EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr(k));
  }
}

TEST(RecordingHostile, NonCanonicalDecimalsAreRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  for (const char* k : {"+4", "-4", " 4", "4 ", "04", "", "0x4", "4.0", "4e0", "\xd9\xa4"}) {
    SCOPED_TRACE(k);
    hostile::set_string_attr(file, kSet, "K", k);
    EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("attribute K"));
  }
  hostile::set_string_attr(file, kSet, "K", "4");
  EXPECT_EQ(read_recording(file).mma.at(0).K, 4u);
}

TEST(RecordingHostile, CountThatDisagreesWithTheDatasetsIsRefused) {
  // Was not checked at all before.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  hostile::set_string_attr(file, kSet, "count", "4");
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("count"));
}

TEST(RecordingHostile, EchoedStringsAreEscaped) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  hostile::set_string_attr(file, kSet, "K", "4\nFAKE: all 5000 cases passed\x1b[2J");
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("\\x0a"));
  EXPECT_THAT(msg, HasSubstr("\\x1b"));
  EXPECT_THAT(msg, Not(HasSubstr("\x1b")));
}

// --- storage outside the file -------------------------------------------------------------

TEST(RecordingHostile, DatasetWithExternalStorageIsRefusedUnread) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  // A "secret" beside it: the old reader copied its bytes into the expected bits.
  const fs::path secret = dir / "secret.bin";
  testsupport::write_text(secret, "SECRETSECRETSECRET");
  {
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dcpl");
    check(H5Pset_external(dcpl, secret.c_str(), 0, 12), "set external");
    hostile::replace_dataset(file, kSet + "/c", H5T_STD_U32LE, {3}, dcpl);
  }
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("'c'"));
  EXPECT_THAT(msg, HasSubstr("external storage"));
  EXPECT_THAT(msg, Not(HasSubstr("SECRET")));
}

TEST(RecordingHostile, ExternalLinkInCasesIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const fs::path other = good_file(dir, "other.h5");
  {
    Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
    check(H5Lcreate_external(other.c_str(), "/cases/set_one", f, "/cases/elsewhere", H5P_DEFAULT,
                             H5P_DEFAULT),
          "external link");
  }
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("cases/elsewhere"));
  EXPECT_THAT(msg, HasSubstr("external link"));
}

TEST(RecordingHostile, SoftLinkInCasesIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  {
    Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
    check(H5Lcreate_soft("/cases/set_one", f, "/cases/alias", H5P_DEFAULT, H5P_DEFAULT),
          "soft link");
  }
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("cases/alias"));
  EXPECT_THAT(msg, HasSubstr("soft link"));
}

TEST(RecordingHostile, SoftLinkAsADatasetIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  {
    Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
    check(H5Ldelete(f, "/cases/set_one/c", H5P_DEFAULT), "unlink");
    check(H5Lcreate_soft("/cases/set_one/expect", f, "/cases/set_one/c", H5P_DEFAULT, H5P_DEFAULT),
          "soft link");
  }
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("cases/set_one/c"));
}

TEST(RecordingHostile, VirtualDatasetIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const fs::path src = dir / "src.h5";
  {
    Id f(H5Fcreate(src.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create");
    const hsize_t n = 3;
    Id s(H5Screate_simple(1, &n, nullptr), H5Sclose, "space");
    Id d(H5Dcreate2(f, "data", H5T_STD_U32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
         "dataset");
    const std::uint32_t v[3] = {0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu};
    check(H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), "write");
  }
  {
    const hsize_t n = 3;
    Id vspace(H5Screate_simple(1, &n, nullptr), H5Sclose, "vspace");
    Id sspace(H5Screate_simple(1, &n, nullptr), H5Sclose, "sspace");
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dcpl");
    check(H5Pset_virtual(dcpl, vspace, src.c_str(), "/data", sspace), "set virtual");
    hostile::replace_dataset(file, kSet + "/c", H5T_STD_U32LE, {3}, dcpl);
  }
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'c'"));
  EXPECT_THAT(msg, HasSubstr("virtual"));
}

TEST(RecordingHostile, FilterOtherThanDeflateAndShuffleIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  {
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dcpl");
    const hsize_t chunk = 3;
    check(H5Pset_chunk(dcpl, 1, &chunk), "chunk");
    check(H5Pset_fletcher32(dcpl), "fletcher32");
    const std::uint32_t v[3] = {0, 0, 0};
    hostile::replace_dataset(file, kSet + "/c", H5T_STD_U32LE, {3}, dcpl, H5T_NATIVE_UINT32, v);
  }
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'c'"));
  EXPECT_THAT(msg, HasSubstr("filter"));
}

// --- types and shapes ---------------------------------------------------------------------

TEST(RecordingHostile, FloatDatasetIsRefused) {
  // Read before with a float -> uint32 value conversion: 1.0f became the bits 0x00000001.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const float v[3] = {1.0f, 2.0f, 3.0f};
  hostile::replace_dataset(file, kSet + "/expect", H5T_IEEE_F32LE, {3}, H5P_DEFAULT,
                           H5T_NATIVE_FLOAT, v);
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'expect'"));
  EXPECT_THAT(msg, HasSubstr("float"));
}

TEST(RecordingHostile, SignedDatasetIsRefused) {
  // Read before with an int8 -> uint8 conversion that clipped negative codes to 0.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  std::vector<std::int8_t> v(12, -1);
  hostile::replace_dataset(file, kSet + "/a", H5T_STD_I8LE, {3, 4}, H5P_DEFAULT, H5T_NATIVE_INT8,
                           v.data());
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'a'"));
  EXPECT_THAT(msg, HasSubstr("signed"));
}

TEST(RecordingHostile, WrongElementSizeIsRefused) {
  // The old reader compared element sizes too: this one passed before.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const std::uint16_t v[3] = {1, 2, 3};
  hostile::replace_dataset(file, kSet + "/c", H5T_STD_U16LE, {3}, H5P_DEFAULT, H5T_NATIVE_UINT16,
                           v);
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'c'"));
  EXPECT_THAT(msg, HasSubstr("2 bytes"));
}

TEST(RecordingHostile, BigEndianUnsignedDatasetReadsTheSameValues) {
  // Byte order is a storage detail: a big-endian uint32 dataset gives the same bits.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const std::uint32_t v[3] = {0x3f800000u, 0x80000000u, 0x7fc00001u};
  hostile::replace_dataset(file, kSet + "/expect", H5T_STD_U32BE, {3}, H5P_DEFAULT,
                           H5T_NATIVE_UINT32, v);
  const Recording rec = read_recording(file);
  EXPECT_EQ(rec.mma.at(0).expect, std::vector<std::uint32_t>(v, v + 3));
}

TEST(RecordingHostile, DatasetOfAnotherRankIsRefused) {
  // Refused before too (as a shape mismatch).
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const std::uint32_t v[3] = {1, 2, 3};
  hostile::replace_dataset(file, kSet + "/c", H5T_STD_U32LE, {3, 1}, H5P_DEFAULT, H5T_NATIVE_UINT32,
                           v);
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("dimensions"));
}

TEST(RecordingHostile, NonStringAttributeIsRefused) {
  // Skipped silently before.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const std::uint32_t v = 32;
  hostile::set_raw_attr(file, "/", "note", H5T_STD_U32LE, {}, &v);
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'note'"));
  EXPECT_THAT(msg, HasSubstr("integer"));
}

TEST(RecordingHostile, NonScalarStringAttributeIsRefused) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  Id t(H5Tcopy(H5T_C_S1), H5Tclose, "type");
  check(H5Tset_size(t, 5), "size");
  const char two[] = "hoppehoppe";
  hostile::set_raw_attr(file, kSet, "preset", t, {2}, two);
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr("'preset'"));
  EXPECT_THAT(msg, HasSubstr("scalar"));
}

TEST(RecordingHostile, FixedLengthStringAttributeIsRead) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  Id t(H5Tcopy(H5T_C_S1), H5Tclose, "type");
  check(H5Tset_size(t, 8), "size");
  check(H5Tset_strpad(t, H5T_STR_NULLPAD), "pad");
  const char ada[8] = {'a', 'd', 'a', 0, 0, 0, 0, 0};
  hostile::set_raw_attr(file, kSet, "preset", t, {}, ada);
  EXPECT_EQ(read_recording(file).mma.at(0).preset, "ada");
}

TEST(RecordingHostile, CaseIdsThatAreNotPrintableOrOfAnotherSetAreRefused) {
  // IDs go into logs and reports verbatim: a newline would forge a line.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  Id t(hostile::vlen_string_type(), H5Tclose, "type");
  for (const char* bad : {"set_one/2\nPASS", "set_two/2", "set_one/", "set_one/2 x"}) {
    SCOPED_TRACE(bad);
    const char* ids[3] = {"set_one/1", bad, "set_one/3"};
    hostile::replace_dataset(file, kSet + "/id", t, {3}, H5P_DEFAULT, t, ids);
    EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("case id"));
  }
  EXPECT_THAT(refused([&] {
                Recording rec = hostile::small_recording();
                rec.mma[0].ids[1] = "elsewhere/2";
                write_recording(dir / "w.h5", rec);
              }),
              HasSubstr("elsewhere/2"));
}

// --- sizes --------------------------------------------------------------------------------

TEST(RecordingHostile, UnwrittenDatasetIsRefused) {
  // Never-written storage reads as fill values (zeros): bits no hardware produced. The old
  // reader returned them.
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  hostile::replace_dataset(file, kSet + "/expect", H5T_STD_U32LE, {3}); // contiguous
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("'expect' is not completely"));
  {
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dcpl");
    const hsize_t chunk = 2; // two chunks, one written
    check(H5Pset_chunk(dcpl, 1, &chunk), "chunk");
    check(H5Pset_deflate(dcpl, 6), "deflate");
    hostile::replace_dataset(file, kSet + "/expect", H5T_STD_U32LE, {3}, dcpl);
    Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
    Id d(H5Dopen2(f, (kSet + "/expect").c_str(), H5P_DEFAULT), H5Dclose, "dataset");
    Id fs_(H5Dget_space(d), H5Sclose, "space");
    const hsize_t start = 0, count = 2;
    check(H5Sselect_hyperslab(fs_, H5S_SELECT_SET, &start, nullptr, &count, nullptr), "select");
    Id ms(H5Screate_simple(1, &count, nullptr), H5Sclose, "mspace");
    const std::uint32_t v[2] = {1, 2};
    check(H5Dwrite(d, H5T_NATIVE_UINT32, ms, fs_, H5P_DEFAULT, v), "write");
  }
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("'expect' is not completely"));
}

TEST(RecordingHostile, TerabyteDatasetsAreRefusedWithoutAllocating) {
  // Every dataset declares 2^40 cases (chunked, never written: the file is a few KiB); the old
  // reader allocated 2^40 string pointers and died with std::bad_alloc.
  TempDir dir("hostile");
  const fs::path file = dir / "huge.h5";
  const hsize_t n = hsize_t{1} << 40;
  {
    Id f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create");
    Id cases(H5Gcreate2(f, "cases", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "cases");
    Id g(H5Gcreate2(cases, "huge", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "group");
    const auto dataset = [&](const char* name, hid_t type, std::vector<hsize_t> dims) {
      Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dcpl");
      std::vector<hsize_t> chunk = dims;
      chunk[0] = 4096;
      check(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), "chunk");
      Id s(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
           "space");
      Id d(H5Dcreate2(g, name, type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose, name);
    };
    Id str(hostile::vlen_string_type(), H5Tclose, "string");
    dataset("id", str, {n});
    dataset("a", H5T_STD_U8LE, {n, 32});
    dataset("b", H5T_STD_U8LE, {n, 32});
    dataset("c", H5T_STD_U32LE, {n});
    dataset("expect", H5T_STD_U32LE, {n});
  }
  hostile::set_string_attr(file, "/", "format", mmaemu::recordings::kFormatName);
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"kind", "mma"},
                                                        {"fmt_a", "e4m3"},
                                                        {"fmt_b", "e4m3"},
                                                        {"preset", "hopper"},
                                                        {"c_policy", "zero"},
                                                        {"K", "32"},
                                                        {"count", std::to_string(n)}}) {
    hostile::set_string_attr(file, "/cases/huge", k, v);
  }
  ASSERT_LT(fs::file_size(file), 64u * 1024);
  const std::string msg = refused([&] { read_recording(file); });
  EXPECT_THAT(msg, HasSubstr(file.string()));
  EXPECT_THAT(msg, HasSubstr("cases/huge"));
  EXPECT_THAT(msg, HasSubstr("limit"));
}

TEST(RecordingHostile, GemmSizesOverTheLimitAreRefused) {
  TempDir dir("hostile");
  const fs::path file = dir / "gemm.h5";
  Recording rec;
  mmaemu::recordings::GemmCase c;
  c.id = "g/1";
  c.profile = "hopper";
  c.M = 1;
  c.N = 1;
  c.K = 1;
  c.a = {0x38};
  c.b = {0x38};
  c.expect = {0x3f800000u};
  rec.gemm.push_back({"g", {c}, {}});
  write_recording(file, rec);
  ASSERT_EQ(read_recording(file).gemm.at(0).cases.size(), 1u);
  const std::string obj = "/cases/g/000000";
  hostile::set_string_attr(file, obj, "M", "16777216");
  hostile::set_string_attr(file, obj, "N", "16777216");
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("M * N * K"));
  hostile::set_string_attr(file, obj, "M", "1");
  hostile::set_string_attr(file, obj, "N", "1");
  hostile::set_string_attr(file, obj, "fast", "yes"); // read as false before
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("fast"));
  hostile::set_string_attr(file, obj, "fast", "false");
  hostile::set_string_attr(file, obj, "scale_a_bits", "-1"); // 0xffffffff before
  EXPECT_THAT(refused([&] { read_recording(file); }), HasSubstr("scale_a_bits"));
}

// --- not files ----------------------------------------------------------------------------

// A FIFO, /dev/zero and a folder were refused before too (by a stat before opening, which a
// FIFO swapped in afterwards passed); now the one descriptor read is the one checked.
TEST(RecordingHostile, FifoIsRefusedWithoutBlocking) {
  TempDir dir("hostile");
  const fs::path fifo = dir / "pipe.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto result =
      std::async(std::launch::async, [&] { return refused([&] { read_recording(fifo); }); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); // unblock the reader
    if (fd >= 0)
      ::close(fd);
    FAIL() << "read_recording blocked on a FIFO";
  }
  const std::string msg = result.get();
  EXPECT_THAT(msg, HasSubstr(fifo.string()));
  EXPECT_THAT(msg, HasSubstr("FIFO"));
}

TEST(RecordingHostile, DevZeroIsRefused) {
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = refused([&] { read_recording("/dev/zero"); });
  EXPECT_THAT(msg, HasSubstr("/dev/zero"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RecordingHostile, FolderIsRefused) {
  TempDir dir("hostile");
  EXPECT_THAT(refused([&] { read_recording(dir.path()); }), HasSubstr("folder"));
}

// --- writing ------------------------------------------------------------------------------

TEST(RecordingHostile, OutputThatIsAnInputIsRefusedAndLeftAlone) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const std::string before = testsupport::read_text(file);
  Recording rec = hostile::small_recording(5);
  EXPECT_THAT(refused([&] { write_recording(file, rec, {file}); }), HasSubstr("input"));
  EXPECT_EQ(testsupport::read_text(file), before);
  EXPECT_EQ(testsupport::entries(dir.path()), std::vector<std::string>{"rec.h5"});
}

TEST(RecordingHostile, OutputThatIsAFolderIsRefused) {
  TempDir dir("hostile");
  fs::create_directory(dir / "out.h5");
  EXPECT_THAT(refused([&] { write_recording(dir / "out.h5", hostile::small_recording()); }),
              HasSubstr("folder"));
}

// --- the guard ----------------------------------------------------------------------------

TEST(RecordingGuard, ImageReadEqualsFileReadInEveryMode) {
  TempDir dir("hostile");
  const fs::path file = good_file(dir);
  const std::string bytes = testsupport::read_text(file);
  const Recording want = hostile::small_recording();
  for (ReadGuard g :
       {ReadGuard::child_process, ReadGuard::child_then_parent, ReadGuard::in_process}) {
    const Recording got = read_recording_image(bytes, "image.h5", g);
    ASSERT_EQ(got.mma.size(), 1u);
    EXPECT_EQ(got.mma[0].a, want.mma[0].a);
    EXPECT_EQ(got.mma[0].b, want.mma[0].b);
    EXPECT_EQ(got.mma[0].expect, want.mma[0].expect);
    EXPECT_EQ(got.mma[0].ids, want.mma[0].ids);
  }
}

using mmaemu::recordings::detail::GuardOutcome;
using mmaemu::recordings::detail::run_in_child;

TEST(RecordingGuard, CrashInTheChildBecomesARecordingError) {
  const GuardOutcome out = run_in_child(
      "x.h5",
      []() -> std::string {
        ::raise(SIGSEGV);
        return {};
      },
      0, 30);
  EXPECT_EQ(out.kind, GuardOutcome::failed);
  EXPECT_THAT(out.message, HasSubstr("x.h5: the HDF5 library crashed reading it (signal 11"));
  const GuardOutcome abrt = run_in_child(
      "x.h5", []() -> std::string { std::abort(); }, 0, 30);
  EXPECT_EQ(abrt.kind, GuardOutcome::failed);
  EXPECT_THAT(abrt.message, HasSubstr("signal 6"));
}

TEST(RecordingGuard, ChildOutcomesAreTold) {
  const GuardOutcome ok = run_in_child(
      "x.h5", [] { return std::string("result"); }, 0, 30);
  EXPECT_EQ(ok.kind, GuardOutcome::ok);
  EXPECT_EQ(ok.result, "result");
  const GuardOutcome err = run_in_child(
      "x.h5", []() -> std::string { throw RecordingError("x.h5: cases/s: bad"); }, 0, 30);
  EXPECT_EQ(err.kind, GuardOutcome::clean_error);
  EXPECT_EQ(err.message, "x.h5: cases/s: bad");
  const GuardOutcome oom = run_in_child(
      "x.h5", []() -> std::string { throw std::bad_alloc(); }, 1 << 30, 30);
  EXPECT_EQ(oom.kind, GuardOutcome::failed);
  EXPECT_THAT(oom.message, HasSubstr("memory"));
  const GuardOutcome other = run_in_child(
      "x.h5", []() -> std::string { throw std::logic_error("oops"); }, 0, 30);
  EXPECT_EQ(other.kind, GuardOutcome::failed);
  EXPECT_THAT(other.message, HasSubstr("oops"));
  const GuardOutcome quit = run_in_child(
      "x.h5", []() -> std::string { ::_exit(7); }, 0, 30);
  EXPECT_EQ(quit.kind, GuardOutcome::failed);
  EXPECT_THAT(quit.message, HasSubstr("exit status 7"));
}

TEST(RecordingGuard, LargeResultsArriveWholeAndOversizedOnesAreRefused) {
  std::string big(5u << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>(i * 2654435761u >> 24);
  const GuardOutcome ok = run_in_child(
      "x.h5", [&] { return big; }, 0, 60, big.size());
  ASSERT_EQ(ok.kind, GuardOutcome::ok);
  EXPECT_TRUE(ok.result == big);
  const GuardOutcome over = run_in_child(
      "x.h5", [&] { return big; }, 0, 60, big.size() / 2);
  EXPECT_EQ(over.kind, GuardOutcome::failed);
  EXPECT_THAT(over.message, HasSubstr("sent more than"));
}

TEST(RecordingGuard, ChildThatHangsIsKilledAtTheTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  const GuardOutcome out = run_in_child(
      "x.h5",
      []() -> std::string {
        ::pause();
        return {};
      },
      0, 0.5);
  EXPECT_EQ(out.kind, GuardOutcome::failed);
  EXPECT_THAT(out.message, HasSubstr("longer than 0.5 s"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RecordingSeeds, EveryFuzzSeedRecordingReads) {
  // fuzz/corpus/recording/ holds small valid recordings of every kind (and one in the HDF5
  // 1.10 object format with compact datasets): the fuzzer starts from files that read.
  const fs::path dir = fs::path(MMAEMU_SOURCE_DIR) / "fuzz" / "corpus" / "recording";
  if (!fs::is_directory(dir))
    GTEST_SKIP() << dir << " is absent";
  // over-budget-*.h5 start the fuzzer at the budget checks (docs/recordings.md, "Budgets"):
  // each is refused by one, naming the file.
  int n = 0, over = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    EXPECT_LT(fs::file_size(e.path()), 96u * 1024);
    if (e.path().filename().string().rfind("over-budget-", 0) == 0) {
      const std::string msg = refused([&] { read_recording(e.path()); });
      EXPECT_THAT(msg, HasSubstr(e.path().string()));
      EXPECT_THAT(msg, AnyOf(HasSubstr("bytes in memory (16 MiB plus the file's"),
                             HasSubstr("over the budget of")));
      ++over;
      continue;
    }
    const Recording rec = read_recording(e.path());
    EXPECT_GT(rec.mma.size() + rec.gemm.size() + rec.gemm_call.size(), 0u);
    ++n;
  }
  EXPECT_GE(n, 5);
  EXPECT_GE(over, 2);
  const Recording compact = read_recording(dir / "mma-compact-v110.h5");
  ASSERT_EQ(compact.mma.size(), 1u);
  EXPECT_EQ(compact.mma[0].expect, (std::vector<std::uint32_t>{0x40400000u, 0xc3e00000u}));
  EXPECT_EQ(compact.mma[0].attrs.at("gpu"), "H100");
}

TEST(RecordingGuard, LibHdf5LoopOnACorruptGlobalHeapEndsAtTheTimeLimit) {
  // Found by fuzz_recording: libhdf5 1.10 spins forever in H5HG_read (an attribute's
  // variable-length string in a corrupt global heap). In process this never returns.
  const fs::path file =
      fs::path(MMAEMU_SOURCE_DIR) / "recordings" / "tests" / "data" / "global-heap-loop.h5";
  const std::string bytes = testsupport::read_text(file);
  ASSERT_GT(bytes.size(), 1000u);
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = refused(
      [&] { read_recording_image(bytes, "global-heap-loop.h5", ReadGuard::child_process, 1.0); });
  EXPECT_THAT(msg, HasSubstr("global-heap-loop.h5: reading it took longer than 1 s"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}
