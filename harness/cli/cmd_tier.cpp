// SPDX-License-Identifier: BSD-2-Clause
// mmaemu tier list [--json PATH] [--tiers DIR] [--build-dir DIR]
// mmaemu tier run NAME [--out DIR] [--json PATH] [--junit FILE] [--shard k/N]
//                      [--log-dir DIR | --no-log | --publish] [--build-dir DIR] [--tiers DIR]
//                      [--recordings DIR] [--coverage DIR] [--compare FILE] [--jobs N]
//                      [--verbose]

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/harness/tier_log.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/harness/tier_trust.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "read_inputs.hpp"
#include "strict_numbers.hpp"
#include "text_table.hpp"
#include "tier_args.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A folder argument (--out, --coverage): absent, or a folder (or a symlink to one).
void check_dir_arg(const std::string& option, const std::string& dir) {
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    throw support::FileError(option + ": " + support::printable(dir, 256) +
                             " exists and is not a folder");
  }
}

// The command line as the kernel recorded it (CLI11 does not keep argv).
std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> out;
  std::string arg;
  while (std::getline(in, arg, '\0'))
    out.push_back(arg);
  return out;
}

harness::LayoutOverrides overrides(const TierArgs& a) {
  harness::LayoutOverrides o;
  o.tiers_dir = a.tiers;
  o.build_dir = a.build_dir;
  o.recordings_dir = a.recordings;
  o.log_root = a.log_dir;
  return o;
}

std::string needs_text(const harness::TierSpec& t) {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  for (const auto& e : t.env)
    add(e.name);
  for (const auto& d : t.devices)
    add(d.name.empty() ? "CUDA device" : "CUDA " + d.name);
  if (t.needs_build_tree || t.kind == "ctest")
    add("build tree");
  for (const auto& f : t.files)
    add(f);
  for (const auto& c : t.commands)
    add("mmaemu " + c);
  return s.empty() ? "-" : s;
}

std::string budget_text(const harness::TierSpec& t) {
  char buf[64];
  if (t.budget_seconds >= 3600) {
    std::snprintf(buf, sizeof buf, "%.0f h", t.budget_seconds / 3600);
  } else if (t.budget_seconds >= 60) {
    std::snprintf(buf, sizeof buf, "%.0f min", t.budget_seconds / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f s", t.budget_seconds);
  }
  std::string s = buf;
  if (t.budget_data_mib)
    s += ", " + std::to_string(static_cast<int>(*t.budget_data_mib)) + " MiB";
  return s;
}

// The tiers as a table whose columns are sized to their text and wrap instead of cutting it,
// and the same as JSON with --json.
int run_list(const TierArgs& a) {
  const harness::Layout layout = harness::discover_layout(overrides(a));
  try {
    a.json.check(files_under(layout.tiers_dir)); // never one of the tier files it lists
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  std::vector<harness::TierSpec> tiers;
  try {
    check_tiers_option(a.tiers, layout, a.trust_tiers);
    tiers = harness::load_tiers(layout.tiers_dir);
  } catch (const harness::TierFileError& e) {
    error_line(e.what());
    return kUsage;
  }
  harness::RunOptions opt;
  opt.layout = layout;
  opt.cuda = harness::probe_cuda();
  opt.cuda_probed = true;
  json out = json::array();
  std::vector<std::vector<std::string>> rows;
  // Why a tier cannot run here, as numbered notes under the table: the reasons are long, and
  // several tiers share one (no CUDA driver).
  std::vector<std::string> notes;
  for (const auto& t : tiers) {
    const auto why = harness::missing_prerequisite(t, opt);
    std::string here = "runnable";
    if (why) {
      const auto at = std::find(notes.begin(), notes.end(), *why);
      const std::size_t n = static_cast<std::size_t>(at - notes.begin()) + 1;
      if (at == notes.end())
        notes.push_back(*why);
      here = "UNSUPPORTED [" + std::to_string(n) + "]";
    }
    out.push_back({{"name", t.name},
                   {"title", t.title},
                   {"purpose", t.purpose},
                   {"when", t.when},
                   {"kind", t.kind},
                   {"budget_seconds", t.budget_seconds},
                   {"required_for_release", t.required_for_release},
                   {"labels", t.labels},
                   {"needs", needs_text(t)},
                   {"runnable", !why.has_value()},
                   {"reason", why ? *why : ""},
                   {"file", t.file.string()}});
    rows.push_back({t.name, shown(t.title, 200), shown(t.when, 200), budget_text(t),
                    t.required_for_release ? "required" : "-", here});
  }
  std::fputs(
      text_table(
          {{"tier", 5}, {"title", 24}, {"when", 30}, {"budget", 14}, {"release", 8}, {"here", 0}},
          rows, terminal_width())
          .c_str(),
      stdout);
  std::vector<std::vector<std::string>> note_rows;
  for (std::size_t i = 0; i < notes.size(); ++i)
    note_rows.push_back({"[" + std::to_string(i + 1) + "]", shown(notes[i], 2048)});
  if (!note_rows.empty()) {
    const std::string table = text_table({{"", 4}, {"", 0}}, note_rows, terminal_width());
    std::fputs(table.substr(table.find('\n') + 1).c_str(), stdout); // no title line
  }
  try {
    a.json.write(out);
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

// For --publish: the signing key, which must be set and trusted by the committed folder's keys,
// so that the published log verifies there (`make test` checks every committed log).
std::unique_ptr<reports::Key> publishing_key(const harness::Layout& layout) {
  const char* k = std::getenv("MMAEMU_SIGNING_KEY");
  if (!k || !*k) {
    throw support::FileError("--publish writes into " + shown(layout.publish_root) +
                             ", where every log must verify: set MMAEMU_SIGNING_KEY to a private "
                             "key whose .pub is in " +
                             shown(layout.keys_dir));
  }
  auto key = std::make_unique<reports::Key>(reports::load_private_key(k));
  const reports::TrustedKeys trusted = reports::load_trusted_keys(layout.keys_dir);
  const std::string fp = reports::fingerprint(*key);
  if (!trusted.by_fingerprint.count(fp)) {
    throw support::FileError("--publish: MMAEMU_SIGNING_KEY (" + fp + ") is not trusted by " +
                             shown(layout.keys_dir) +
                             ": a log it signs would not verify there (add its .pub first)");
  }
  return key;
}

// The files a run reads that its command line or the layout names: the tier files, the
// recordings, the trusted keys, the signing key, the catalogue, --compare.
std::vector<fs::path> run_inputs(const TierArgs& a, const harness::Layout& layout) {
  std::vector<fs::path> in;
  for (const auto& d : {layout.tiers_dir, layout.recordings_dir, layout.keys_dir}) {
    const auto f = files_under(d);
    in.insert(in.end(), f.begin(), f.end());
  }
  if (const char* k = std::getenv("MMAEMU_SIGNING_KEY"); k && *k)
    in.emplace_back(k);
  if (!a.mutants.catalogue.empty())
    in.push_back(a.mutants.catalogue);
  if (!a.compare.empty())
    in.push_back(a.compare);
  return in;
}

} // namespace

namespace {

// check_run_paths against `inputs`, the files the run reads (run_inputs).
int check_paths(const TierArgs& a, const std::vector<fs::path>& inputs) {
  try {
    if (!a.compare.empty())
      support::check_input_file(a.compare, support::kMaxTextBytes, "--compare file");
    if (!a.out.empty())
      check_dir_arg("--out", a.out);
    if (!a.coverage.empty())
      check_dir_arg("--coverage", a.coverage);
    if (!a.junit.empty())
      check_output_option("--junit", a.junit, inputs);
    a.json.check(inputs);
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

int check_run_paths(const TierArgs& a) {
  return check_paths(a, run_inputs(a, harness::discover_layout(overrides(a))));
}

int run_tier_args(const TierArgs& a) {
  // With --json - the text goes to stderr (fd 1 is moved there by the check): one stream here.
  std::FILE* text = stdout;
  harness::RunOptions opt;
  opt.layout = harness::discover_layout(overrides(a));
  if (a.publish) {
    if (a.no_log || !a.log_dir.empty()) {
      error_line("--publish writes the log into the committed folder: leave out --no-log and "
                 "--log-dir");
      return kUsage;
    }
    if (opt.layout.publish_root.empty()) {
      error_line("--publish needs the source tree's docs/validation_logs (run the mmaemu of a "
                 "build tree, or give --build-dir)");
      return kUsage;
    }
    opt.layout.log_root = opt.layout.publish_root;
  }
  opt.verbose = a.verbose;
  opt.jobs = a.jobs;
  opt.mutants = a.mutants;
  opt.text = text;
  if (!a.out.empty())
    opt.out_dir = fs::absolute(a.out);
  if (!a.coverage.empty())
    opt.coverage_dir = fs::absolute(a.coverage);
  if (!a.compare.empty())
    opt.compare = a.compare;
  if (!a.shard.empty())
    opt.shard = harness::parse_shard(a.shard);
  // What the run reads (its tier files, recordings, keys, catalogue, --compare): no output may
  // replace one of them (docs/api.md, "Conventions"); the later writes are checked against it too.
  const std::vector<fs::path> inputs = run_inputs(a, opt.layout);
  if (const int rc = check_paths(a, inputs); rc != kOk)
    return rc;

  // Everything that can be checked before the run is: a bad tier file, an unwritable log
  // folder or JUnit path and an unreadable signing key stop here, before any work or log.
  std::vector<harness::TierSpec> tiers;
  const harness::TierSpec* tier = nullptr;
  try {
    check_tiers_option(a.tiers, opt.layout, a.trust_tiers);
    tiers = harness::load_tiers(opt.layout.tiers_dir);
    tier = &harness::find_tier(tiers, a.name);
  } catch (const harness::TierFileError& e) {
    error_line(e.what());
    return kUsage;
  }
  fs::path log_dir;
  std::unique_ptr<reports::Key> key;
  const std::string date = reports::utc_date();
  if (!a.no_log) {
    try {
      log_dir = reports::prepare_log_dir(opt.layout.log_root, date);
    } catch (const reports::LogWriteError& e) {
      error_line(std::string("--log-dir: ") + e.what());
      return kUsage;
    }
    if (a.publish) {
      try {
        key = publishing_key(opt.layout);
      } catch (const reports::SigningError& e) {
        error_line(std::string("MMAEMU_SIGNING_KEY: ") + e.what());
        return kUsage;
      } catch (const std::exception& e) {
        error_line(e.what());
        return kUsage;
      }
    } else if (const char* k = std::getenv("MMAEMU_SIGNING_KEY"); k && *k) {
      try {
        key = std::make_unique<reports::Key>(reports::load_private_key(k));
      } catch (const reports::SigningError& e) {
        error_line(std::string("MMAEMU_SIGNING_KEY: ") + e.what());
        return kUsage;
      }
    }
    if (opt.out_dir.empty() && tier->kind == "truth") {
      opt.out_dir = log_dir / (harness::log_stem(*tier, opt.shard) + ".out");
    }
  }
  if (!a.junit.empty()) {
    const fs::path parent = fs::absolute(a.junit).parent_path();
    std::error_code ec;
    if (!fs::is_directory(parent, ec)) {
      error_line("--junit: folder '" + shown(parent) + "' does not exist");
      return kUsage;
    }
    try {
      support::check_output_path(a.junit, joined(inputs, standard_inputs()));
    } catch (const support::FileError& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  std::unique_ptr<harness::Progress> progress;
  if (tier->progress || a.verbose) {
    progress = harness::make_progress(::isatty(::fileno(text)) == 1, text, tier->name);
    opt.progress = progress.get();
  }
  opt.cuda = harness::probe_cuda(); // once: the run and its log see the same devices
  opt.cuda_probed = true;
  std::fprintf(text, "%s (%s): %s\n", tier->name.c_str(), shown(tier->title, 1024).c_str(),
               shown(tier->purpose, 1024).c_str());
  std::fflush(text);

  const harness::TierResult result = harness::run_tier(*tier, opt);

  for (const auto& c : result.cases) {
    if (a.verbose || (c.outcome != harness::Outcome::pass && !c.in_set)) {
      std::fprintf(text, "%s %s%s%s\n", harness::outcome_name(c.outcome), shown(c.id, 1024).c_str(),
                   c.message.empty() ? "" : ": ", shown(c.message, 4096).c_str());
    }
  }
  json summary = {{"tier", tier->name},
                  {"verdict", harness::outcome_name(result.verdict)},
                  {"reason", result.reason},
                  {"totals", harness::totals_json(result)},
                  {"seconds", result.seconds}};
  int status = outcome::exit_status_of(result.verdict);
  if (!a.no_log) {
    try {
      const json log = harness::build_tier_log(*tier, result, opt, command_line(), MMAEMU_VERSION);
      const std::string stem =
          a.log_stem.empty()
              ? harness::log_stem(*tier, opt.shard)
              : a.log_stem + (opt.shard.active() ? "-shard" + std::to_string(opt.shard.index) +
                                                       "of" + std::to_string(opt.shard.count)
                                                 : "");
      const auto pub = reports::publish_log(log, log_dir, stem, key.get());
      summary["log"] = pub.log.string();
      summary["published"] = a.publish;
      const reports::LogRevision rev = reports::log_revision(log);
      summary["commit"] = rev.commit;
      summary["dirty"] = rev.dirty;
      summary["signed"] = !pub.signature.empty();
      if (!pub.signature.empty()) {
        summary["signature"] = pub.signature.string();
        summary["key_fingerprint"] = pub.fingerprint;
      }
    } catch (const std::exception& e) {
      error_line(std::string("log not written: ") + e.what());
      status = kUsage;
    }
  }
  if (!a.junit.empty()) {
    try {
      support::write_file_atomic(a.junit, harness::junit_xml(result), 0644,
                                 joined(inputs, standard_inputs()));
      summary["junit"] = a.junit;
    } catch (const std::exception& e) {
      error_line(std::string("--junit: ") + e.what());
      status = kUsage;
    }
  }

  const std::size_t passed = result.total(harness::Outcome::pass);
  const std::size_t failed =
      result.total(harness::Outcome::fail) + result.total(harness::Outcome::error);
  std::fprintf(text, "%s: %s%s%s (%zu passed, %zu failed, %zu unsupported, %.1f s)\n",
               tier->name.c_str(), harness::outcome_name(result.verdict),
               result.reason.empty() ? "" : ": ", shown(result.reason, 4096).c_str(), passed,
               failed, result.total(harness::Outcome::unsupported), result.seconds);
  if (opt.coverage_dir && result.details.is_object() && result.details.contains("coverage")) {
    const json& cov = result.details["coverage"];
    if (cov.value("available", false)) {
      std::fprintf(text, "coverage: emulator/ %.1f%% of lines (%lld of %lld); %s\n",
                   cov.value("emulator_line_percent", 0.0),
                   cov.value("emulator_lines_covered", 0LL), cov.value("emulator_lines_total", 0LL),
                   cov.value("html", "").c_str());
    } else {
      error_line("--coverage: no report: " + shown(cov.value("reason", std::string("?")), 1024));
    }
  }
  if (summary.contains("log")) {
    std::fprintf(text, "log: %s (%s)\n", shown(summary["log"].get<std::string>(), 1024).c_str(),
                 summary["signed"].get<bool>()
                     ? ("signed, key " + summary["key_fingerprint"].get<std::string>()).c_str()
                     : "unsigned: set MMAEMU_SIGNING_KEY to sign");
    if (a.publish) {
      std::fprintf(text, "published for commit %s%s: commit the log and its .sig with it\n",
                   shown(summary.value("commit", std::string("unknown")), 1024).c_str(),
                   summary.value("dirty", false) ? " (dirty tree)" : "");
    }
  }
  std::fprintf(text, "%zu passed, %zu failed\n", passed, failed);
  if (a.json.given()) {
    json full = summary;
    full["details"] = result.details;
    full["cases"] = json::array();
    for (const auto& c : result.cases)
      full["cases"].push_back(harness::case_json(c));
    try {
      a.json.write(full, inputs);
    } catch (const std::exception& e) {
      error_line(e.what());
      status = kUsage;
    }
  }
  std::fflush(stdout);
  return status;
}

void add_log_options(CLI::App& cmd, TierArgs& a) {
  cmd.add_option("--log-dir", a.log_dir,
                 "Root of the validation logs (default: $MMAEMU_LOG_DIR, else "
                 "<build>/validation_logs; never the committed docs/validation_logs)");
  cmd.add_flag("--no-log", a.no_log, "Write no validation log");
  cmd.add_flag("--publish", a.publish,
               "Write the log into the source tree's docs/validation_logs, signed with "
               "MMAEMU_SIGNING_KEY (a key trusted there); refused without one");
}

void add_tiers_options(CLI::App& cmd, std::string& tiers, bool& trust, const std::string& what) {
  cmd.add_option("--tiers", tiers, what);
  cmd.add_flag("--trust-tiers", trust,
               "Run a --tiers folder outside the source tree and the install prefix (a tier "
               "folder is code: kind command runs programs)");
}

void check_tiers_option(const std::string& tiers, const harness::Layout& layout, bool trust) {
  if (!tiers.empty())
    harness::check_tiers_trusted(layout, trust);
}

void add_tier(CLI::App& app, int& exit_code) {
  CLI::App* tier = app.add_subcommand("tier", "Validation tiers T0..T7: list and run");
  tier->require_subcommand(1);

  auto la = std::make_shared<TierArgs>();
  CLI::App* list =
      tier->add_subcommand("list", "The tiers, their budgets and whether they can run here");
  la->json.add(*list, "Also write the tiers");
  add_tiers_options(*list, la->tiers, la->trust_tiers,
                    "Folder of tier files (default: found beside mmaemu)");
  list->add_option("--build-dir", la->build_dir, "Build tree (for tiers that run its tests)");
  list->callback([la, &exit_code] { exit_code = run_list(*la); });

  auto ra = std::make_shared<TierArgs>();
  CLI::App* run = tier->add_subcommand("run", "Run one tier and write its validation log");
  run->add_option("name", ra->name, "Tier name (T0, T1, T1s, T2, T3, T3p, T4, T6, T7)")->required();
  run->add_option("--out", ra->out, "Folder for the tier's artefacts (T2 replay.json, T7 work)");
  ra->json.add(*run, "Also write the result (summary, details, cases)");
  run->add_option("--junit", ra->junit, "Also write JUnit XML to this file");
  run->add_option("--shard", ra->shard, "Run every N-th case starting at the k-th: k/N")
      ->check(non_empty("a shard k/N"));
  add_log_options(*run, *ra);
  run->add_option("--build-dir", ra->build_dir, "Build tree whose tests ctest tiers run");
  add_tiers_options(*run, ra->tiers, ra->trust_tiers, "Folder of tier files");
  run->add_option("--recordings", ra->recordings, "Folder of the committed recordings (T1)");
  run->add_option("--coverage", ra->coverage,
                  "T0 on a -DMMAEMU_COVERAGE=ON build: gcovr HTML, Cobertura XML and summary "
                  "into this folder, emulator/ line coverage into the log");
  run->add_option("--compare", ra->compare, "T2: a previous replay.json for the delta columns");
  run->add_option("--jobs,-j", ra->jobs, "Parallel tests (ctest -j) and build jobs");
  run->add_flag("--verbose,-v", ra->verbose, "One line per case");
  run->callback([ra, &exit_code] { exit_code = run_tier_args(*ra); });
}

} // namespace mmaemu::cli
