// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The source revision a run was built from.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mmaemu::reports {

// {"commit": HEAD's sha1, "dirty": whether tracked files differ from HEAD} for the git work
// tree at `source_dir`; {"commit": "unknown", "dirty": null, "reason": why} when there is
// no source tree (an installed binary), no git, or not a repository.
nlohmann::json git_state(const std::optional<std::filesystem::path>& source_dir);

// What a validation log says of its source revision (its "git" field, as git_state wrote it):
// the commit ("unknown" when it names none) and whether the tree was dirty (false when unknown).
struct LogRevision {
  std::string commit = "unknown";
  bool dirty = false;
};
LogRevision log_revision(const nlohmann::json& log);

} // namespace mmaemu::reports
