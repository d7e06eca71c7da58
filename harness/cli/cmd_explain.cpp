// SPDX-License-Identifier: BSD-2-Clause
// mmaemu explain M N K [call options] [--json PATH]
// Exit status: 0 the call is valid, 1 it would raise, 2 usage error (M, N or K negative or over
// the emulator's limits, an unknown profile, backend or kernel name included: nothing is
// allocated for the operands, which are meta tensors), 4 the backend or device asked for is
// not here (BackendUnavailableError).

#include <cstdio>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/explain.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

// Text that came from arguments or data files, for stdout: escaped, bounded.
int run_explain(const CallArgs& args, const JsonOption& json) {
  ScaledMmCall call;
  try {
    json.check(); // before any output
    call = make_call(args);
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const BackendUnavailableError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUnavailable;
  } catch (const MmaemuError& e) {
    error_line(e.what());
    return kUsage;
  }
  const CallPlan plan = explain(call);
  const std::string out_dtype =
      plan.out_dtype.empty() ? (args.out.empty() ? "(input dtype)" : args.out) : plan.out_dtype;
  std::printf("call        scaled_mm M=%lld N=%lld K=%lld a=%s b=%s out=%s use_fast_accum=%s\n",
              static_cast<long long>(args.M), static_cast<long long>(args.N),
              static_cast<long long>(args.K), shown(args.a, 4096).c_str(),
              shown(args.b, 4096).c_str(), shown(out_dtype, 4096).c_str(),
              args.fast ? "True" : "False");
  if (plan.ok) {
    std::printf("validation  ok\n");
  } else {
    std::printf("validation  %s: %s\n", plan.error_class.c_str(),
                shown(plan.error_class == "SplitKUnknownError"
                          ? splitk_unknown_message(plan.error_message)
                          : plan.error_message,
                      4096)
                    .c_str());
  }
  std::printf("profile     %s (%s)\n", shown(plan.profile, 4096).c_str(),
              plan.profile_maturity.c_str());
  std::printf("preset      %s (%s)\n", shown(plan.preset, 4096).c_str(),
              plan.preset_maturity.c_str());
  if (plan.split) {
    std::printf("split       S=%d scheme=%s source=%s verified=%s%s%s\n", plan.split->S,
                shown(plan.split->scheme, 4096).c_str(), plan.split->source.c_str(),
                plan.split->verified ? "yes" : "no",
                plan.split->note.empty() ? "" : " note: ", shown(plan.split->note, 4096).c_str());
  }
  if (!plan.backend.empty())
    std::printf("backend     %s\n", shown(plan.backend, 4096).c_str());
  for (const auto& f : plan.fallbacks)
    std::printf("fallback    %s\n", shown(f, 4096).c_str());
  for (const auto& w : plan.warnings) {
    std::printf("warning     %s: %s\n", warning_class_name(w.cls), shown(w.message, 4096).c_str());
  }
  for (const auto& n : plan.notes)
    std::printf("note        %s\n", shown(n, 4096).c_str());
  // What the call's bits rest on: one summary line per level, then each decision (--json has
  // the choices and the reasons too).
  for (const auto& line : plan.evidence_summary)
    std::printf("evidence    %s\n", shown(line, 4096).c_str());
  for (const auto& e : plan.evidence) {
    std::printf("decision    %s %s: %s\n", e.level.c_str(), shown(e.id, 4096).c_str(),
                shown(e.text, 4096).c_str());
  }
  try {
    json.write_text(call_plan_json(plan));
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  if (!plan.ok && plan.error_class == "BackendUnavailableError")
    return kUnavailable; // the backend or device is not here: unavailable, not a bad call
  return plan.ok ? kOk : kFailed;
}

} // namespace

void add_explain(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CallArgs>();
  auto json = std::make_shared<JsonOption>();
  CLI::App* cmd = app.add_subcommand("explain", "Validate a scaled_mm call and show its plan");
  cmd->add_option("M", args->M, "rows of input")->required();
  cmd->add_option("N", args->N, "columns of mat2")->required();
  cmd->add_option("K", args->K, "inner dimension")->required();
  add_call_options(*cmd, *args);
  json->add(*cmd, "Write the CallPlan");
  cmd->callback([args, json, &exit_code] { exit_code = run_explain(*args, *json); });
}

} // namespace mmaemu::cli
