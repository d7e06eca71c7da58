// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "package" (T7 release validation): build the install package with cpack,
// install it into a temporary prefix, use the installed mmaemu only (info, T1), and build the
// consumer example against the installed CMake package.

#include <chrono>
#include <cstdio>
#include <thread>

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/process.hpp"
#include "tier_kinds.hpp"
#include "tier_work.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class Steps {
public:
  Steps(const RunOptions& opt, TierResult& r, double timeout_s, std::size_t total)
      : opt_(opt), r_(r), timeout_s_(timeout_s), total_(total) {
    if (opt_.progress)
      opt_.progress->begin(total_, "steps");
  }
  ~Steps() {
    if (opt_.progress)
      opt_.progress->end();
  }
  bool ok() const { return ok_; }

  // Runs one step; a non-zero exit fails it (and every later step is skipped).
  support::ProcessResult run(const std::string& id, const std::vector<std::string>& argv,
                             const support::ProcessOptions& base = {}) {
    support::ProcessOptions po = base;
    if (po.timeout_s == 0)
      po.timeout_s = timeout_s_;
    if (opt_.verbose)
      po.on_line = [this](const std::string& l) { std::fprintf(opt_.text, "  %s\n", l.c_str()); };
    const auto t0 = std::chrono::steady_clock::now();
    support::ProcessResult res = support::run_process(argv, po);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (res.exit_code == 0) {
      record(id, Outcome::pass, s, "");
    } else {
      const Outcome o = res.exit_code < 0 ? Outcome::error : Outcome::fail;
      record(id, o, s,
             res.timed_out ? "ran past " + std::to_string(static_cast<int>(po.timeout_s)) + " s"
                           : (res.error.empty() ? "exit " + std::to_string(res.exit_code) + ": " +
                                                      tail_lines(res.output, 4)
                                                : res.error));
    }
    return res;
  }
  void record(const std::string& id, Outcome o, double s, const std::string& msg) {
    r_.add({id, o, s, msg, false});
    if (o != Outcome::pass)
      ok_ = false;
    if (opt_.progress)
      opt_.progress->step(++done_, id + " " + outcome_name(o));
  }

private:
  const RunOptions& opt_;
  TierResult& r_;
  double timeout_s_;
  std::size_t total_, done_ = 0;
  bool ok_ = true;
};

bool contains_line(const std::string& listing, const std::string& suffix) {
  std::size_t start = 0;
  while (start < listing.size()) {
    std::size_t nl = listing.find('\n', start);
    if (nl == std::string::npos)
      nl = listing.size();
    const std::string line = listing.substr(start, nl - start);
    if (line.size() >= suffix.size() &&
        line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
    start = nl + 1;
  }
  return false;
}

} // namespace

void run_package_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const fs::path build = *opt.layout.build_dir;
  const fs::path source = *opt.layout.source_dir;
  for (const char* prog : {"cpack", "cmake", "tar"}) {
    if (!support::find_program(prog)) {
      r.verdict = Outcome::unsupported;
      r.reason = std::string("needs ") + prog + " in PATH";
      return;
    }
  }
  std::error_code ec;
  if (!fs::exists(build / "CPackConfig.cmake", ec)) {
    r.verdict = Outcome::error;
    r.reason = build.string() + " has no CPackConfig.cmake (configure it with this CMakeLists.txt)";
    return;
  }
  std::unique_ptr<WorkDir> tmp;
  fs::path work = opt.out_dir;
  if (work.empty()) {
    tmp = std::make_unique<WorkDir>("t7");
    work = tmp->path();
  } else {
    fs::create_directories(work, ec);
  }
  const fs::path pkg_dir = work / "package", prefix = work / "prefix", logs = work / "logs",
                 consumer = work / "consumer";
  fs::remove_all(pkg_dir, ec);
  fs::remove_all(prefix, ec);
  fs::remove_all(consumer, ec);
  fs::create_directories(prefix, ec);
  const double timeout = t.run.value("timeout_s", 900.0);
  const unsigned jobs = opt.jobs ? opt.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::string generator = t.run.value("generator", std::string("TGZ"));
  Steps steps(opt, r, timeout, 9);
  json details = {{"work_dir", work.string()},
                  {"kept", tmp == nullptr},
                  {"selftest", "not run: this build has no CUDA backend (selftest comes with it)"}};

  // 1. The package.
  steps.run("package/cpack",
            {"cpack", "-G", generator, "--config", (build / "CPackConfig.cmake").string(), "-B",
             pkg_dir.string()},
            support::ProcessOptions::in_dir(build));
  fs::path tarball;
  if (steps.ok()) {
    for (const auto& e : fs::directory_iterator(pkg_dir, ec)) {
      if (e.path().string().ends_with(".tar.gz"))
        tarball = e.path();
    }
    if (tarball.empty())
      steps.record("package/cpack", Outcome::fail, 0, "cpack wrote no .tar.gz");
  }
  if (steps.ok()) {
    r.inputs.push_back(
        {tarball.filename().string(), support::sha256_file(tarball), fs::file_size(tarball)});
    details["package"] = tarball.filename().string();
    // 2. What it must hold: the CLI, libraries, headers, CMake package, tiers, recordings.
    const auto list = support::run_process({"tar", "-tzf", tarball.string()});
    std::string missing;
    for (const char* want :
         {"/bin/mmaemu", "/lib/libmmaemu_emulator.a", "/lib/libmmaemu_recordings.a",
          "/lib/libmmaemu_reports.a", "/lib/libmmaemu_harness.a",
          "/include/mmaemu/emulator/dot.hpp", "/include/mmaemu/recordings/recording.hpp",
          "/include/mmaemu/reports/log_writer.hpp", "/lib/cmake/mmaemu/mmaemuConfig.cmake",
          "/lib/cmake/mmaemu/mmaemuConfigVersion.cmake", "/lib/cmake/mmaemu/mmaemuTargets.cmake",
          "/share/mmaemu/tiers/T1.json", "/share/mmaemu/recordings/public/LICENSE.upstream"}) {
      if (!contains_line(list.output, want))
        missing += (missing.empty() ? "" : ", ") + std::string(want);
    }
    steps.record("package/contents", missing.empty() ? Outcome::pass : Outcome::fail, 0,
                 missing.empty() ? "" : "missing from the package: " + missing);
  }
  // 3. Install: unpack into the prefix.
  if (steps.ok()) {
    steps.run("package/install",
              {"tar", "-xzf", tarball.string(), "-C", prefix.string(), "--strip-components=1"});
  }
  // 4-5. The installed binary alone: a working directory outside every tree, no log or key
  // variables that could point back into the source tree.
  const fs::path exe = prefix / "bin" / "mmaemu";
  support::ProcessOptions isolated;
  isolated.cwd = work;
  isolated.unset_env = {"MMAEMU_LOG_DIR", "MMAEMU_SIGNING_KEY"};
  if (steps.ok()) {
    const auto res = steps.run("installed/info", {exe.string(), "info"}, isolated);
    if (res.exit_code == 0 && res.output.find("mmaemu ") == std::string::npos) {
      steps.record("installed/info", Outcome::fail, 0,
                   "no version line in: " + tail_lines(res.output, 2));
    }
  }
  if (steps.ok()) {
    steps.run("installed/T1", {exe.string(), "tier", "run", "T1", "--log-dir", logs.string()},
              isolated);
    // The installed run must have read the installed recordings, not a source tree's.
    const fs::path log = logs / reports::utc_date() / "T1.json";
    std::string why;
    try {
      const json j = reports::read_json_file(log);
      const std::string dir = j.value("details", json::object()).value("recordings_dir", "");
      if (j.value("verdict", "") != "PASS")
        why = "its log says " + j.value("verdict", "?");
      else if (dir.rfind(prefix.string(), 0) != 0)
        why = "it read recordings from " + dir + ", outside the prefix";
      else if (j.value("details", json::object()).value("layout", "") != "installed")
        why = "it did not run as installed";
    } catch (const std::exception& e) {
      if (steps.ok())
        why = e.what();
    }
    if (steps.ok()) {
      steps.record("installed/T1_log", why.empty() ? Outcome::pass : Outcome::fail, 0, why);
    }
  }
  // 6-8. A consumer project: find_package(mmaemu) against the prefix. run.consumer stays
  // inside the source tree (tier_paths.hpp), also after symlinks.
  fs::path consumer_src;
  if (steps.ok()) {
    try {
      consumer_src = resolve_tier_path(t.run.value("consumer", std::string("examples/consumer")),
                                       source, source);
    } catch (const std::invalid_argument& e) {
      steps.record("consumer/configure", Outcome::error, 0,
                   std::string("run.consumer ") + e.what());
    }
  }
  if (steps.ok()) {
    std::vector<std::string> cfg = {"cmake",
                                    "-S",
                                    consumer_src.string(),
                                    "-B",
                                    consumer.string(),
                                    "-DCMAKE_BUILD_TYPE=Release",
                                    "-DCMAKE_PREFIX_PATH=" + prefix.string()};
    if (support::find_program("ninja")) {
      cfg.push_back("-G");
      cfg.push_back("Ninja");
    }
    steps.run("consumer/configure", cfg);
  }
  if (steps.ok()) {
    steps.run("consumer/build",
              {"cmake", "--build", consumer.string(), "-j", std::to_string(jobs)});
  }
  if (steps.ok()) {
    fs::path rec;
    for (auto it = fs::recursive_directory_iterator(prefix / "share/mmaemu/recordings", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".h5" && (rec.empty() || it->path() < rec))
        rec = it->path();
    }
    steps.run("consumer/run", {(consumer / "mmaemu_consumer").string(), rec.string()}, isolated);
  }
  r.details = details;
}

} // namespace mmaemu::harness::detail
