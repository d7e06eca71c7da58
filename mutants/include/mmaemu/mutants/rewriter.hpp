// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The source rewriter: a mutant is exact text replacements. An original that is not found
// exactly once in its file is a catalogue defect, reported loudly, never guessed at.

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmaemu/mutants/catalogue.hpp"

namespace mmaemu::mutants {

// An edit that cannot be applied: file missing or unreadable, original not found, found more
// than once, or edits of one mutant overlapping. The message names the mutant, file and why.
class RewriteError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// How many times `needle` occurs in `text` (overlapping occurrences counted).
std::size_t count_occurrences(const std::string& text, const std::string& needle);

// The offset of the one occurrence of `original` in `text`; RewriteError otherwise
// ("<who>: <file>: original not found" / "found N times").
std::size_t find_once(const std::string& text, const std::string& original, const std::string& who,
                      const std::string& file);

// `text` with the edits (all of one file) applied; each original is located in the unedited
// text, and overlapping originals are refused.
std::string rewrite_text(const std::string& text, const std::vector<const Edit*>& edits,
                         const std::string& who, const std::string& file);

// Applies a mutant's edits under `root` in place (each file written whole and atomically) and
// returns the original contents of the files it changed, for restore_files. RewriteError if
// any edit fails: then nothing was written.
std::map<std::string, std::string> apply_mutant(const std::filesystem::path& root, const Mutant& m);

// Writes back the contents apply_mutant returned.
void restore_files(const std::filesystem::path& root,
                   const std::map<std::string, std::string>& saved);

// Checks that every edit of the catalogue applies to the tree at `root` (exactly one match per
// original, files present and, in a git checkout, tracked: a mutant's copy holds the tracked
// files only). Returns one message per defect; empty when the catalogue fits.
std::vector<std::string> check_catalogue_applies(const std::filesystem::path& root,
                                                 const Catalogue& c);

} // namespace mmaemu::mutants
