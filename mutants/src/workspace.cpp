// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/mutants/workspace.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "output_tail.hpp"

namespace mmaemu::mutants {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kLinkBytes = 512u << 10;

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

} // namespace

namespace {

// The NUL-separated paths `git ls-files -z <args>` prints in `dir`; WorkspaceError when git
// cannot list them.
std::vector<std::string> git_ls_files(const fs::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-c", "core.quotepath=off", "ls-files", "-z"};
  argv.insert(argv.end(), args.begin(), args.end());
  support::ProcessOptions o = support::ProcessOptions::in_dir(dir);
  o.timeout_s = 120;
  o.set_env = {{"LC_ALL", "C"}, {"GIT_TERMINAL_PROMPT", "0"}};
  const support::ProcessResult r = support::run_process(argv, o);
  if (!r.error.empty()) {
    throw WorkspaceError(dir.string() + " is a git checkout, but git cannot be run (" + r.error +
                         "): a mutant's copy holds the tracked files only, which git lists");
  }
  if (r.exit_code != 0 || r.timed_out) {
    throw WorkspaceError(dir.string() + " is a git checkout, but `git ls-files` failed" +
                         (r.timed_out ? " (timed out)" : "") + ": " +
                         detail::last_lines(r.output, 3) +
                         " (a mutant's copy holds the tracked files only, which git lists)");
  }
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < r.output.size()) {
    std::size_t end = r.output.find('\0', start);
    if (end == std::string::npos)
      end = r.output.size();
    if (end > start)
      out.push_back(r.output.substr(start, end - start));
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace

RepositoryListing list_repository_files(const fs::path& source_dir) {
  RepositoryListing l;
  std::error_code ec;
  // .git is a folder in a clone and a file in a worktree; either way git knows the tracked set.
  if (fs::exists(source_dir / ".git", ec)) {
    l.method = "git";
    // Tracked files only (the index): an untracked file, whether a new source not yet added or
    // a stray unsigned log, is not the repository's, and would change what the tests see.
    l.files = git_ls_files(source_dir, {"-c"});
    auto untracked = git_ls_files(source_dir, {"-o", "--exclude-standard"});
    l.untracked_count = untracked.size();
    if (untracked.size() > kMaxUntrackedListed)
      untracked.resize(kMaxUntrackedListed);
    l.untracked = std::move(untracked);
    return l;
  }
  l.method = "walk";
  for (auto it = fs::recursive_directory_iterator(source_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || starts_with(name, "build"))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() || it->is_symlink())
      l.files.push_back(fs::relative(it->path(), source_dir).generic_string());
  }
  std::sort(l.files.begin(), l.files.end());
  return l;
}

std::vector<std::string> repository_files(const fs::path& source_dir) {
  return list_repository_files(source_dir).files;
}

std::string tree_fingerprint(const WorkspaceOptions& opt) {
  const fs::path src_root = fs::absolute(opt.source_dir);
  std::string acc;
  for (const auto& rel : repository_files(src_root)) {
    if (left_out_of_copy(rel))
      continue;
    const fs::path from = src_root / rel;
    std::error_code ec;
    const auto st = fs::symlink_status(from, ec);
    if (ec || !fs::exists(st))
      continue;
    acc += rel;
    acc += '\0';
    if (fs::is_symlink(st)) {
      acc += "-> " + fs::read_symlink(from, ec).string();
    } else if (const auto over = opt.overrides.find(rel); over != opt.overrides.end()) {
      acc += support::sha256_hex(over->second);
    } else if (fs::is_regular_file(st)) {
      acc += support::sha256_file(from);
    }
    acc += '\n';
  }
  acc += "shared " + opt.shared_dir.string() + '\n';
  acc += std::string("unity ") + (opt.unity ? "on" : "off") + '\n';
  for (const auto& a : opt.cmake_args)
    acc += "cmake " + a + '\n';
  return support::sha256_hex(acc);
}

bool linked_in_copy(const std::string& rel, std::uintmax_t bytes) {
  return starts_with(rel, "recordings/data/") || bytes >= kLinkBytes;
}

bool left_out_of_copy(const std::string& rel) {
  return starts_with(rel, "kernels/bin/");
}

Workspace::Workspace(const WorkspaceOptions& opt, const std::string& hint) : opt_(opt) {
  if (!opt_.persistent_root.empty()) {
    root_ = fs::absolute(opt_.persistent_root);
    opt_.keep = true;
    std::error_code ec;
    fs::create_directories(root_, ec);
    if (ec)
      throw WorkspaceError("cannot create the work folder " + root_.string() + ": " + ec.message());
  } else {
    const char* base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base && *base ? base : "/tmp") + "/mmaemu-mutants-" + hint + "-XXXXXX";
    if (!::mkdtemp(templ.data()))
      throw WorkspaceError("cannot create a work folder " + templ + " (TMPDIR?)");
    root_ = templ;
  }
  try {
    if (!(opt_.attach_only && !opt_.persistent_root.empty()))
      sync();
    fs::create_directories(build_dir());
  } catch (const fs::filesystem_error& e) {
    throw WorkspaceError(std::string("cannot copy the repository into ") + root_.string() + ": " +
                         e.what());
  } catch (const std::exception& e) {
    throw WorkspaceError(std::string("cannot copy the repository into ") + root_.string() + ": " +
                         e.what());
  }
}

void Workspace::sync() {
  const fs::path src_root = fs::absolute(opt_.source_dir);
  std::set<std::string> wanted;
  for (const auto& rel : repository_files(src_root)) {
    if (left_out_of_copy(rel))
      continue;
    const fs::path from = src_root / rel, to = src() / rel;
    std::error_code ec;
    const auto st = fs::symlink_status(from, ec);
    if (ec || !fs::exists(st))
      continue; // deleted in the work tree but still tracked
    wanted.insert(rel);
    fs::create_directories(to.parent_path());
    const auto to_st = fs::symlink_status(to, ec);
    const bool present = !ec && fs::exists(to_st);
    if (fs::is_symlink(st)) {
      if (present && fs::is_symlink(to_st) && fs::read_symlink(to) == fs::read_symlink(from))
        continue;
      if (present)
        fs::remove(to);
      fs::copy_symlink(from, to);
      continue;
    }
    if (!fs::is_regular_file(st))
      continue;
    const auto over = opt_.overrides.find(rel);
    if (over == opt_.overrides.end() && linked_in_copy(rel, fs::file_size(from))) {
      // A hard link: a regular file to every reader (the replay refuses symlinked
      // recordings), no copy of the bytes. The rewriter replaces files by rename, so it never
      // writes through a link. Across file systems it is a copy.
      if (present && fs::is_regular_file(to_st) && fs::equivalent(from, to, ec))
        continue;
      if (present)
        fs::remove(to);
      fs::create_hard_link(from, to, ec);
      if (ec)
        fs::copy_file(from, to);
      continue;
    }
    const std::string content = over != opt_.overrides.end()
                                    ? over->second
                                    : support::read_input_file(from, 64u << 20, "source file");
    if (present && fs::is_regular_file(to_st) &&
        support::read_input_file(to, 64u << 20, "copied file") == content)
      continue; // unchanged: its mtime stays, so the build skips it
    if (present && !fs::is_regular_file(to_st))
      fs::remove_all(to);
    support::write_file_atomic(to, content);
  }
  // Files that left the repository leave the copy too (a stale source would still build).
  std::vector<fs::path> stale;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(src(), ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory() && !it->is_symlink())
      continue;
    const std::string rel = fs::relative(it->path(), src()).generic_string();
    if (!wanted.count(rel))
      stale.push_back(it->path());
  }
  for (const auto& p : stale)
    fs::remove(p, ec);
}

Workspace::~Workspace() {
  if (opt_.keep)
    return;
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::map<std::string, std::string> Workspace::build_env() const {
  // ccache keys on paths relative to the copy, so every copy of the same tree shares objects.
  return {{"CCACHE_BASEDIR", root_.string()}, {"CCACHE_NOHASHDIR", "1"}};
}

void Workspace::configure(double timeout_s) {
  std::vector<std::string> argv = {"cmake", "-S", src().string(), "-B", build_dir().string(), "-G",
                                   "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DMMAEMU_BENCH=OFF",
                                   "-DMMAEMU_PYTHON=OFF",
                                   // schema: one build of every mutant, in batches; rewrite: a
                                   // mutant rebuilds its one file, not a unity batch
                                   opt_.unity ? "-DMMAEMU_UNITY=ON" : "-DMMAEMU_UNITY=OFF"};
  if (!opt_.shared_dir.empty())
    argv.push_back("-DMMAEMU_SHARED_DIR=" + opt_.shared_dir.string());
  if (support::find_program("ccache"))
    argv.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
  for (const auto& a : opt_.cmake_args)
    argv.push_back(a);
  support::ProcessOptions o;
  o.set_env = build_env();
  o.timeout_s = timeout_s;
  const auto r = support::run_process(argv, o);
  if (r.exit_code != 0 || r.timed_out) {
    throw WorkspaceError("cmake configure of the copy in " + root_.string() + " failed" +
                         (r.timed_out ? " (timed out)" : "") + ": " +
                         detail::last_lines(r.output, 10));
  }
}

support::ProcessResult Workspace::build(unsigned jobs, double timeout_s) {
  support::ProcessOptions o;
  o.set_env = build_env();
  o.timeout_s = timeout_s;
  o.on_line = opt_.on_line;
  return support::run_process(
      {"cmake", "--build", build_dir().string(), "-j", std::to_string(std::max(1u, jobs))}, o);
}

} // namespace mmaemu::mutants
