// SPDX-License-Identifier: BSD-2-Clause
// mmaemu replay FILE.h5 [FILE.h5 ...] [--backend reference] [--json OUT] [--verbose]

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/support/digest.hpp"

namespace mmaemu::cli {

namespace {

struct ReplayArgs {
  std::vector<std::string> files;
  std::string backend = "auto";
  std::string json;
  bool verbose = false;
  std::size_t max_listed = 10;
};

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

nlohmann::json to_json(const harness::ReplayResult& r, const ReplayArgs& args,
                       const std::string& backend) {
  nlohmann::json j;
  j["format"] = "mmaemu-replay/1";
  j["backend"] = backend;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : args.files) {
    files.push_back({{"path", f}, {"sha256", support::sha256_file(f)}});
  }
  j["files"] = files;
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& s : r.sets) {
    nlohmann::json mism = nlohmann::json::array();
    for (const auto& c : s.results) {
      if (c.outcome == harness::Outcome::pass) continue;
      mism.push_back({{"id", c.id},
                      {"outcome", harness::outcome_name(c.outcome)},
                      {"expected", hex32(c.expected)},
                      {"actual", hex32(c.actual)},
                      {"class", mismatch_name(c.why)},
                      {"message", c.message}});
    }
    sets.push_back({{"file", s.file},
                    {"set", s.name},
                    {"preset", s.preset},
                    {"gpu", s.gpu},
                    {"cases", s.cases},
                    {"passed", s.passed},
                    {"failed", s.failed},
                    {"errors", s.errors},
                    {"seconds", s.seconds},
                    {"not_passed", mism}});
  }
  j["sets"] = sets;
  j["passed"] = r.passed;
  j["failed"] = r.failed;
  j["errors"] = r.errors;
  j["verdict"] = (r.failed == 0 && r.errors == 0 && r.passed > 0) ? "PASS" : "FAIL";
  return j;
}

int run_replay(const ReplayArgs& args) {
  std::string backend;
  try {
    backend = harness::resolve_backend(args.backend);
  } catch (const BackendUnavailableError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUsage;
  }
  std::vector<std::filesystem::path> paths(args.files.begin(), args.files.end());
  harness::ReplayResult result;
  std::printf("%-28s %-14s %8s %8s %8s %9s\n", "set", "preset", "cases", "passed", "failed",
              "seconds");
  auto on_set = [&](const harness::SetResult& s) {
    if (args.verbose) {
      for (const auto& c : s.results) {
        std::printf("%s %s expected=%s actual=%s\n", harness::outcome_name(c.outcome), c.id.c_str(),
                    hex32(c.expected).c_str(), hex32(c.actual).c_str());
      }
    }
    std::printf("%-28s %-14s %8zu %8zu %8zu %9.3f\n", s.name.c_str(), s.preset.c_str(), s.cases,
                s.passed, s.failed + s.errors, s.seconds);
    std::fflush(stdout);
  };
  try {
    result = harness::replay_files(paths, on_set);
  } catch (const recordings::RecordingError& e) {
    error_line(e.what());
    return kUsage;
  }
  std::size_t listed = 0;
  for (const auto& s : result.sets) {
    for (const auto& c : s.results) {
      if (c.outcome == harness::Outcome::pass) continue;
      if (listed == 0) std::printf("\nfirst mismatches (expected vs actual, binary32):\n");
      if (listed++ >= args.max_listed) break;
      if (c.outcome == harness::Outcome::error) {
        std::printf("  ERROR %s: %s\n", c.id.c_str(), c.message.c_str());
      } else {
        std::printf("  FAIL %s [%s]\n    expected %s\n    actual   %s\n", c.id.c_str(),
                    mismatch_name(c.why), decompose_bits(c.expected, Format::fp32).c_str(),
                    decompose_bits(c.actual, Format::fp32).c_str());
      }
    }
  }
  if (!args.json.empty()) {
    try {
      support::write_file_atomic(args.json, to_json(result, args, backend).dump(2) + "\n");
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  std::printf("%zu passed, %zu failed\n", result.passed, result.failed + result.errors);
  if (result.failed + result.errors > 0) return kFailed;
  return kOk;
}

}  // namespace

void add_replay(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand("replay", "Replay recordings bit for bit on a backend");
  cmd->add_option("files", args->files, "Recording files (.h5)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--backend", args->backend, "auto or reference")->capture_default_str();
  cmd->add_option("--json", args->json, "Write the per-case report as JSON to this file");
  cmd->add_flag("--verbose,-v", args->verbose, "One line per case");
  cmd->callback([args, &exit_code] { exit_code = run_replay(*args); });
}

}  // namespace mmaemu::cli
