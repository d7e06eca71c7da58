// SPDX-License-Identifier: BSD-2-Clause
// mmaemu replay FILE.h5 [FILE.h5 ...] [--backend reference] [--json PATH] [--verbose]
//
// Exit status: 2 if an argument is bad (checked before anything runs) or a recording could
// not be read (the others are still replayed and reported); else 1 if a case failed or could
// not run; else 4 if nothing was tested (every case out of scope, or no case at all); else 0.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct ReplayArgs {
  std::vector<std::string> files;
  std::string backend = "auto";
  JsonOption json;
  bool verbose = false;
  std::size_t max_listed = 10;
};

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// How much of what the replayed sets bear on is verified: the instruction-level counts of
// each preset the mma sets ran, the GEMM-level counts of each profile the GEMM sets name.
struct EvidenceLine {
  std::string preset, profile, mode;
  evidence::Level level = evidence::Level::instruction;
  evidence::Counts counts;
  std::string summary;
};

std::vector<EvidenceLine> evidence_lines(const harness::ReplayResult& r) {
  namespace ev = evidence;
  std::vector<EvidenceLine> out;
  std::vector<std::string> presets, profiles;
  for (const auto& s : r.sets) {
    for (const auto& p : s.profiles) {
      if (std::find(profiles.begin(), profiles.end(), p) == profiles.end())
        profiles.push_back(p);
    }
    if (s.preset == "gemm" || s.preset == "gemm_call")
      continue;
    if (std::find(presets.begin(), presets.end(), s.preset) == presets.end())
      presets.push_back(s.preset);
  }
  for (const auto& preset : presets) {
    // The first shipped profile of that preset stands for its instruction level.
    for (const auto& name : list_profiles()) {
      const Profile& p = get_profile(name);
      if (p.preset != preset)
        continue;
      EvidenceLine e;
      e.preset = preset;
      e.counts = ev::count(ev::profile_decisions(p, ev::Mode::fast), ev::Level::instruction);
      e.summary = ev::summary_line(ev::Level::instruction, e.counts);
      out.push_back(e);
      break;
    }
  }
  for (const auto& name : profiles) {
    const Profile* p = nullptr;
    try {
      p = &get_profile_or_default(name);
    } catch (const MmaemuError&) {
      continue; // an unknown profile: its cases say so
    }
    for (ev::Mode m : {ev::Mode::slow, ev::Mode::fast}) {
      EvidenceLine e;
      e.profile = p->name;
      e.mode = ev::mode_name(m);
      e.level = ev::Level::gemm;
      e.counts = ev::count(ev::profile_decisions(*p, m), ev::Level::gemm);
      e.summary = ev::summary_line(ev::Level::gemm, e.counts);
      out.push_back(e);
    }
  }
  return out;
}

nlohmann::json to_json(const harness::ReplayResult& r, const std::string& backend,
                       outcome::Outcome verdict) {
  nlohmann::json j;
  j["format"] = "mmaemu-replay/1";
  j["backend"] = backend;
  nlohmann::json files = nlohmann::json::array();
  // What the replay read of each file (it read each once): its sha256, or why it could not.
  for (const auto& f : r.files) {
    nlohmann::json entry = {{"path", f.file}};
    if (!f.error.empty())
      entry["error"] = f.error;
    else
      entry["sha256"] = f.sha256;
    if (!f.not_hardware.empty())
      entry["not_hardware"] = f.not_hardware;
    files.push_back(entry);
  }
  j["files"] = files;
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& s : r.sets) {
    nlohmann::json mism = nlohmann::json::array();
    for (const auto& c : s.results) {
      if (c.outcome == harness::Outcome::pass)
        continue;
      mism.push_back({{"id", c.id},
                      {"outcome", harness::outcome_name(c.outcome)},
                      {"expected", hex32(c.expected)},
                      {"actual", hex32(c.actual)},
                      {"class", mismatch_name(c.why)},
                      {"message", c.message}});
    }
    nlohmann::json line = {{"file", s.file},       {"set", s.name},
                           {"preset", s.preset},   {"ran_on", s.backend},
                           {"gpu", s.gpu},         {"cases", s.cases},
                           {"passed", s.passed},   {"failed", s.failed},
                           {"errors", s.errors},   {"unsupported", s.unsupported},
                           {"seconds", s.seconds}, {"not_passed", mism}};
    if (!s.scope.empty())
      line["scope"] = s.scope;
    if (!s.expect_error.empty())
      line["expect_error"] = s.expect_error;
    if (!s.xfail.empty())
      line["xfail"] = s.xfail;
    if (s.xfailed > 0)
      line["xfailed"] = s.xfailed;
    if (s.xpassed > 0)
      line["xpassed"] = s.xpassed;
    sets.push_back(line);
  }
  j["sets"] = sets;
  nlohmann::json unreadable = nlohmann::json::array();
  for (const auto& u : r.unreadable)
    unreadable.push_back({{"path", u.file}, {"message", u.message}});
  j["unreadable"] = unreadable;
  j["passed"] = r.passed;
  j["failed"] = r.failed;
  j["errors"] = r.errors;
  j["unsupported"] = r.unsupported;
  if (r.xfailed > 0)
    j["xfailed"] = r.xfailed;
  if (r.xpassed > 0)
    j["xpassed"] = r.xpassed;
  j["verdict"] = outcome::outcome_name(verdict);
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : evidence_lines(r)) {
    nlohmann::json x = {
        {"level", evidence::level_name(e.level)}, {"confirmed", e.counts.confirmed},
        {"consistent", e.counts.consistent},      {"contradicted", e.counts.contradicted},
        {"unverified", e.counts.unverified},      {"summary", e.summary}};
    if (!e.preset.empty())
      x["preset"] = e.preset;
    if (!e.profile.empty()) {
      x["profile"] = e.profile;
      x["mode"] = e.mode;
    }
    ev.push_back(x);
  }
  j["evidence"] = ev;
  return j;
}

int run_replay(const ReplayArgs& args) {
  std::vector<std::filesystem::path> paths(args.files.begin(), args.files.end());
  std::string backend;
  try {
    // Usage first: an unknown backend or kernel name is exit 2; then the output, before
    // anything runs (the report must not replace a recording it reads, nor go to a device,
    // FIFO or folder).
    check_backend_name("--backend", args.backend);
    args.json.check(paths);
    backend = harness::resolve_backend(args.backend);
  } catch (const BackendUnavailableError& e) {
    // A backend this build or machine lacks is unavailable (4).
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUnavailable;
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  std::printf("backend: %s\n", backend.c_str());
  std::printf("%-28s %-14s %8s %8s %8s %8s %9s  %s\n", "set", "preset", "cases", "passed", "failed",
              "n/a", "seconds", "ran on");
  auto on_set = [&](const harness::SetResult& s) {
    if (args.verbose) {
      for (const auto& c : s.results) {
        std::printf("%s %s expected=%s actual=%s%s\n", harness::outcome_name(c.outcome),
                    c.id.c_str(), hex32(c.expected).c_str(), hex32(c.actual).c_str(),
                    c.message.empty() ? "" : (" (" + c.message + ")").c_str());
      }
    }
    std::printf("%-28s %-14s %8zu %8zu %8zu %8zu %9.3f  %s\n", s.name.c_str(), s.preset.c_str(),
                s.cases, s.passed, s.failed + s.errors, s.unsupported, s.seconds,
                s.backend.empty() ? "-" : s.backend.c_str());
    std::fflush(stdout);
  };
  // One line on stderr per file that could not be read; the message names the file.
  auto on_unreadable = [&](const harness::UnreadableFile& u) {
    std::fflush(stdout);
    // Escaped once already (unreadable_message); error_line is the net for control bytes.
    error_line("ERROR " + u.message);
  };
  harness::ReplayOptions opt;
  opt.backend = args.backend;
  const harness::ReplayResult result = harness::replay_files(paths, on_set, on_unreadable, opt);
  for (const auto& f : result.files) {
    // `replay` replays any recording; the tiers take hardware recordings only.
    if (!f.not_hardware.empty()) {
      std::printf("note: %s: %s\n", support::printable(f.file, 256).c_str(),
                  f.not_hardware.c_str());
    }
  }
  const outcome::Outcome verdict = outcome::verdict_of(result.tally());
  std::size_t listed = 0;
  for (const auto& s : result.sets) {
    for (const auto& c : s.results) {
      if (c.outcome == harness::Outcome::pass || c.outcome == harness::Outcome::unsupported)
        continue;
      if (listed == 0)
        std::printf("\nfirst mismatches (expected vs actual, binary32):\n");
      if (listed++ >= args.max_listed)
        break;
      if (c.why == Mismatch::none) {
        std::printf("  %s %s: %s\n", harness::outcome_name(c.outcome), c.id.c_str(),
                    c.message.c_str());
      } else {
        std::printf("  FAIL %s [%s]\n    expected %s\n    actual   %s\n", c.id.c_str(),
                    mismatch_name(c.why), decompose_bits(c.expected, Format::fp32).c_str(),
                    decompose_bits(c.actual, Format::fp32).c_str());
      }
    }
  }
  try {
    if (args.json.given())
      args.json.write(to_json(result, backend, verdict), paths);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  for (const auto& e : evidence_lines(result)) {
    if (!e.preset.empty())
      std::printf("evidence    preset %s: %s\n", e.preset.c_str(), e.summary.c_str());
    else
      std::printf("evidence    profile %s, %s: %s\n", e.profile.c_str(), e.mode.c_str(),
                  e.summary.c_str());
  }
  std::string closing = std::to_string(result.passed) + " passed, " +
                        std::to_string(result.failed + result.errors) + " failed";
  if (result.unsupported > 0)
    closing += ", " + std::to_string(result.unsupported) + " unsupported";
  if (result.xfailed > 0)
    closing += ", " + std::to_string(result.xfailed) + " xfail";
  if (result.xpassed > 0)
    closing += ", " + std::to_string(result.xpassed) + " xpass";
  if (!result.unreadable.empty())
    closing += ", " + std::to_string(result.unreadable.size()) + " unreadable";
  std::printf("%s\n", closing.c_str());
  // A recording that could not be read is bad input (2); otherwise the verdict's status.
  if (!result.unreadable.empty())
    return kUsage;
  return outcome::exit_status_of(verdict);
}

} // namespace

void add_replay(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand("replay", "Replay recordings bit for bit on a backend");
  // No existence check here: a missing file is reported like any unreadable recording, and
  // the other files are still replayed.
  cmd->add_option("files", args->files, "Recording files (.h5)")->required();
  cmd->add_option("--backend", args->backend, backend_help())->capture_default_str();
  args->json.add(*cmd, "Write the per-case report");
  cmd->add_flag("--verbose,-v", args->verbose, "One line per case");
  cmd->callback([args, &exit_code] { exit_code = run_replay(*args); });
}

} // namespace mmaemu::cli
