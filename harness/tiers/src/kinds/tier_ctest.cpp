// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "ctest": the GoogleTest tests of a build tree selected by ctest label (T0 unit,
// T1s slow, T3 gpu, T3p profile_device), read back per test from ctest's JUnit output.

#include <regex>
#include <thread>

#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/ctest_junit.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/process.hpp"
#include "mmaemu/support/text.hpp"
#include "tier_kinds.hpp"
#include "tier_work.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string label_regex(const json& labels, const std::string& key) {
  if (!labels.is_array() || labels.empty())
    return "";
  std::string re = "^(";
  bool first = true;
  for (const auto& l : labels) {
    if (!l.is_string())
      throw std::runtime_error("run." + key + " must be an array of strings");
    re += (first ? "" : "|") + l.get<std::string>();
    first = false;
  }
  return re + ")$";
}

// The tier's cases from ctest's --output-junit file (parsed by reports::parse_ctest_junit).
std::vector<TierCase> ctest_cases(const std::vector<reports::JunitCase>& junit) {
  std::vector<TierCase> out;
  out.reserve(junit.size());
  for (const auto& j : junit) {
    TierCase c;
    c.id = j.name;
    c.seconds = j.seconds;
    if (j.status == "run") {
      c.outcome = Outcome::pass;
    } else if (j.status == "fail") {
      c.outcome = Outcome::fail;
      c.message =
          (j.failure_message.empty() ? "" : j.failure_message + ": ") + tail_lines(j.system_out, 3);
    } else if (j.status == "disabled") {
      c.outcome = Outcome::unsupported;
      c.message = "disabled";
    } else if (j.skipped_message == "SKIP_REGULAR_EXPRESSION_MATCHED") {
      c.outcome = Outcome::unsupported; // GTEST_SKIP: data or device absent
      c.message = "skipped: " + tail_lines(j.system_out, 2);
    } else {
      c.outcome = Outcome::error; // not run: missing executable, required files, ...
      c.message = (j.skipped_message.empty() ? "not run" : j.skipped_message) +
                  (j.system_out.empty() ? "" : ": " + tail_lines(j.system_out, 2));
    }
    // Test names and output are text from files: escaped before they reach a terminal line
    // or a log (a ctest name never needs escaping, so a real id is unchanged).
    c.id = support::printable(c.id, 256);
    c.message = support::printable(c.message, 512);
    out.push_back(std::move(c));
  }
  return out;
}

// gcovr over the build tree: HTML, Cobertura XML and a JSON summary in `dir`; the line
// coverage of emulator/ into r.details["coverage"].
void collect_coverage(const fs::path& build, const std::optional<fs::path>& source,
                      const fs::path& dir, TierResult& r) {
  json cov;
  bool instrumented = false;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(build, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".gcno") {
      instrumented = true;
      break;
    }
  }
  const auto gcovr = support::find_program("gcovr");
  if (!instrumented) {
    cov = {{"available", false},
           {"reason", build.string() + " is not built with -DMMAEMU_COVERAGE=ON (no .gcno files)"}};
  } else if (!gcovr) {
    cov = {{"available", false}, {"reason", "gcovr is not installed"}};
  } else if (!source) {
    cov = {{"available", false},
           {"reason", "the source tree of " + build.string() + " is unknown"}};
  } else {
    fs::create_directories(dir, ec);
    const fs::path summary = dir / "summary.json";
    const std::string src = source->string();
    std::vector<std::string> argv = {gcovr->string(),
                                     "--root",
                                     src,
                                     "--object-directory",
                                     build.string(),
                                     "--exclude",
                                     src + "/.*/tests/.*",
                                     "--exclude",
                                     src + "/build.*",
                                     "--exclude",
                                     src + "/examples/.*",
                                     "--exclude",
                                     src + "/bench/.*",
                                     "--gcov-ignore-parse-errors",
                                     "--html-details",
                                     (dir / "index.html").string(),
                                     "--cobertura",
                                     (dir / "coverage.xml").string(),
                                     "--json-summary",
                                     summary.string(),
                                     "--print-summary"};
    const auto res = support::run_process(argv, support::ProcessOptions::in_dir(*source));
    if (res.exit_code != 0) {
      cov = {{"available", false},
             {"reason", "gcovr failed (exit " + std::to_string(res.exit_code) +
                            "): " + tail_lines(res.output + res.error, 3)}};
    } else {
      const json s = reports::read_json_file(summary);
      long long covered = 0, total = 0;
      json files = json::array();
      for (const auto& f : s.value("files", json::array())) {
        const std::string name = f.value("filename", "");
        if (name.rfind("emulator/", 0) != 0)
          continue;
        covered += f.value("line_covered", 0LL);
        total += f.value("line_total", 0LL);
      }
      cov = {{"available", true},
             {"report_dir", dir.string()},
             {"html", (dir / "index.html").string()},
             {"cobertura", (dir / "coverage.xml").string()},
             {"summary_sha256", support::sha256_file(summary)},
             {"all_line_percent", s.value("line_percent", 0.0)},
             {"emulator_lines_covered", covered},
             {"emulator_lines_total", total},
             {"emulator_line_percent",
              total ? 100.0 * static_cast<double>(covered) / static_cast<double>(total) : 0.0}};
    }
  }
  if (!r.details.is_object())
    r.details = json::object();
  r.details["coverage"] = cov;
}

} // namespace

void run_ctest_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const fs::path build = *opt.layout.build_dir;
  const auto ctest = support::find_program("ctest");
  if (!ctest) {
    r.verdict = Outcome::unsupported;
    r.reason = "needs ctest (CMake) in PATH";
    return;
  }
  const std::string include = label_regex(t.run.value("labels", json::array()), "labels");
  const std::string exclude =
      label_regex(t.run.value("exclude_labels", json::array()), "exclude_labels");
  if (include.empty()) {
    r.verdict = Outcome::error;
    r.reason = t.file.string() + ": run.labels must name at least one ctest label";
    return;
  }
  WorkDir work("ctest");
  const fs::path junit = work.path() / "ctest-junit.xml";
  // --jobs, else the tier's run.jobs (GPU tiers: 1, one device), else every hardware thread.
  const unsigned jobs = opt.jobs ? opt.jobs
                        : t.run.value("jobs", 0u) > 0
                            ? t.run.value("jobs", 0u)
                            : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> argv = {ctest->string(),
                                   "--test-dir",
                                   build.string(),
                                   "-L",
                                   include,
                                   "-j",
                                   std::to_string(jobs),
                                   "--output-junit",
                                   junit.string(),
                                   "--no-tests=ignore"};
  if (!exclude.empty()) {
    argv.push_back("-LE");
    argv.push_back(exclude);
  }
  if (opt.shard.active()) {
    // ctest numbers every test of the tree; -I start,,stride takes every N-th of them.
    argv.push_back("-I");
    argv.push_back(std::to_string(opt.shard.index) + ",," + std::to_string(opt.shard.count));
  }
  std::string labels_text;
  for (const auto& l : t.run.value("labels", json::array())) {
    labels_text += (labels_text.empty() ? "" : ", ") + l.get<std::string>();
  }
  const std::regex progress_re(R"(^\s*(\d+)/(\d+) Test\s+#\d+: (\S+))");
  bool begun = false;
  support::ProcessOptions po;
  po.cwd = build;
  po.timeout_s = t.run.value("timeout_s", 0.0);
  po.on_line = [&](const std::string& line) {
    std::smatch m;
    if (opt.progress && std::regex_search(line, m, progress_re)) {
      if (!begun) {
        opt.progress->begin(std::stoul(m[2].str()), "tests labelled " + labels_text);
        begun = true;
      }
      opt.progress->step(std::stoul(m[1].str()), m[3].str());
    }
    if (opt.verbose)
      std::fprintf(opt.text, "%s\n", line.c_str());
  };
  const support::ProcessResult res = support::run_process(argv, po);
  if (opt.progress && begun)
    opt.progress->end();
  r.details = {
      {"build_dir", build.string()},
      {"ctest",
       {{"labels", include}, {"exclude", exclude}, {"jobs", jobs}, {"exit_code", res.exit_code}}}};
  r.seeds = {{"note", "tests with random inputs use the fixed seeds written in their sources "
                      "(each prints its seed)"}};
  std::error_code ec;
  if (res.exit_code < 0 || res.timed_out || !fs::exists(junit, ec)) {
    r.add({"ctest", Outcome::error, 0,
           res.timed_out ? "ctest ran past run.timeout_s"
                         : (res.error.empty() ? "ctest exit " + std::to_string(res.exit_code) +
                                                    ": " + tail_lines(res.output, 3)
                                              : res.error)});
    return;
  }
  std::vector<TierCase> cases;
  try {
    cases =
        ctest_cases(reports::parse_ctest_junit(reports::read_file_bytes(junit), junit.string()));
  } catch (const std::runtime_error& e) {
    // A JUnit file ctest wrote but that cannot be read back: the run is an ERROR, with why.
    r.add({"ctest", Outcome::error, 0, e.what()});
    return;
  }
  for (auto& c : cases)
    r.add(std::move(c));
  if (r.case_count() == 0) {
    r.verdict = Outcome::unsupported;
    r.reason = opt.shard.active() ? "empty shard: shard " + opt.shard.text() +
                                        " selects no test labelled " + labels_text
                                  : "no test labelled " + labels_text + " in " + build.string();
    return;
  }
  if (opt.coverage_dir)
    collect_coverage(build, opt.layout.source_dir, *opt.coverage_dir, r);
}

} // namespace mmaemu::harness::detail
