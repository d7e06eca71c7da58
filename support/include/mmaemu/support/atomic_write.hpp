// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The one way mmaemu writes a file: a temporary file beside the target, written, fsync'd,
// renamed into place, the folder fsync'd. A failure leaves the target as it was and no
// temporary file behind.

#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

namespace mmaemu::support {

// Writes `content` to `path`. check_output_path(path, inputs) first. `mode` is the new
// file's permission bits (0600 for private keys). Throws FileError naming the path.
void write_file_atomic(const std::filesystem::path& path, std::string_view content,
                       unsigned mode = 0644, const std::vector<std::filesystem::path>& inputs = {});

// The same for a writer that needs a file name (HDF5): `write` creates the temporary file
// it is given; it is then fsync'd and renamed. An exception from `write` propagates after
// the temporary file is removed.
void write_file_atomic_with(const std::filesystem::path& path,
                            const std::function<void(const std::filesystem::path& tmp)>& write,
                            const std::vector<std::filesystem::path>& inputs = {});

// Like write_file_atomic, but never replaces: returns false, writing nothing, if `path`
// exists (the temporary file is linked to its name, which fails on an existing one).
bool write_file_exclusive(const std::filesystem::path& path, std::string_view content,
                          unsigned mode = 0644);

} // namespace mmaemu::support
