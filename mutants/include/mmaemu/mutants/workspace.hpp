// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A mutant's temporary copy of the repository: the files git tracks, as they are in the working
// tree (never an untracked file: a stray file in the source tree must not change what a mutant's
// tests see), large data (recordings/data, files of 512 KiB or more) hard-linked instead of
// copied (copied across file systems), the committed fatbins (kernels/bin) left out so that no
// fatbin test compares them with mutated sources, and a build folder configured for incremental
// builds (ccache with the copy as its base folder when ccache is installed, so that later copies
// hit the cache). Outside a git checkout (a source tarball, an unpacked release) every file
// except build*/ folders is copied: such a tree is taken as it is.

#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmaemu/support/process.hpp"

namespace mmaemu::mutants {

class WorkspaceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct WorkspaceOptions {
  std::filesystem::path source_dir;    // the repository to copy
  std::filesystem::path shared_dir;    // MMAEMU_SHARED_DIR of the copy; empty: none given
  std::vector<std::string> cmake_args; // added to the configure command
  // Unity batches (MMAEMU_UNITY=ON), as the main build: a schema build compiles every mutant
  // once, so it takes the faster whole build. Off (the default) for rewrite-mode copies, where
  // each mutant rebuilds its one edited file rather than the batch that holds it.
  bool unity = false;
  bool keep = false; // leave the copy on disk (its path is printed)
  // A folder kept between campaigns (the schema build): the copy is synchronised, writing only
  // files whose content changed, so that the next build is incremental. Empty: a fresh
  // temporary folder, removed at the end unless `keep`.
  std::filesystem::path persistent_root;
  // With persistent_root: open the kept copy as it is, copying nothing. A campaign opens the
  // schema build it (or another shard) built and stamped for its tree this way: copying again
  // would bring in whatever changed in the working tree since, beside binaries built from the
  // earlier text.
  bool attach_only = false;
  // Files whose copy gets this content instead of the source's (the schema).
  std::map<std::string, std::string> overrides;
  std::function<void(const std::string&)> on_line; // build output, line by line
};

// The files a copy of a source tree holds, and how they were found.
struct RepositoryListing {
  std::vector<std::string> files; // relative, '/'-separated, sorted
  // "git": `git ls-files` (tracked files) of a checkout (source_dir/.git exists); "walk": no git
  // checkout, every file outside build*/ and .git/.
  std::string method;
  // git: the untracked files that are not ignored (`git ls-files -o --exclude-standard`), which
  // the copy leaves out; sorted, at most kMaxUntrackedListed, with their total count.
  std::vector<std::string> untracked;
  std::size_t untracked_count = 0;
};

inline constexpr std::size_t kMaxUntrackedListed = 20;

// Lists the files of `source_dir` that a copy holds. WorkspaceError when source_dir is a git
// checkout whose files git cannot list (git missing, a damaged repository): copying every file
// instead would take untracked ones, so the campaign stops and says why.
RepositoryListing list_repository_files(const std::filesystem::path& source_dir);

// list_repository_files(source_dir).files.
std::vector<std::string> repository_files(const std::filesystem::path& source_dir);

// What a copy made with `opt` would hold (every file's path and content, the overrides, the
// shared folder and the cmake arguments), as a sha256: equal fingerprints, equal copies.
std::string tree_fingerprint(const WorkspaceOptions& opt);

// Whether a file of the copy is linked rather than copied (large data), and whether it is left
// out (kernels/bin).
bool linked_in_copy(const std::string& rel, std::uintmax_t bytes);
bool left_out_of_copy(const std::string& rel);

class Workspace {
public:
  // Creates $TMPDIR/mmaemu-mutants-<hint>-XXXXXX/{src,build} (or uses persistent_root) and
  // copies the tree into src.
  Workspace(const WorkspaceOptions& opt, const std::string& hint);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path src() const { return root_ / "src"; }
  std::filesystem::path build_dir() const { return root_ / "build"; }

  // cmake configure of build_dir (Ninja, Release, benchmarks off). Throws WorkspaceError with
  // the last lines of the output.
  void configure(double timeout_s = 600);
  // cmake --build; the result says whether it succeeded.
  support::ProcessResult build(unsigned jobs, double timeout_s);

private:
  WorkspaceOptions opt_;
  std::filesystem::path root_;
  void sync();
  std::map<std::string, std::string> build_env() const;
};

} // namespace mmaemu::mutants
