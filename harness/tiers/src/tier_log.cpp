// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_log.hpp"

#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/host_info.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/result_env.hpp"

namespace mmaemu::harness {

using nlohmann::json;

std::string log_stem(const TierSpec& tier, const Shard& shard) {
  if (!shard.active())
    return tier.name;
  return tier.name + "-shard" + std::to_string(shard.index) + "of" + std::to_string(shard.count);
}

json build_tier_log(const TierSpec& tier, const TierResult& result, const RunOptions& opt,
                    const std::vector<std::string>& command_line, const std::string& version) {
  json j;
  j["format"] = reports::kLogFormat;
  j["tier"] = tier.name;
  j["title"] = tier.title;
  j["tier_file"] = {{"path", tier.file.filename().string()}, {"sha256", tier.file_sha256}};
  j["required_for_release"] = tier.required_for_release;
  j["mmaemu"] = {{"version", version}, {"layout", opt.layout.origin}};
  j["git"] = result.git.is_null() ? reports::git_state(opt.layout.source_dir) : result.git;
  j["command_line"] = command_line;
  j["host"] = reports::host_info();
  j["gpu"] = gpu_json(opt.cuda);
  j["environment"] = reports::result_environment();
  json inputs = json::array();
  for (const auto& in : result.inputs) {
    inputs.push_back({{"path", in.path}, {"sha256", in.sha256}, {"bytes", in.bytes}});
  }
  j["inputs"] = inputs;
  j["seeds"] = result.seeds;
  j["shard"] =
      opt.shard.active() ? json{{"index", opt.shard.index}, {"count", opt.shard.count}} : json();
  json cases = json::array();
  for (const auto& c : result.cases)
    cases.push_back(case_json(c));
  j["cases"] = cases;
  if (!result.sets.empty()) {
    j["sets"] = result.sets;
    std::string letters;
    for (auto o : outcome::kAllOutcomes) {
      letters += (letters.empty() ? "" : ", ") + std::string(1, outcome::outcome_letter(o)) + " " +
                 outcome_name(o);
    }
    j["outcome_letters"] = "sets[].outcomes: one letter per case of the set that this run took, "
                           "in recording order (" +
                           letters + ")";
  }
  j["totals"] = totals_json(result);
  j["verdict"] = outcome_name(result.verdict);
  j["reason"] = result.reason;
  j["durations"] = {{"seconds", result.seconds},
                    {"started_utc", result.started_utc},
                    {"finished_utc", result.finished_utc}};
  j["budget"] = {{"seconds", tier.budget_seconds},
                 {"within", result.seconds <= tier.budget_seconds}};
  if (tier.budget_data_mib)
    j["budget"]["data_mib"] = *tier.budget_data_mib;
  j["details"] = result.details;
  if (!result.benchmarks.empty())
    j["benchmarks"] = result.benchmarks;
  // How much of what the tier checks is verified: every profile's decision counts.
  j["evidence"] = json::parse(evidence::counts_json_text());
  return j;
}

} // namespace mmaemu::harness
