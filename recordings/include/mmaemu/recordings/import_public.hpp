// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Importing a set in the layout of the public hardware vectors (shared/truth-public/README.md):
// a_<GPU>_<FMT>.txt, b_<GPU>_<FMT>.txt, c_<GPU>_fp32.txt, d_<GPU>_fp32.txt.

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

struct ImportOptions {
  std::optional<std::string> preset; // overrides the GPU mapping (and allows unknown GPUs)
  std::uint32_t K = 32;              // values per line that the layout requires
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

// Reads one set folder into a recording of one mma batch. Each file is read once (regular
// files only, at most support::kMaxTextBytes; a FIFO or device is refused without blocking),
// hashed from the bytes read and parsed from memory (import_public_texts). Throws ImportError.
Recording import_public_set(const std::filesystem::path& set_dir, const ImportOptions& opt = {});

// The four files of the set in `set_dir` (a, b, c, d): what import_public_set reads, so that a
// caller can refuse an output path that is one of them. Throws ImportError.
std::vector<std::filesystem::path> public_set_files(const std::filesystem::path& set_dir);

// One set's four texts, already in memory. The paths stand for the files in messages
// ("PATH:LINE: what", echoed tokens escaped and cut) and their file names key the provenance
// hashes ("sha256:<file name>", of the text given).
struct PublicSetTexts {
  std::string gpu; // as in the file names: picks the preset and c policy (map_gpu)
  Format fmt_a = Format::e4m3, fmt_b = Format::e4m3;
  std::filesystem::path a_path, b_path, c_path, d_path;
  std::string a, b, c, d;
};

// Parses one set from memory: what import_public_set does after reading the files (and the
// entry point of the fuzz target). Throws ImportError.
Recording import_public_texts(const PublicSetTexts& set, const ImportOptions& opt = {});

} // namespace mmaemu::recordings
