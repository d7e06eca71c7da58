// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The evidence tables of docs/semantics.md, generated from the registry, the profiles and the
// T4 extract (`mmaemu evidence write` / `check`), and the latest committed T4 log.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/evidence.hpp"

namespace mmaemu::cli {

// A catalogue mutant as the tables need it.
struct CatalogueMutant {
  std::string id;
  std::string group;
};

// The generated sections by name ("t4", "sources", "instruction", "api", "gemm", "profiles",
// "implementation"), each Markdown text ending in a newline.
std::map<std::string, std::string> evidence_sections(const evidence::Registry& reg,
                                                     const evidence::T4Runs& t4,
                                                     const std::vector<CatalogueMutant>& mutants);

// `doc` with the content between "<!-- BEGIN evidence:NAME ... -->" and
// "<!-- END evidence:NAME -->" replaced by sections[NAME]. `problems` receives a line for a
// section whose markers are missing or out of order.
std::string apply_sections(const std::string& doc,
                           const std::map<std::string, std::string>& sections,
                           std::vector<std::string>& problems);

// The registry's consistency with the catalogue, the decisions of plan_decisions.hpp, the
// shipped profiles and the source tree: one line per problem (empty: consistent).
std::vector<std::string> registry_problems(const evidence::Registry& reg,
                                           const std::vector<CatalogueMutant>& mutants,
                                           const std::filesystem::path& source_dir);

// The latest committed T4 log under <source_dir>/docs/validation_logs (the T4 log with cases
// and the latest durations.finished_utc), or nothing. `log_path` receives its path relative to
// the source dir, '/'-separated.
std::optional<evidence::T4Runs> latest_t4(const std::filesystem::path& source_dir);

} // namespace mmaemu::cli
