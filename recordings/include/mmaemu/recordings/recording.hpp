// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The recording format mmaemu-recording/1 (docs/recordings.md): HDF5 files that hold
// hardware cases as raw codes and expected output bits, with their provenance.

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmaemu/emulator/format.hpp"

namespace mmaemu::recordings {

inline constexpr const char* kFormatName = "mmaemu-recording/1";

// A recording file that cannot be read or written: the message names the file.
class RecordingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Provenance and other string attributes, sorted by key.
using Attributes = std::map<std::string, std::string>;

// A group of instruction-level ("mma") cases that share their parameters: case i is the
// chain d = chain(a[i][0..K), b[i][0..K), c[i]) of `preset`.
struct MmaBatch {
  std::string name;  // the set, e.g. "H100_E4M3"; unique in a file
  Format fmt_a = Format::e4m3;
  Format fmt_b = Format::e4m3;
  std::string preset;       // a shipped preset name
  std::uint32_t K = 0;
  std::string c_policy;     // "from_file": c is the hardware's input; "zero": accumulator zeroed
  std::vector<std::string> ids;    // stable case IDs, "<set>/<line>"
  std::vector<std::uint8_t> a;     // [n][K] codes
  std::vector<std::uint8_t> b;     // [n][K] codes
  std::vector<std::uint32_t> c;    // [n] binary32 bits: the chain's accumulator input
  std::vector<std::uint32_t> expect;  // [n] binary32 bits the hardware produced
  Attributes attrs;                // provenance: source, licence, gpu, sha256:<file>, ...

  std::size_t size() const { return ids.size(); }
};

struct Recording {
  Attributes attrs;  // file-level attributes (format and created_by are added on write)
  std::vector<MmaBatch> mma;

  std::size_t case_count() const;
};

// Checks the internal consistency of a batch (sizes, K, names); throws RecordingError
// prefixed with `where`.
void check_batch(const MmaBatch& b, const std::string& where);

// Writes a recording: a temporary file beside `path`, renamed into place when complete, so
// that a failure never leaves a partial file. Throws RecordingError.
void write_recording(const std::filesystem::path& path, const Recording& rec);

// Reads a recording; throws RecordingError naming the file if it is missing, not HDF5,
// truncated, of another format, or inconsistent.
Recording read_recording(const std::filesystem::path& path);

}  // namespace mmaemu::recordings
