// SPDX-License-Identifier: BSD-2-Clause
// The byte-flip campaign: every committed public recording with seeded single-byte flips and
// truncations, each read with read_recording. The only allowed outcomes are a clean
// RecordingError naming the file and a successful read; a crash of libhdf5 (it has many on
// such files) must end as a RecordingError through the child-process guard, never in this
// process. The tally is printed.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "mmaemu/recordings/recording.hpp"
#include "public_set_writer.hpp"

namespace fs = std::filesystem;
using mmaemu::recordings::read_recording;
using mmaemu::recordings::RecordingError;
using testsupport::TempDir;

namespace {

constexpr int kFlipsPerFile = 320;
constexpr int kTruncationsPerFile = 24;
// The ten 16-bit and tf32 recordings share the reader's paths but their operand datasets
// (uint16 / uint32): fewer flips each keep the campaign's time near what it was.
constexpr int kFlipsPerWideFile = 96;
constexpr int kTruncationsPerWideFile = 8;
constexpr unsigned kSeed = 20240611u;

std::vector<fs::path> committed_recordings() {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(MMAEMU_SOURCE_DIR) / "recordings" / "data" / "public";
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".h5")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Tally {
  int tried = 0, read_ok = 0, refused = 0, crashed_in_child = 0;
  int same_cases = 0, other_attrs = 0, other_cases = 0; // of the successful reads
  int other_codes = 0; // of other_cases: codes or bits changed (not only IDs or names)
};

bool same_cases(const mmaemu::recordings::Recording& x, const mmaemu::recordings::Recording& y) {
  if (x.mma.size() != y.mma.size())
    return false;
  for (std::size_t i = 0; i < x.mma.size(); ++i) {
    const auto &a = x.mma[i], &b = y.mma[i];
    if (a.name != b.name || a.fmt_a != b.fmt_a || a.fmt_b != b.fmt_b || a.preset != b.preset ||
        a.K != b.K || a.c_policy != b.c_policy || a.ids != b.ids || a.a != b.a || a.b != b.b ||
        a.a_wide != b.a_wide || a.b_wide != b.b_wide || a.acc != b.acc || a.c != b.c ||
        a.expect != b.expect) {
      return false;
    }
  }
  return true;
}

bool same_attrs(const mmaemu::recordings::Recording& x, const mmaemu::recordings::Recording& y) {
  if (x.attrs != y.attrs || x.mma.size() != y.mma.size())
    return false;
  for (std::size_t i = 0; i < x.mma.size(); ++i) {
    if (x.mma[i].attrs != y.mma[i].attrs)
      return false;
  }
  return true;
}

// Reads `file`, which holds `bytes`: a test failure on any outcome other than a successful
// read or a RecordingError naming the file. Successful reads are compared with `original`.
void read_one(const fs::path& file, const std::string& bytes, const std::string& what,
              const mmaemu::recordings::Recording& original, Tally& t) {
  testsupport::write_text(file, bytes);
  ++t.tried;
  try {
    const auto rec = read_recording(file);
    ++t.read_ok;
    if (!same_cases(rec, original)) {
      ++t.other_cases;
      bool codes = rec.mma.size() != original.mma.size();
      for (std::size_t j = 0; !codes && j < rec.mma.size(); ++j) {
        const auto &x = rec.mma[j], &y = original.mma[j];
        codes = x.a != y.a || x.b != y.b || x.a_wide != y.a_wide || x.b_wide != y.b_wide ||
                x.c != y.c || x.expect != y.expect;
      }
      if (codes)
        ++t.other_codes;
    } else if (!same_attrs(rec, original)) {
      ++t.other_attrs;
    } else {
      ++t.same_cases;
    }
  } catch (const RecordingError& e) {
    const std::string msg = e.what();
    ++t.refused;
    if (msg.find("crashed") != std::string::npos)
      ++t.crashed_in_child;
    EXPECT_EQ(msg.rfind(file.string(), 0), 0u) << what << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a RecordingError: " << e.what();
  } catch (...) {
    ADD_FAILURE() << what << ": an exception of unknown type";
  }
}

} // namespace

TEST(RecordingFlips, FlippedAndTruncatedCommittedRecordingsReadOrAreRefusedCleanly) {
  const auto files = committed_recordings();
  ASSERT_GE(files.size(), 2u);
  TempDir dir("flips");
  const fs::path target = dir / "flipped.h5";
  Tally total;
  const auto start = std::chrono::steady_clock::now();
  for (const fs::path& src : files) {
    const std::string original = testsupport::read_text(src);
    ASSERT_GT(original.size(), 4096u) << src;
    // The original reads (the flips start from a good file).
    mmaemu::recordings::Recording good;
    ASSERT_NO_THROW(good = read_recording(src)) << src;
    std::mt19937_64 rng(kSeed ^ std::hash<std::string>{}(src.filename().string()));
    Tally t;
    const bool wide = !good.mma.empty() && good.mma[0].wide();
    const int flips = wide ? kFlipsPerWideFile : kFlipsPerFile;
    const int truncations = wide ? kTruncationsPerWideFile : kTruncationsPerFile;
    for (int i = 0; i < flips; ++i) {
      // Half the flips in the first 16 KiB, where the superblock, the object headers and the
      // first B-tree nodes are; half anywhere (mostly the compressed chunks).
      const std::size_t span =
          i % 2 ? original.size() : std::min<std::size_t>(original.size(), 16384);
      const std::size_t at = static_cast<std::size_t>(rng() % span);
      const auto x = static_cast<unsigned char>(1 + rng() % 255);
      std::string bytes = original;
      bytes[at] = static_cast<char>(static_cast<unsigned char>(bytes[at]) ^ x);
      char what[128];
      std::snprintf(what, sizeof what, "%s: byte %zu ^ 0x%02x", src.filename().c_str(), at, x);
      read_one(target, bytes, what, good, t);
    }
    for (int i = 0; i < truncations; ++i) {
      const std::size_t len = static_cast<std::size_t>(rng() % original.size());
      char what[128];
      std::snprintf(what, sizeof what, "%s: cut to %zu bytes", src.filename().c_str(), len);
      read_one(target, original.substr(0, len), what, good, t);
    }
    std::printf("[ flips    ] %s: %d reads (%d flips, %d truncations): %d refused (%d of them "
                "crashes of libhdf5 caught in the child), %d read (%d with the same cases and "
                "attributes, %d other attributes only, %d other cases, %d of them with other codes "
                "or bits)\n",
                src.filename().c_str(), t.tried, flips, truncations, t.refused, t.crashed_in_child,
                t.read_ok, t.same_cases, t.other_attrs, t.other_cases, t.other_codes);
    total.tried += t.tried;
    total.read_ok += t.read_ok;
    total.refused += t.refused;
    total.crashed_in_child += t.crashed_in_child;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ flips    ] total: %d reads, %d read, %d refused (%d crashes caught), %.1f s, "
              "seed %u\n",
              total.tried, total.read_ok, total.refused, total.crashed_in_child, seconds, kSeed);
  EXPECT_EQ(total.read_ok + total.refused, total.tried);
}
