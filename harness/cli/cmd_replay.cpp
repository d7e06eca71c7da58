// SPDX-License-Identifier: BSD-2-Clause
// mmaemu replay FILE.h5 [FILE.h5 ...] [--backend reference] [--json PATH] [--verbose]
//
// Exit status: 2 if an argument is bad (checked before anything runs) or a recording could
// not be read (the others are still replayed and reported); else 1 if a case failed or could
// not run; else 4 if nothing was tested (every case out of scope, or no case at all); else 0.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
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

// ERROR when a file could not be read or a case could not run, FAIL when bits differ,
// UNSUPPORTED when nothing was tested, PASS otherwise.
const char* verdict_of(const harness::ReplayResult& r) {
  if (!r.unreadable.empty() || r.errors > 0)
    return "ERROR";
  if (r.failed > 0)
    return "FAIL";
  if (r.tested() == 0)
    return "UNSUPPORTED";
  return "PASS";
}

nlohmann::json to_json(const harness::ReplayResult& r, const ReplayArgs& args,
                       const std::string& backend) {
  nlohmann::json j;
  j["format"] = "mmaemu-replay/1";
  j["backend"] = backend;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : args.files) {
    nlohmann::json entry = {{"path", f}};
    bool readable = true;
    for (const auto& u : r.unreadable) {
      if (u.file == f) {
        entry["error"] = u.message;
        readable = false;
      }
    }
    if (readable) {
      try {
        entry["sha256"] = support::sha256_file(f);
      } catch (const std::exception& e) {
        entry["error"] = e.what();
      }
    }
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
  j["verdict"] = verdict_of(r);
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
    error_line("ERROR " + support::printable(u.message, 1024));
  };
  const harness::ReplayResult result =
      harness::replay_files(paths, on_set, on_unreadable, args.backend);
  std::size_t listed = 0;
  for (const auto& s : result.sets) {
    for (const auto& c : s.results) {
      if (c.outcome == harness::Outcome::pass || c.outcome == harness::Outcome::unsupported)
        continue;
      if (listed == 0)
        std::printf("\nfirst mismatches (expected vs actual, binary32):\n");
      if (listed++ >= args.max_listed)
        break;
      if (c.outcome == harness::Outcome::error) {
        std::printf("  ERROR %s: %s\n", c.id.c_str(), c.message.c_str());
      } else if (c.why == Mismatch::none) {
        std::printf("  FAIL %s: %s\n", c.id.c_str(), c.message.c_str());
      } else {
        std::printf("  FAIL %s [%s]\n    expected %s\n    actual   %s\n", c.id.c_str(),
                    mismatch_name(c.why), decompose_bits(c.expected, Format::fp32).c_str(),
                    decompose_bits(c.actual, Format::fp32).c_str());
      }
    }
  }
  try {
    if (args.json.given())
      args.json.write(to_json(result, args, backend), paths);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  std::string closing = std::to_string(result.passed) + " passed, " +
                        std::to_string(result.failed + result.errors) + " failed";
  if (result.unsupported > 0)
    closing += ", " + std::to_string(result.unsupported) + " unsupported";
  if (!result.unreadable.empty())
    closing += ", " + std::to_string(result.unreadable.size()) + " unreadable";
  std::printf("%s\n", closing.c_str());
  if (!result.unreadable.empty())
    return kUsage;
  if (result.failed + result.errors > 0)
    return kFailed;
  if (result.tested() == 0)
    return kUnavailable;
  return kOk;
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
