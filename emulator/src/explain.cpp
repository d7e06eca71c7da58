// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/explain.hpp"

#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/emulator/evidence.hpp"

#include <nlohmann/json.hpp>

namespace mmaemu {

namespace {

void fail(CallPlan& plan, const MmaemuError& e) {
  plan.ok = false;
  plan.error_class = e.class_name();
  plan.error_message = e.what();
}

// The decisions the call relies on: the instruction model of its preset and formats, the API
// rules, and the GEMM level of its profile, mode and (when known) split.
void add_evidence(CallPlan& plan, const ScaledMmCall& call, const Profile& profile, Format out) {
  namespace ev = evidence;
  ev::CallShape shape;
  shape.a = call.input.dtype();
  shape.b = call.mat2.dtype();
  shape.out = out;
  shape.fast = call.use_fast_accum;
  if (plan.split)
    shape.S = plan.split->S;
  shape.scale_result = call.scale_result.has_value();
  const auto uses = ev::decisions_for_call(profile, shape);
  for (const auto& u : uses) {
    plan.evidence.push_back({u.decision->id, ev::level_name(u.decision->level), u.decision->title,
                             u.verdict.choice, ev::status_name(u.verdict.status), u.verdict.text,
                             u.verdict.sources, u.verdict.why});
  }
  for (ev::Level l : {ev::Level::instruction, ev::Level::gemm, ev::Level::api})
    plan.evidence_summary.push_back(ev::summary_line(l, ev::count(uses, l)));
  if (!plan.split) {
    plan.notes.push_back("the split is not known: the split-K decisions (plan.split_layout, "
                         "plan.reduction, plan.alpha_before_reduction) are not listed");
  }
}

} // namespace

CallPlan explain(const ScaledMmCall& call) {
  CallPlan plan;
  plan.use_fast_accum = call.use_fast_accum;
  const Profile* profile = call.profile_ptr;
  try {
    if (!profile)
      profile = &get_profile_or_default(call.profile);
  } catch (const MmaemuError& e) {
    fail(plan, e);
    return plan;
  }
  plan.profile = profile->name;
  plan.profile_maturity = maturity_name(profile->maturity);
  const Preset& preset = get_preset_quiet(profile->preset);
  plan.preset = preset.name;
  plan.preset_maturity = maturity_name(preset.maturity);
  if (preset.maturity == Maturity::experimental) {
    plan.warnings.push_back({WarningClass::experimental_preset, "preset:" + preset.name,
                             "preset '" + preset.name + "' is experimental: " + preset.evidence});
  }
  if (profile->maturity == Maturity::experimental) {
    plan.warnings.push_back(
        {WarningClass::experimental_preset, "profile:" + profile->name,
         "profile '" + profile->name + "' is experimental (" + profile->gpu_name + ")"});
  }
  try {
    validate_scaled_mm(call, *profile);
  } catch (const MmaemuError& e) {
    fail(plan, e);
    return plan;
  }
  const Format out = result_dtype(call);
  plan.out_dtype = spec(out).torch_name;
  plan.M = call.input.size(0);
  plan.K = call.input.size(1);
  plan.N = call.mat2.size(1);

  // Backend selection: the CUDA kernels are tried first under "auto" on a CUDA device.
  try {
    const ChainBackend chosen = choose_backend({call.backend,
                                                &get_preset_quiet(profile->preset),
                                                {call.input.dtype(), call.mat2.dtype()}});
    plan.backend = chosen.name;
    plan.fallbacks = chosen.fallbacks;
  } catch (const MmaemuError& e) {
    fail(plan, e);
    return plan;
  }
  // The checks made when the GEMM is planned.
  try {
    SplitKQuery q{
        plan.M, plan.N, plan.K, call.input.dtype(), call.mat2.dtype(), out, call.use_fast_accum,
        true};
    q.scale_result = call.scale_result.has_value();
    SplitDecision d = resolve_splitk(q, *profile, call.splitk, std::nullopt, /*dry=*/true);
    for (const auto& w : d.warnings)
      plan.warnings.push_back(w);
    plan.split = d;
    // accumulate keeps S partial [M, N] results: the same limit as there.
    std::int64_t partials = 0;
    if (plan.K > 0 &&
        (__builtin_mul_overflow(static_cast<std::int64_t>(d.S), plan.M * plan.N, &partials) ||
         partials > kMaxTensorElements)) {
      throw ValueError("accumulate: split-K S = " + std::to_string(d.S) +
                       " with M*N = " + std::to_string(plan.M * plan.N) + " needs more than " +
                       std::to_string(kMaxTensorElements) +
                       " partial values (the emulator's limit, 2^40)");
    }
    if (!call.use_fast_accum && !slow_accumulation_characterised(*profile, preset)) {
      throw UnsupportedFeatureError("use_fast_accum=False: preset '" + preset.name +
                                    "' has no characterised slow accumulation (slow_chunk none)");
    }
  } catch (const MmaemuError& e) {
    fail(plan, e);
    add_evidence(plan, call, *profile, out);
    return plan;
  }
  add_evidence(plan, call, *profile, out);
  if (plan.K == 0)
    plan.notes.push_back("K = 0: no kernel runs; the output is zero-filled");
  if (plan.M == 0 || plan.N == 0)
    plan.notes.push_back("M or N = 0: an empty result, no kernel runs");
  if (call.use_fast_accum && plan.split && plan.split->S == 1 &&
      plan.K >= (std::int64_t{1} << 24)) {
    plan.notes.push_back(
        "K >= 2^24 with fast accumulation: the CUDA kernels v4, v9, tc3 and h4 refuse an unsplit "
        "chain of this length when they run (ValueError at launch); the reference backend runs it");
  }
  return plan;
}

std::string call_plan_json(const CallPlan& plan) {
  nlohmann::json j;
  if (plan.ok) {
    j["validation"] = "ok";
  } else {
    j["validation"] = {plan.error_class, plan.error_message};
  }
  j["profile"] = plan.profile;
  j["preset"] = plan.preset;
  j["preset_maturity"] = plan.preset_maturity;
  j["profile_maturity"] = plan.profile_maturity;
  if (plan.split) {
    j["split"] = {{"S", plan.split->S},
                  {"scheme", plan.split->scheme},
                  {"source", plan.split->source},
                  {"verified", plan.split->verified},
                  {"table_id", plan.split->table_id},
                  {"note", plan.split->note}};
  } else {
    j["split"] = nullptr;
  }
  j["backend"] = plan.backend;
  j["fallbacks"] = plan.fallbacks;
  nlohmann::json w = nlohmann::json::array();
  for (const auto& x : plan.warnings)
    w.push_back({{"class", warning_class_name(x.cls)}, {"message", x.message}});
  j["warnings"] = w;
  j["notes"] = plan.notes;
  j["out_dtype"] = plan.out_dtype;
  j["use_fast_accum"] = plan.use_fast_accum;
  j["shape"] = {{"M", plan.M}, {"N", plan.N}, {"K", plan.K}};
  nlohmann::json decisions = nlohmann::json::array();
  for (const auto& e : plan.evidence) {
    decisions.push_back({{"id", e.id},
                         {"level", e.level},
                         {"title", e.title},
                         {"choice", e.choice},
                         {"status", e.status},
                         {"text", e.text},
                         {"sources", e.sources},
                         {"why", e.why}});
  }
  j["evidence"] = {{"summary", plan.evidence_summary}, {"decisions", decisions}};
  return j.dump(2);
}

} // namespace mmaemu
