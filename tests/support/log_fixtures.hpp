// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Small validation logs for the reports tests.

#include <string>

#include "mmaemu/reports/log_writer.hpp"

namespace mmaemu::testing {

inline nlohmann::json tiny_log(const std::string& tier, const std::string& verdict,
                               long long passed = 3, long long failed = 0) {
  nlohmann::json j;
  j["format"] = reports::kLogFormat;
  j["tier"] = tier;
  j["tier_file"] = {{"path", "tiers/" + tier + ".json"}, {"sha256", "ab"}};
  j["mmaemu"] = {{"version", "0.1.0"}};
  j["git"] = {{"commit", "0123456789abcdef"}, {"dirty", false}};
  j["environment"] = nlohmann::json::object();
  j["host"] = {{"hostname", "h"}, {"cpu_model", "cpu"}, {"cores", 2}, {"os", "Linux"}};
  j["shard"] = nullptr;
  j["verdict"] = verdict;
  j["reason"] = verdict == "PASS" ? "" : "because";
  j["cases"] = nlohmann::json::array();
  j["inputs"] = nlohmann::json::array();
  j["totals"] = {{"cases", passed + failed}, {"PASS", passed}, {"FAIL", failed}, {"ERROR", 0},
                 {"UNSUPPORTED", 0},         {"XFAIL", 0}};
  j["durations"] = {{"seconds", 1.5},
                    {"started_utc", "2026-01-02T03:04:05Z"},
                    {"finished_utc", "2026-01-02T03:04:07Z"}};
  return j;
}

} // namespace mmaemu::testing
