// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Gate verdicts (seed 000, "Gates and the verdict cache"), in memory and in
// <cache_dir()>/verdicts/<key>.json. The key (verdict_key) covers the GPU UUID, the compute
// capability, the driver version, the mmaemu version, the sha256 of the loaded module image,
// and the gate's name and version. A damaged or foreign file is treated as missing (the gate
// runs again) and replaced at the next store. Files are written to a temporary name and
// renamed, so concurrent writers never leave a torn file.

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::kernels {

inline constexpr std::string_view kVerdictFormat = "mmaemu-verdict/1";
inline constexpr std::uint64_t kMaxVerdictBytes = 64u << 10;

struct Verdict {
  bool passed = false;
  std::string detail;
};

struct VerdictKeyFields {
  std::string gpu_uuid;
  int cc = 0;
  int driver_version = 0;
  std::string mmaemu_version; // empty: mmaemu_version()
  std::string image_sha256;
  std::string gate;
  int gate_version = 0;
};

// The version verdict keys carry (the project's version, e.g. "0.1.0").
const std::string& mmaemu_version();

// Lower-case hex SHA-256 of the canonical JSON (sorted keys, no spaces) of {"cc",
// "driver_version", "gate", "gate_version", "gpu_uuid", "image_sha256", "mmaemu_version"}.
std::string verdict_key(const VerdictKeyFields& fields);

class VerdictCache {
public:
  // Verdict files live in `dir`; without one, in cache_subdir("verdicts") resolved at each
  // call (a cache folder that cannot be used leaves the cache in memory only).
  explicit VerdictCache(std::optional<std::filesystem::path> dir = std::nullopt);

  // The verdict stored under `key` (64 hex digits; anything else finds nothing): from memory,
  // else from its file when that is a regular file of at most kMaxVerdictBytes holding a
  // mmaemu-verdict/1 object for this very key. Never throws for a bad file.
  std::optional<Verdict> lookup(const std::string& key);

  // Keeps `v` in memory and writes its file atomically (mode 0600). Returns false, with
  // last_error() set, when the file could not be written (the verdict stays in memory).
  // ValueError when `key` is not 64 lower-case hex digits.
  bool store(const std::string& key, const Verdict& v);

  // Drops the in-memory verdicts (files stay).
  void forget_memory();

  // Why the last store could not write its file; empty after a successful one.
  std::string last_error() const;

private:
  std::optional<std::filesystem::path> folder(std::string* why) const;

  std::optional<std::filesystem::path> dir_;
  mutable std::mutex mu_;
  std::map<std::string, Verdict> memory_;
  std::string last_error_;
};

// The process-wide cache (folder resolved at each call).
VerdictCache& verdict_cache();

} // namespace mmaemu::kernels
