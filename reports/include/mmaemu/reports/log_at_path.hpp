// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A validation log written at exactly the path a user gave (`report merge --out FILE`): not
// under a free name beside it, never with a suffix added. The path written is the path given.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/log_writer.hpp"

namespace mmaemu::reports {

// Sets "signed"/"signing" as publish_log does and writes canonical_dump(log) to `path`,
// replacing what is there, with its detached signature <path>.sig first when `signing_key` is
// given (an unsigned log removes a stale <path>.sig, which would no longer match). Each file is
// written by support::write_file_atomic, which refuses a device, FIFO or folder, a symlink to
// one, and any of `inputs`. Throws LogWriteError naming the path.
PublishedLog write_log_at(nlohmann::json log, const std::filesystem::path& path,
                          const Key* signing_key,
                          const std::vector<std::filesystem::path>& inputs = {});

} // namespace mmaemu::reports
