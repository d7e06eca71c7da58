// SPDX-License-Identifier: BSD-2-Clause
// mmaemu selftest [--device N] [--kernels v1,v4] [--force] [--json PATH]: loads each CUDA
// kernel on the device and runs its gates (seed 000, "Gates"). Exit 0 when every kernel
// examined passed, 1 when one failed, 4 when no CUDA device is visible (nothing was tested).

#include <cstdio>
#include <nlohmann/json.hpp>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/outcome/outcome.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct SelftestArgs {
  std::string device = "0";
  std::vector<std::string> kernels;
  bool force = false;
  JsonOption json;
};

// A kernel's outcome: PASS when it loaded and its gates passed; UNSUPPORTED when it was not
// tried (a by-design skip, no device); FAIL when it did not load or a gate failed.
outcome::Outcome outcome_of(const kernels::KernelStatus& s) {
  if (s.available)
    return outcome::Outcome::pass;
  if (!s.skip.empty() || s.device < 0)
    return outcome::Outcome::unsupported;
  return outcome::Outcome::fail;
}

nlohmann::json status_json(const kernels::KernelStatus& s) {
  nlohmann::json gates = nlohmann::json::array();
  for (const auto& g : s.gates) {
    gates.push_back({{"gate", g.gate},
                     {"version", g.version},
                     {"passed", g.passed},
                     {"cached", g.cached},
                     {"detail", g.detail}});
  }
  return {{"backend", s.backend},
          {"kernel", s.kernel},
          {"preset", s.preset},
          {"verdict", outcome::outcome_name(outcome_of(s))},
          {"device", s.device},
          {"device_name", s.device_name},
          {"cc", s.cc},
          {"available", s.available},
          {"validated_here", s.validated_here},
          {"source", s.source},
          {"image_sha256", s.image_sha256},
          {"fatbin_reason", s.fatbin_reason},
          {"skip", s.skip},
          {"failure", s.failure},
          {"gates", gates}};
}

int run_selftest(const SelftestArgs& args) {
  int device = 0;
  try {
    device = parse_cuda_device("--device", args.device);
    args.json.check();
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  if (const std::string absent = absent_kernel_message(args.kernels); !absent.empty()) {
    error_line(absent);
    return kUnavailable;
  }
  std::vector<kernels::KernelStatus> statuses;
  try {
    statuses = kernels::kernel_statuses(device, args.kernels, args.force);
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + support::printable(e.what()));
    return kUsage;
  }
  // Why no kernel can be tested here, once (it is every kernel's reason).
  const std::string cuda_why = kernels::cuda_unavailable_reason();
  if (!cuda_why.empty())
    std::printf("cuda: unavailable: %s\n", support::printable(cuda_why, 400).c_str());
  outcome::Tally tally;
  for (const auto& s : statuses) {
    const outcome::Outcome o = outcome_of(s);
    tally.add(o);
    const std::string v = outcome::outcome_name(o);
    std::string what = s.available ? (s.source + ", " + (s.gates.empty() ? "" : s.gates[0].detail) +
                                      (s.gates.empty() || !s.gates[0].cached ? "" : " (cached)"))
                       : !s.skip.empty()                            ? s.skip
                       : !cuda_why.empty() && s.failure == cuda_why ? "(no CUDA, above)"
                                                                    : s.failure;
    std::printf("%-12s %-8s %-12s %s\n", v.c_str(), s.backend.c_str(),
                s.device >= 0 ? ("sm_" + std::to_string(s.cc)).c_str() : "-",
                support::printable(what, 400).c_str());
  }
  const std::size_t passed = tally[outcome::Outcome::pass];
  const std::size_t failed = tally[outcome::Outcome::fail];
  const std::size_t unsupported = tally[outcome::Outcome::unsupported];
  std::printf("%zu passed, %zu failed, %zu unsupported\n", passed, failed, unsupported);
  const outcome::Outcome verdict = outcome::verdict_of(tally);
  const int code = outcome::exit_status_of(verdict);
  if (args.json.given()) {
    nlohmann::json j;
    j["schema"] = "mmaemu-selftest/1";
    j["device"] = device;
    j["unavailable_reason"] = kernels::cuda_unavailable_reason();
    j["passed"] = passed;
    j["failed"] = failed;
    j["unsupported"] = unsupported;
    j["verdict"] = outcome::outcome_name(verdict);
    j["kernels"] = nlohmann::json::array();
    for (const auto& s : statuses)
      j["kernels"].push_back(status_json(s));
    j["exit_code"] = code;
    try {
      args.json.write(j);
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  return code;
}

} // namespace

void add_selftest(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SelftestArgs>();
  CLI::App* cmd =
      app.add_subcommand("selftest", "Load every CUDA kernel on a device and run its gates");
  cmd->add_option("--device", args->device, "CUDA device: cuda, cuda:N or N")
      ->capture_default_str();
  cmd->add_option("--kernels", args->kernels,
                  "kernels to test (default: all of " + kernels::kernel_names_text() + ")")
      ->delimiter(',');
  cmd->add_flag("--force", args->force, "run the gates again instead of using cached verdicts");
  args->json.add(*cmd, "write the result");
  cmd->callback([args, &exit_code] { exit_code = run_selftest(*args); });
}

} // namespace mmaemu::cli
