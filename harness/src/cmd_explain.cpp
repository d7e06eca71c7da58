// SPDX-License-Identifier: BSD-2-Clause
// mmaemu explain M N K [call options] [--json PATH]
// Exit status: 0 the call is valid, 1 it would raise, 2 usage error, 4 explain unavailable.

#include <cstdio>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/explain.hpp"
#include "mmaemu/support/atomic_write.hpp"

namespace mmaemu::cli {

namespace {

int run_explain(const CallArgs& args, const std::string& json_path) {
  if (args.device != "auto" && args.device != "cpu") {
    if (args.device == "cuda" || args.device.rfind("cuda:", 0) == 0) {
      error_line("explain is unavailable for --device " + args.device +
                 ": no CUDA device is visible (this build has no CUDA backend)");
      return kUnavailable;
    }
    error_line("--device: '" + args.device + "' is not auto, cpu, cuda or cuda:N");
    return kUsage;
  }
  ScaledMmCall call;
  try {
    call = make_call(args);
  } catch (const MmaemuError& e) {
    error_line(e.what());
    return kUsage;
  }
  const CallPlan plan = explain(call);
  std::printf("call        scaled_mm M=%lld N=%lld K=%lld a=%s b=%s out=%s use_fast_accum=%s\n",
              static_cast<long long>(args.M), static_cast<long long>(args.N),
              static_cast<long long>(args.K), args.a.c_str(), args.b.c_str(),
              plan.out_dtype.empty() ? (args.out.empty() ? "(input dtype)" : args.out.c_str())
                                     : plan.out_dtype.c_str(),
              args.fast ? "True" : "False");
  if (plan.ok) {
    std::printf("validation  ok\n");
  } else {
    std::printf("validation  %s: %s\n", plan.error_class.c_str(), plan.error_message.c_str());
  }
  std::printf("profile     %s (%s)\n", plan.profile.c_str(), plan.profile_maturity.c_str());
  std::printf("preset      %s (%s)\n", plan.preset.c_str(), plan.preset_maturity.c_str());
  if (plan.split) {
    std::printf("split       S=%d scheme=%s source=%s verified=%s%s%s\n", plan.split->S,
                plan.split->scheme.c_str(), plan.split->source.c_str(),
                plan.split->verified ? "yes" : "no", plan.split->note.empty() ? "" : " note: ",
                plan.split->note.c_str());
  }
  if (!plan.backend.empty()) std::printf("backend     %s\n", plan.backend.c_str());
  for (const auto& f : plan.fallbacks) std::printf("fallback    %s\n", f.c_str());
  for (const auto& w : plan.warnings) {
    std::printf("warning     %s: %s\n", warning_class_name(w.cls), w.message.c_str());
  }
  for (const auto& n : plan.notes) std::printf("note        %s\n", n.c_str());
  if (!json_path.empty()) {
    try {
      support::write_file_atomic(json_path, call_plan_json(plan) + "\n");
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  return plan.ok ? kOk : kFailed;
}

}  // namespace

void add_explain(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CallArgs>();
  auto json = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("explain", "Validate a scaled_mm call and show its plan");
  cmd->add_option("M", args->M, "rows of input")->required();
  cmd->add_option("N", args->N, "columns of mat2")->required();
  cmd->add_option("K", args->K, "inner dimension")->required();
  add_call_options(*cmd, *args);
  cmd->add_option("--json", *json, "Write the CallPlan as JSON to this file");
  cmd->callback([args, json, &exit_code] { exit_code = run_explain(*args, *json); });
}

}  // namespace mmaemu::cli
