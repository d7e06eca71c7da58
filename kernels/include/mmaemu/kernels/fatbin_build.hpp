// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Building the release fatbins of kernels/cuda/ with nvcc (`mmaemu fatbin build`), and the
// pieces of that build that can be tested without nvcc: the nvcc version, the ptxas -v report,
// the fatbin container's listing, the forbidden-PTX grep (seed 000, "Building fatbins").

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu::kernels {

// The oldest nvcc a build accepts: 12.8 is the first that knows sm_100 and sm_120.
inline constexpr int kMinNvccMajor = 12;
inline constexpr int kMinNvccMinor = 8;

struct NvccVersion {
  int major = 0;
  int minor = 0;
  std::string full; // "13.0.88" (from "V13.0.88"), or "13.0" when no V field is printed
  bool at_least(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
};

// The version in `nvcc --version` (or `cuobjdump --version`) output: the "release X.Y" field,
// with the "VX.Y.Z" field as `full`. Nothing when the text has no release field.
std::optional<NvccVersion> parse_nvcc_version(std::string_view text);

// The nvcc to use: `explicit_path` when not empty, else $NVCC, else $CUDA_HOME/bin/nvcc, else
// nvcc in PATH, else /usr/local/cuda/bin/nvcc. Nothing when none of these names a file.
std::optional<std::filesystem::path> find_nvcc(const std::string& explicit_path);

// What ptxas -v said about one entry function compiled for one architecture.
struct PtxasArch {
  int arch = 0; // 90 for sm_90
  std::string function;
  int registers = 0;
  int barriers = 0;
  std::int64_t stack_frame = 0; // bytes
  std::int64_t spill_stores = 0;
  std::int64_t spill_loads = 0;
  std::int64_t smem = 0;             // static shared memory, bytes
  std::vector<std::string> warnings; // warning lines printed while this architecture compiled
  bool spills() const { return spill_stores > 0 || spill_loads > 0; }
};

struct PtxasReport {
  std::vector<PtxasArch> archs;      // in the order ptxas printed them
  std::vector<std::string> warnings; // warning lines not tied to one architecture (front end)
};

// Parses the combined output of `nvcc -Xptxas -v` (one ptxas run per SASS architecture).
PtxasReport parse_ptxas_report(std::string_view output);

// One entry of a fatbin container: SASS (an ELF cubin) or PTX, for one architecture.
struct FatbinImageEntry {
  enum class Kind { ptx, elf };
  Kind kind = Kind::elf;
  int arch = 0;           // 90 for sm_90 / compute_90
  std::uint64_t size = 0; // payload bytes as stored (compressed or not)
  bool compressed = false;
};

// The entries of a fatbin file's bytes (the container nvcc -fatbin writes: magic 0xBA55ED50,
// then entry headers with kind and architecture). Throws std::runtime_error naming the offset
// when the bytes are not such a container (truncated, bad magic, entry past the end).
std::vector<FatbinImageEntry> list_fatbin(std::string_view bytes);

// `cuobjdump --list-elf --list-ptx` style lines for `module`'s entries:
//   ELF file    1: v1.1.sm_75.cubin
//   PTX file    1: v1.1.sm_75.ptx
std::string format_fatbin_listing(std::string_view module,
                                  const std::vector<FatbinImageEntry>& entries);

// The (kind, arch) pairs that a `cuobjdump --list-elf --list-ptx` output names (lines
// "ELF file N: name.sm_XY.cubin" and "PTX file N: name.sm_XY.ptx").
std::vector<FatbinImageEntry> parse_cuobjdump_listing(std::string_view text);

// Problems of a listing against the requested architectures, one line each ("missing SASS
// sm_90", "unexpected PTX compute_80", "SASS sm_75 listed twice"); empty when they match.
std::vector<std::string> compare_listing(const std::vector<FatbinImageEntry>& listed,
                                         const std::vector<int>& sass, int ptx);

// Lines of `ptx` that use fma.rz.bf16 or fma.rz.bf16x2 (which ptxas 12.0-13.3 miscompiles),
// as "line N: <text>".
std::vector<std::string> forbidden_ptx_lines(std::string_view ptx);

// The files sources_sha256() covers, read from a folder: every *.cu and *.cuh directly in
// `dir` (regular files). Throws support::FileError naming the folder or a file.
struct SourceDir {
  std::vector<std::string> names;    // sorted
  std::vector<std::string> contents; // in the order of names
};
SourceDir read_source_dir(const std::filesystem::path& dir);

// sources_sha256_of (kernel_sources.hpp) over read_source_dir(dir).
std::string sources_sha256_of_dir(const std::filesystem::path& dir);

struct FatbinBuildOptions {
  bool release = false;             // -O3 --fmad=false; otherwise also -lineinfo
  std::filesystem::path out;        // where the fatbins and their manifest go
  std::string nvcc;                 // empty: find_nvcc's order
  std::filesystem::path sources;    // empty: the kernels/cuda folder this binary was built from
  std::vector<std::string> modules; // empty: every kernel of kernel_specs()
  bool allow_spills = false;
  double timeout_s = 900;                           // per nvcc run
  std::function<void(const std::string&)> progress; // one line per step (stderr in the CLI)
};

struct FatbinBuildResult {
  // 0 built and moved into place; 1 the build or a check failed (old files left intact);
  // 2 bad options (unknown module, no nvcc, nvcc too old, no sources).
  int status = 1;
  std::vector<std::string> problems; // one line each, naming the module and architecture
  std::string nvcc_version;          // "13.0.88"
  std::string source_sha256;
  std::vector<std::string> built; // modules built by this run
  std::string report_json;        // build_report.json as written (or as it would have been)
};

// Builds `modules` with nvcc into a temporary folder beside `out`, checks them (spills,
// forbidden PTX, listing equal to the KernelSpecs), then moves the fatbins, build_report.json,
// cuobjdump.txt and manifest.json (last) into `out`. With a subset of modules the other entries
// of an existing manifest are kept; they must have been built with the same nvcc and flags.
// Never throws for a failing compiler; the result says what happened.
FatbinBuildResult build_fatbins(const FatbinBuildOptions& options);

// The kernels/cuda folder this binary was built from (compiled in); may no longer exist.
std::filesystem::path default_kernel_source_dir();

struct FatbinCheckResult {
  int status = 0; // 0 consistent; 1 stale or mismatched; 2 manifest damaged or bad arguments
  std::vector<std::string> problems; // one line each, naming the file
};

// Hashes only, no nvcc: the manifest in `dir` against its files (sha256, and the container's
// architectures against the manifest entry and the KernelSpec), and its source_sha256 against
// the embedded sources or, when `sources` is not empty, the *.cu/*.cuh files of that folder
// (the files that differ from the embedded copy are named when the embedded sources are the
// ones the manifest was built from). Never throws.
FatbinCheckResult check_fatbin_dir(const std::filesystem::path& dir,
                                   const std::filesystem::path& sources = {});

} // namespace mmaemu::kernels
