// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The recording format mmaemu-recording/1 (docs/recordings.md): HDF5 files that hold
// hardware cases as raw codes and expected output bits, with their provenance.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/emulator/format.hpp"

namespace mmaemu::recordings {

inline constexpr const char* kFormatName = "mmaemu-recording/1";

// Limits of the reader, checked from the declared shapes before anything is allocated (the
// file itself is at most support::kMaxRecordingBytes). docs/recordings.md lists them.
inline constexpr std::uint64_t kMaxDatasetBytes = 256ull << 20;  // one dataset, in memory
inline constexpr std::uint64_t kMaxDecodedBytes = 1ull << 30;    // all datasets of a file
inline constexpr std::uint64_t kMaxChunkBytes = 256ull << 20;    // one declared chunk
inline constexpr std::uint64_t kMaxDim = 1ull << 24;             // mma K; gemm M, N and K
inline constexpr std::uint64_t kMaxGemmMacs = 1ull << 36;        // M * N * K of a gemm case
inline constexpr std::uint64_t kMaxAttributeBytes = 16ull << 20; // one string attribute
inline constexpr std::uint64_t kMaxIdBytes = 4096;               // one case ID
inline constexpr std::uint64_t kMaxLinksPerGroup = 1ull << 20;   // members of one group
inline constexpr std::uint64_t kMaxAttributesPerObject = 1ull << 16;

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
  std::string name; // the set, e.g. "H100_E4M3"; unique in a file
  Format fmt_a = Format::e4m3;
  Format fmt_b = Format::e4m3;
  std::string preset; // a shipped preset name
  std::uint32_t K = 0;
  std::string c_policy; // "from_file": c is the hardware's input; "zero": accumulator zeroed
  std::vector<std::string> ids;      // stable case IDs, "<set>/<line>"
  std::vector<std::uint8_t> a;       // [n][K] FP8 codes (empty for the wide formats)
  std::vector<std::uint8_t> b;       // [n][K] FP8 codes (empty for the wide formats)
  std::vector<std::uint32_t> c;      // [n] binary32 bits: the chain's accumulator input
  std::vector<std::uint32_t> expect; // [n] binary32 bits the hardware produced
  Attributes attrs;                  // provenance: source, licence, gpu, sha256:<file>, ...
  // fp16, bf16 and tf32 operands (fmt_a == fmt_b, not FP8): [n][K] codes in the low bits
  // (16-bit codes; tf32: 19-bit codes), in place of a and b.
  std::vector<std::uint32_t> a_wide;
  std::vector<std::uint32_t> b_wide;
  // The accumulator of the instruction: fp32, or fp16 (an fp16 preset's fp16 accumulator;
  // c and expect then hold the binary32 patterns of fp16 values, as the public
  // d_<GPU>_fp16.txt files do).
  Format acc = Format::fp32;

  std::size_t size() const { return ids.size(); }
  bool wide() const { return !is_fp8(fmt_a); }
};

// One GEMM-level case (kind "gemm"): a normalised scaled_mm call on operands of the
// standard layout, with the output bits the hardware produced or the error it raised.
struct GemmCase {
  std::string id;
  std::string api = "scaled_mm"; // "scaled_mm" or "accumulate" (accumulator + epilogue)
  std::string profile;           // the platform it was recorded on (a profile name)
  Format fmt_a = Format::e4m3, fmt_b = Format::e4m3, out_dtype = Format::bf16;
  bool fast = false;
  std::uint32_t scale_a_bits = 0x3F800000u, scale_b_bits = 0x3F800000u;
  std::optional<std::uint32_t> scale_result_bits;
  std::string splitk = "1"; // the recorded configuration: "1" or "S,scheme"
  std::uint64_t M = 0, N = 0, K = 0;
  std::vector<std::uint8_t> a;       // [M][K] codes
  std::vector<std::uint8_t> b;       // [N][K] codes (mat2 transposed)
  std::vector<std::uint32_t> expect; // [M][N] output bits (low bits for 8/16-bit dtypes)
  std::string expect_error;          // non-empty: the exact mmaemu error class expected
  Attributes attrs;
};

struct GemmBatch {
  std::string name;
  std::vector<GemmCase> cases;
  Attributes attrs;
};

// One output of an exact recorded call.
struct GemmCallOutput {
  std::string name;
  std::optional<Format> out_dtype; // none: the call left out_dtype to its default
  bool fast = false;
  std::string splitk = "1";
  std::vector<std::int64_t> shape;   // expected result shape
  std::vector<std::uint32_t> expect; // output bits in row-major order
  std::string expect_error;          // non-empty: the exact error class expected
};

// One exact call (kind "gemm_call"): the call's layouts, padding, offsets, scales, bias,
// out= and grad mode in `call_json` (docs/recordings.md), the operands' raw storage, and
// every output recorded for it.
struct GemmCall {
  std::string id;
  std::string call_json;
  std::vector<std::uint8_t> input_storage;
  std::vector<std::uint8_t> mat2_storage;
  std::vector<GemmCallOutput> outputs;
  Attributes attrs;
};

struct GemmCallBatch {
  std::string name;
  std::vector<GemmCall> calls;
  Attributes attrs;
};

struct Recording {
  Attributes attrs; // file-level attributes (format and created_by are added on write)
  std::vector<MmaBatch> mma;
  std::vector<GemmBatch> gemm;
  std::vector<GemmCallBatch> gemm_call;

  std::size_t case_count() const;
};

// Checks the internal consistency of a batch (sizes, K, names); throws RecordingError
// prefixed with `where`.
void check_batch(const MmaBatch& b, const std::string& where);

// Writes a recording: a temporary file beside `path`, fsync'd and renamed into place when
// complete (support::write_file_atomic_with), so that a failure never leaves a partial file.
// Refuses a `path` that is a folder, device or FIFO, or the same file as one of `inputs`.
// Throws RecordingError.
void write_recording(const std::filesystem::path& path, const Recording& rec,
                     const std::vector<std::filesystem::path>& inputs = {});

// How a recording is parsed. libhdf5 1.10 crashes, loops and is not even deterministic on
// corrupt files, so by default it runs only in a forked child process, which sends back what
// it read (checked again on arrival); a crash, a time-out or an exhausted memory limit in the
// child becomes a RecordingError.
enum class ReadGuard {
  child_process,     // the default: libhdf5 never runs on the bytes in the calling process
  child_then_parent, // for fuzzing: when the child ended cleanly (read or RecordingError),
                     // the calling process parses the bytes too, so that libFuzzer sees the
                     // coverage of the reader; a libhdf5 that behaves differently the second
                     // time can crash the caller, so not for untrusted input otherwise
  in_process,        // no child: only for bytes known to be good (written by this process)
};

// Reads a recording; throws RecordingError naming the file if it is missing, not a regular
// file, over support::kMaxRecordingBytes, not HDF5, truncated, of another format,
// inconsistent, over one of the limits above, or if it uses a feature the reader refuses:
// links other than hard links, external storage, virtual datasets, filters other than
// deflate and shuffle, datasets of another class, sign, size or rank than the format's,
// attributes that are not scalar strings, numbers that are not canonical decimals. The file
// is read once into memory and parsed from there (the HDF5 core driver: nothing else on disk
// is opened).
Recording read_recording(const std::filesystem::path& path,
                         ReadGuard guard = ReadGuard::child_process);

// The same for a file image already in memory; `name` stands for the file in messages.
// `child_timeout_s` bounds the child's parse (libhdf5 loops forever on some corrupt global
// heaps); 0: 20 s plus 1 s per 2 MiB of file.
Recording read_recording_image(std::string_view bytes, const std::string& name,
                               ReadGuard guard = ReadGuard::child_process,
                               double child_timeout_s = 0);

} // namespace mmaemu::recordings
