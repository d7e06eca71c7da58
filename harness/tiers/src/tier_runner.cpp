// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_runner.hpp"

#include <chrono>
#include <cstdlib>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/support/process.hpp"
#include "tier_kinds.hpp"

namespace mmaemu::harness {

namespace fs = std::filesystem;

namespace {

class BarProgress : public Progress {
public:
  BarProgress(std::FILE* out, std::string tier) : out_(out), tier_(std::move(tier)) {}
  void begin(std::size_t total, const std::string& what) override {
    total_ = total;
    what_ = what;
    step(0, "");
  }
  void step(std::size_t done, const std::string& label) override {
    const int width = 30;
    const int filled = total_ ? static_cast<int>(width * std::min(done, total_) / total_) : 0;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(width - filled), '.');
    std::string line = tier_ + " [" + bar + "] " + std::to_string(done) + "/" +
                       std::to_string(total_) + " " + what_ + " " + label;
    if (line.size() > 100)
      line.resize(100);
    std::fprintf(out_, "\r%-100s", line.c_str());
    std::fflush(out_);
  }
  void end() override {
    std::fprintf(out_, "\r%-100s\r", "");
    std::fflush(out_);
  }

private:
  std::FILE* out_;
  std::string tier_, what_;
  std::size_t total_ = 0;
};

class LineProgress : public Progress {
public:
  LineProgress(std::FILE* out, std::string tier) : out_(out), tier_(std::move(tier)) {}
  void begin(std::size_t total, const std::string& what) override {
    total_ = total;
    std::fprintf(out_, "%s: %zu %s\n", tier_.c_str(), total, what.c_str());
    std::fflush(out_);
  }
  void step(std::size_t done, const std::string& label) override {
    if (label.empty())
      return;
    std::fprintf(out_, "%s: [%zu/%zu] %s\n", tier_.c_str(), done, total_, label.c_str());
    std::fflush(out_);
  }
  void end() override {}

private:
  std::FILE* out_;
  std::string tier_;
  std::size_t total_ = 0;
};

// `mmaemu <words> --help` prints "Usage: <exe> <words> ..." only if the subcommand exists
// (CLI11 answers --help of an unknown word with the top-level help).
std::optional<std::string> missing_command(const TierSpec& t, const RunOptions& opt) {
  for (const auto& c : t.commands) {
    std::vector<std::string> argv = {opt.layout.exe.string()};
    std::size_t start = 0;
    while (start < c.size()) {
      std::size_t sp = c.find(' ', start);
      if (sp == std::string::npos)
        sp = c.size();
      if (sp > start)
        argv.push_back(c.substr(start, sp - start));
      start = sp + 1;
    }
    argv.push_back("--help");
    const auto res = support::run_process(argv, support::ProcessOptions::with_timeout(60));
    const bool found = res.exit_code == 0 && res.output.find(" " + c + " [") != std::string::npos;
    if (!found)
      return "needs the `mmaemu " + c + "` command, which this build of mmaemu lacks";
  }
  return std::nullopt;
}

} // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto bad = [&](const std::string& why) {
    return ValueError("--shard: '" + text + "' " + why + " (expected k/N with 1 <= k <= N)");
  };
  if (slash == std::string::npos)
    throw bad("has no '/'");
  Shard s;
  try {
    std::size_t used = 0;
    const std::string k = text.substr(0, slash), n = text.substr(slash + 1);
    if (k.empty() || n.empty() || k[0] == '-' || n[0] == '-')
      throw bad("is not k/N");
    s.index = std::stoul(k, &used);
    if (used != k.size())
      throw bad("is not k/N");
    s.count = std::stoul(n, &used);
    if (used != n.size())
      throw bad("is not k/N");
  } catch (const std::logic_error&) {
    throw bad("is not k/N");
  }
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw bad("is out of range");
  return s;
}

std::unique_ptr<Progress> make_progress(bool tty, std::FILE* out, const std::string& tier) {
  if (tty)
    return std::make_unique<BarProgress>(out, tier);
  return std::make_unique<LineProgress>(out, tier);
}

std::optional<std::string> missing_prerequisite(const TierSpec& t, const RunOptions& opt) {
  for (const auto& e : t.env) {
    const char* v = std::getenv(e.name.c_str());
    if (!v || !*v)
      return "needs " + e.name + " (" + e.what + "); it is not set";
  }
  for (const auto& d : t.devices) {
    if (!opt.cuda.available) {
      return "needs a CUDA device (" + d.why + "): " + opt.cuda.reason;
    }
    if (!d.name.empty()) {
      std::string found;
      bool ok = false;
      for (const auto& dev : opt.cuda.devices) {
        ok = ok || dev.name.find(d.name) != std::string::npos;
        found += (found.empty() ? "" : ", ") + dev.name;
      }
      if (!ok) {
        return "needs a CUDA device named '" + d.name + "' (" + d.why + "); this machine has " +
               found;
      }
    }
  }
  const auto& l = opt.layout;
  if (t.needs_build_tree || t.kind == "ctest") {
    std::error_code ec;
    if (!l.build_dir || !fs::exists(*l.build_dir / "CTestTestfile.cmake", ec)) {
      return "needs a configured build tree (--build-dir DIR); this mmaemu runs from " +
             (l.origin == "installed" ? "an installed prefix" : "the " + l.origin) +
             (l.build_dir ? " and " + l.build_dir->string() + " has no CTestTestfile.cmake" : "");
    }
  }
  if (t.needs_source_tree && !l.source_dir) {
    return "needs the source tree (run from a build tree, or give --build-dir of a configured "
           "build)";
  }
  for (const auto& f : t.files) {
    const fs::path p = l.source_dir ? *l.source_dir / f : fs::path(f);
    std::error_code ec;
    if (!fs::exists(p, ec))
      return "needs " + f + ", which does not exist (" + p.string() + ")";
  }
  if (auto m = missing_command(t, opt))
    return m;
  if (t.kind == "mutants") {
    const std::string mt = !opt.mutants.tier.empty()
                               ? opt.mutants.tier
                               : t.run.value("mutant_tier", std::string("cpu"));
    if (mt == "gpu" && !opt.cuda.available)
      return "the GPU tier of the mutants runs kernel mutants through T3 and needs a CUDA "
             "device: " +
             opt.cuda.reason;
    if (!support::find_program("ctest") || !support::find_program("cmake"))
      return "the mutants build and test a copy of the repository and need cmake and ctest in PATH";
  }
  return std::nullopt;
}

TierResult run_tier(const TierSpec& t, RunOptions opt) {
  TierResult r;
  r.tier = t.name;
  const auto wall0 = std::chrono::system_clock::now();
  const auto t0 = std::chrono::steady_clock::now();
  r.started_utc = reports::utc_timestamp(wall0);
  r.git = reports::git_state(opt.layout.source_dir);
  if (!opt.cuda_probed) {
    opt.cuda = probe_cuda();
    opt.cuda_probed = true;
  }
  if (auto why = missing_prerequisite(t, opt)) {
    r.verdict = Outcome::unsupported;
    r.reason = *why;
  } else if (t.kind == "ctest") {
    detail::run_ctest_kind(t, opt, r);
  } else if (t.kind == "replay") {
    detail::run_replay_kind(t, opt, r);
  } else if (t.kind == "truth") {
    detail::run_truth_kind(t, opt, r);
  } else if (t.kind == "command") {
    detail::run_command_kind(t, opt, r);
  } else if (t.kind == "package") {
    detail::run_package_kind(t, opt, r);
  } else if (t.kind == "device") {
    detail::run_device_kind(t, opt, r);
  } else if (t.kind == "mutants") {
    detail::run_mutants_kind(t, opt, r);
  }
  std::string nothing = "no case ran";
  if (opt.shard.active()) {
    nothing = "empty shard: shard " + opt.shard.text() + " selects no case";
  }
  judge_tier(r, nothing);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.finished_utc = reports::utc_timestamp();
  return r;
}

} // namespace mmaemu::harness
