// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Importing a set in the layout of the public hardware vectors (shared/truth-public/README.md):
// a_<GPU>_<FMT>.txt, b_<GPU>_<FMT>.txt, c_<GPU>_fp32.txt, d_<GPU>_fp32.txt, and for fp16 sets
// d_<GPU>_fp16.txt when present (FMT: E4M3, E5M2, fp16, bf16, tf32).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::recordings {

// The platform behind a GPU name of the public sets.
struct GpuMapping {
  std::string preset;   // "hopper", "ada", "b200_mma_sync"
  std::string c_policy; // "zero" (wgmma, c file unused) or "from_file"
  std::string instruction;
};

// H100, H200, GH200 -> hopper; Ada, L40S, L40, L4, RTX40xx and names containing "Ada" -> ada;
// B200 -> b200_mma_sync. Nothing for an unknown name.
std::optional<GpuMapping> map_gpu(const std::string& gpu);

// The same for a set of operand format fmt: FP8 as above; fp16, bf16 and tf32 sets map to
// <arch>_<fmt> (V100 -> volta; A100, A2, A10, A30, A40, RTX30xx -> ampere; the Ada names ->
// ada; H100, H200, GH200, H800, H20 -> hopper), c from the file (wmma from c). Nothing for an
// unknown name or a preset that does not exist (volta has only fp16).
std::optional<GpuMapping> map_gpu(const std::string& gpu, Format fmt);

// The most values a line of a 16-bit or tf32 set may hold (its K is the first line's count).
inline constexpr std::uint32_t kMaxWideK = 64;

struct ImportOptions {
  std::optional<std::string> preset; // overrides the GPU mapping (and allows unknown GPUs)
  std::uint32_t K = 0; // values per line: 0 = the layout's (FP8: 32; fp16, bf16, tf32: the
                       // first line's count, at most kMaxWideK); any other value is required
  std::string source =
      "F. A. Khattak and M. Mikaitis, \"Accurate Models of NVIDIA Tensor Cores\", ACM TACO "
      "(2025); repository north-numerical-computing/MATLAB-tensor-core, model_validation/";
  std::string licence = "BSD-2-Clause (LICENSE.upstream)";
};

// An error in an input file; the message is "FILE[:LINE]: what".
class ImportError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Reads one set folder into a recording of one mma batch (two for an fp16 set with a
// d_<GPU>_fp16.txt: <GPU>_FP16 with an fp32 accumulator and <GPU>_FP16_FP16ACC with an fp16
// one, c rounded to fp16 as the recorder did). Each file is read once (regular
// files only, at most support::kMaxTextBytes; a FIFO or device is refused without blocking),
// hashed from the bytes read and parsed from memory (import_public_texts). Throws ImportError.
Recording import_public_set(const std::filesystem::path& set_dir, const ImportOptions& opt = {});

// The files of the set in `set_dir` (a, b, c, d, and d_<GPU>_fp16.txt when read): what
// import_public_set reads, so that a caller can refuse an output path that is one of them.
// Throws ImportError.
std::vector<std::filesystem::path> public_set_files(const std::filesystem::path& set_dir);

// One set's four texts, already in memory. The paths stand for the files in messages
// ("PATH:LINE: what", echoed tokens escaped and cut) and their file names key the provenance
// hashes ("sha256:<file name>", of the text given).
struct PublicSetTexts {
  std::string gpu; // as in the file names: picks the preset and c policy (map_gpu)
  Format fmt_a = Format::e4m3, fmt_b = Format::e4m3;
  std::filesystem::path a_path, b_path, c_path, d_path;
  std::string a, b, c, d;
  std::filesystem::path d16_path; // empty: no fp16-accumulator file
  std::string d16;
};

// Parses one set from memory: what import_public_set does after reading the files (and the
// entry point of the fuzz target). Throws ImportError.
Recording import_public_texts(const PublicSetTexts& set, const ImportOptions& opt = {});

} // namespace mmaemu::recordings
