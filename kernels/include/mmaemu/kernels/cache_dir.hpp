// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// mmaemu's one writable folder: NVRTC cubins (nvrtc/) and gate verdicts (verdicts/).
// $MMAEMU_CACHE_DIR, or ${XDG_CACHE_HOME:-$HOME/.cache}/mmaemu (read at each call).
// Cubins and verdicts are loaded from it without verification, so it must belong to the
// user and be writable by nobody else: a folder that is not is refused, never repaired.

#include <filesystem>
#include <string_view>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::kernels {

// The cache folder cannot be used: the message names the path and, for a refused folder,
// its owner or mode (e.g. "mode 0775: writable by group or others").
class CacheDirError : public MmaemuError {
public:
  using MmaemuError::MmaemuError;
  const char* class_name() const noexcept override { return "CacheDirError"; }
};

// The configured cache folder (nothing is created or checked). Throws CacheDirError when
// neither MMAEMU_CACHE_DIR, XDG_CACHE_HOME nor HOME is set.
std::filesystem::path cache_dir_path();

// The cache folder, created (0700, parents as needed) when missing, and checked: a folder
// (after symlinks), owned by the effective user, not writable by group or others. Throws
// CacheDirError otherwise.
std::filesystem::path cache_dir();

// cache_dir() / `name` ("nvrtc" or "verdicts"), created 0700 and checked the same way.
// ValueError when `name` is not a plain word.
std::filesystem::path cache_subdir(std::string_view name);

} // namespace mmaemu::kernels
