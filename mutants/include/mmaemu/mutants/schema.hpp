// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Mutant schemata: every selected mutant compiled into one build, chosen at run time by the
// environment variable MMAEMU_MUTANT_SCHEMA (its number; unset or 0: none). The plain rewrite
// is what a mutant means; the schema is an equivalent encoding that lets one build serve the
// whole campaign (a test checks that both give the same outcomes on a sample).
//
// An `expr` edit becomes (MMAEMU_MUTANT_ON(n) ? (replacement) : (original)); a `stmt` edit
// becomes { if (MMAEMU_MUTANT_ON(n)) { replacement } else { original } }. Mutants with the same
// original in the same file chain their selections. A prologue at the top of each edited file
// defines MMAEMU_MUTANT_ON: it reads the variable once per translation unit on the host, and is
// constant 0 under NVRTC and in device code (CUDA kernels are mutated by plain rewrite only).

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mmaemu/mutants/catalogue.hpp"

namespace mmaemu::mutants {

inline constexpr const char* kSchemaEnv = "MMAEMU_MUTANT_SCHEMA";

// The text of one file with the schema of `edits` (pairs of mutant number >= 1 and edit, all of
// this file) applied. Originals are located in the unedited text; RewriteError if one is not
// found exactly once or two different originals overlap.
std::string schema_text(const std::string& text,
                        const std::vector<std::pair<int, const Edit*>>& edits,
                        const std::string& file);

struct Schema {
  std::map<std::string, int> numbers;       // mutant id -> its MMAEMU_MUTANT_SCHEMA value
  std::map<std::string, std::string> files; // relative path -> schema text
};

// The schema of `mutants` (numbered 1..n in order) over the sources under `root` (not
// written). RewriteError as schema_text, or for a missing file.
Schema make_schema(const std::filesystem::path& root, const std::vector<const Mutant*>& mutants);

} // namespace mmaemu::mutants
