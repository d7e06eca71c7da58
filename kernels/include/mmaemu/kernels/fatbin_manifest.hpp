// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The release fatbins' manifest, kernels/bin/manifest.json, format mmaemu-fatbin/1:
//   {"format": "mmaemu-fatbin/1", "source_sha256": "<hex>", "nvcc": "12.8.61",
//    "flags": ["-O3", "--fmad=false"],
//    "modules": [{"module": "v1", "file": "v1.fatbin", "sha256": "<hex>",
//                 "sass": [75, 80, ...], "ptx": 75}]}
// "ptx" is null (or absent) for a module without PTX. source_sha256 is sources_sha256()
// (kernel_sources.hpp) of the sources the fatbins were built from.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::kernels {

inline constexpr std::string_view kFatbinFormat = "mmaemu-fatbin/1";
inline constexpr std::string_view kManifestName = "manifest.json";
inline constexpr std::uint64_t kMaxManifestBytes = 1u << 20;
inline constexpr std::uint64_t kMaxFatbinBytes = 256u << 20;

// A manifest that cannot be used: unreadable, not JSON, or not mmaemu-fatbin/1. One line
// that names the file (or "manifest" for text) and what is wrong.
class ManifestError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "ManifestError"; }
};

struct FatbinEntry {
  std::string module; // "v1": the KernelSpec's source stem
  std::string file;   // "v1.fatbin", in the manifest's folder
  std::string sha256; // of the file, lower-case hex
  std::vector<int> sass;
  std::optional<int> ptx;
};

struct FatbinManifest {
  std::string format{kFatbinFormat};
  std::string source_sha256;
  std::string nvcc;
  std::vector<std::string> flags;
  std::vector<FatbinEntry> modules;

  // The entry of `module`, or nullptr.
  const FatbinEntry* find(std::string_view module) const;
};

// Throws ManifestError unless: the format is mmaemu-fatbin/1, source_sha256 and every
// sha256 are 64 lower-case hex digits, module names are unique non-empty plain words
// ([A-Za-z0-9_]), file names are non-empty without '/', '\\', NUL or a leading '.',
// architectures are in 30..199.
void validate_manifest(const FatbinManifest& m);

// Parses and validates manifest text; `origin` names it in errors. Throws ManifestError
// (never anything else, whatever the bytes).
FatbinManifest parse_manifest(std::string_view text, std::string_view origin = "manifest");

// Reads `path` (a regular file of at most kMaxManifestBytes) and parses it. Throws
// ManifestError naming the path.
FatbinManifest read_manifest(const std::filesystem::path& path);

// The manifest as JSON text (keys in the order above, two-space indent, final newline).
// Validates first (ManifestError).
std::string manifest_to_json(const FatbinManifest& m);

// Validates and writes atomically (temporary file + rename). Throws ManifestError or
// support::FileError.
void write_manifest(const std::filesystem::path& path, const FatbinManifest& m);

// Where release fatbins are looked for: $MMAEMU_FATBIN_DIR when set (even if it does not
// exist); otherwise the first existing folder of <dir of /proc/self/exe>/kernels/bin,
// <dir of exe>/../share/mmaemu/kernels/bin and the source tree's kernels/bin (compiled in);
// the source tree's when none exists.
std::filesystem::path fatbin_dir();

// Whether SASS for sm_`sass` runs on a device of capability `cc`: same major, minor at
// least sass's (sm_86 runs on 8.6 and 8.9, sm_80 on every 8.x, never on 9.0).
bool sass_runs_on(int sass, int cc);

// Whether PTX compute_`ptx` can be JIT-compiled for `cc`: cc >= ptx.
bool ptx_runs_on(int ptx, int cc);

// Whether `entry` has SASS that runs on `cc` or PTX that JITs for it.
bool can_run(const FatbinEntry& entry, int cc);

// Every problem of the fatbins in `dir`, one line each; empty when they are usable:
// the manifest unreadable or invalid; its source_sha256 stale against the embedded sources;
// a kernel of kernel_specs() without an entry; an entry's file missing or its sha256
// different; an entry's architectures different from its KernelSpec's.
std::vector<std::string> check_fatbins(const std::filesystem::path& dir);

} // namespace mmaemu::kernels
