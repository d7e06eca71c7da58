// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What the files of the recording format share (private to the recordings library): the names
// and spellings of the mmaemu-recording/1 layout that recording_write.cpp writes and
// recording_read.cpp expects (docs/recordings.md), and the overflow-checked product that the
// reader and check_batch (recording.cpp) size arrays with.

#include <cstdint>
#include <cstdio>
#include <string>

namespace mmaemu::recordings::detail {

// The group that holds the sets, below the file's root.
inline constexpr const char* kCasesGroup = "cases";

// Binary32 bits as the writer spells them (and as messages show them): "0x" and 8 hex digits.
inline std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// a * b into `out`; false when it overflows.
inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

} // namespace mmaemu::recordings::detail
