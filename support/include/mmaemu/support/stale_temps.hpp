// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Temporary files left by a writer that was killed (SIGKILL, a power cut) between creating its
// temporary file and renaming it: the one atomic writer names them
// "<prefix><pid>.<n>.<host>" (".<target>.tmp.<pid>.<n>.<host>"), and the next write of the
// same target removes those of processes that no longer exist, so that they never pile up.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace mmaemu::support {

// This host's name as it appears in temporary-file names: letters, digits and '-', at most 32
// characters ("host" if it has none).
const std::string& temp_host_tag();

// "<prefix><this pid>.<n>.<host>": a fresh temporary-file name of this process.
std::string temp_file_name(std::string_view prefix);

// Removes the files of `dir` named "<prefix><pid>.<n>.<host>" whose host is this one and whose
// process is gone (kill(pid, 0) says ESRCH). A name without a host (an older mmaemu's) is
// removed when its process is gone and the file is over an hour old: it may belong to another
// machine sharing the folder. Never follows a symlink, never removes a folder or another
// user's live file. Returns how many were removed; errors are ignored (it is housekeeping).
std::size_t remove_stale_temps(const std::filesystem::path& dir, std::string_view prefix);

} // namespace mmaemu::support
