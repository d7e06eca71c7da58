// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The validation log of a tier run (format mmaemu-validation-log/1, docs/testing.md).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mmaemu/harness/tier_result.hpp"
#include "mmaemu/harness/tier_runner.hpp"
#include "mmaemu/harness/tier_spec.hpp"

namespace mmaemu::harness {

// Everything the log records: mmaemu version, git commit and dirty flag, command line, host,
// GPU, result-changing environment, inputs with sha256, seeds, shard, per-case outcomes,
// totals, verdict, durations, budget. "signed" is set by reports::publish_log.
nlohmann::json build_tier_log(const TierSpec& tier, const TierResult& result, const RunOptions& opt,
                              const std::vector<std::string>& command_line,
                              const std::string& version);

// The log's file stem: "<tier>", or "<tier>-shard<k>of<N>".
std::string log_stem(const TierSpec& tier, const Shard& shard);

} // namespace mmaemu::harness
