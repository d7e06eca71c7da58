// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/mutants/rewriter.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "mmaemu/mutants/workspace.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::mutants {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxSourceBytes = 16u << 20;

std::string read_source(const fs::path& root, const std::string& file, const std::string& who) {
  std::error_code ec;
  const fs::path p = root / file;
  if (!fs::is_regular_file(fs::symlink_status(p, ec)))
    throw RewriteError(who + ": " + file + ": file missing (or not a regular file) under " +
                       root.string());
  try {
    return support::read_input_file(p, kMaxSourceBytes, "mutated source");
  } catch (const support::FileError& e) {
    throw RewriteError(who + ": " + file + ": " + e.what());
  }
}

} // namespace

std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  if (needle.empty())
    return 0;
  std::size_t n = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

std::size_t find_once(const std::string& text, const std::string& original, const std::string& who,
                      const std::string& file) {
  const std::size_t n = count_occurrences(text, original);
  if (n != 1) {
    std::string shown = original.substr(0, 60);
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    throw RewriteError(
        who + ": " + file + ": original '" + shown + (original.size() > 60 ? "..." : "") + "' " +
        (n == 0 ? std::string("not found") : "found " + std::to_string(n) + " times") +
        " (it must occur exactly once)");
  }
  return text.find(original);
}

std::string rewrite_text(const std::string& text, const std::vector<const Edit*>& edits,
                         const std::string& who, const std::string& file) {
  struct Placed {
    std::size_t at, len;
    const Edit* e;
  };
  std::vector<Placed> placed;
  for (const Edit* e : edits)
    placed.push_back({find_once(text, e->original, who, file), e->original.size(), e});
  std::sort(placed.begin(), placed.end(),
            [](const Placed& a, const Placed& b) { return a.at < b.at; });
  for (std::size_t i = 1; i < placed.size(); ++i) {
    if (placed[i].at < placed[i - 1].at + placed[i - 1].len)
      throw RewriteError(who + ": " + file + ": two edits overlap");
  }
  std::string out = text;
  for (auto it = placed.rbegin(); it != placed.rend(); ++it)
    out.replace(it->at, it->len, it->e->replacement);
  return out;
}

std::map<std::string, std::string> apply_mutant(const fs::path& root, const Mutant& m) {
  std::map<std::string, std::vector<const Edit*>> by_file;
  for (const auto& e : m.edits)
    by_file[e.file].push_back(&e);
  std::map<std::string, std::string> saved, rewritten;
  for (const auto& [file, edits] : by_file) {
    saved[file] = read_source(root, file, m.id);
    rewritten[file] = rewrite_text(saved[file], edits, m.id, file);
  }
  // Every edit found its place: only now is anything written.
  for (const auto& [file, text] : rewritten) {
    try {
      support::write_file_atomic(root / file, text);
    } catch (const std::exception& e) {
      restore_files(root, saved);
      throw RewriteError(m.id + ": " + file + ": cannot write: " + e.what());
    }
  }
  return saved;
}

void restore_files(const fs::path& root, const std::map<std::string, std::string>& saved) {
  for (const auto& [file, text] : saved)
    support::write_file_atomic(root / file, text);
}

std::vector<std::string> check_catalogue_applies(const fs::path& root, const Catalogue& c) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> cache;
  // A mutant's copy holds the tracked files only: an edit of an untracked file would find its
  // original here and then edit nothing in the copy.
  std::optional<std::set<std::string>> tracked;
  try {
    if (auto l = list_repository_files(root); l.method == "git")
      tracked.emplace(l.files.begin(), l.files.end());
  } catch (const WorkspaceError& e) {
    problems.push_back(e.what());
  }
  for (const auto& m : c.mutants) {
    std::map<std::string, std::vector<const Edit*>> by_file;
    for (const auto& e : m.edits)
      by_file[e.file].push_back(&e);
    for (const auto& [file, edits] : by_file) {
      // A missing file is named as missing (below); one that exists but is untracked, here.
      std::error_code ec;
      if (tracked && !tracked->count(file) && fs::exists(root / file, ec)) {
        problems.push_back(m.id + ": " + file +
                           ": not tracked by git (a mutant's copy holds the tracked files only; "
                           "git add it)");
        continue;
      }
      try {
        if (!cache.count(file))
          cache[file] = read_source(root, file, m.id);
        (void)rewrite_text(cache[file], edits, m.id, file);
      } catch (const RewriteError& e) {
        problems.push_back(e.what());
      }
    }
  }
  return problems;
}

} // namespace mmaemu::mutants
