// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The source revision a run was built from.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace mmaemu::reports {

// {"commit": HEAD's sha1, "dirty": whether tracked files differ from HEAD} for the git work
// tree at `source_dir`; {"commit": "unknown", "dirty": null, "reason": why} when there is
// no source tree (an installed binary), no git, or not a repository.
nlohmann::json git_state(const std::optional<std::filesystem::path>& source_dir);

} // namespace mmaemu::reports
