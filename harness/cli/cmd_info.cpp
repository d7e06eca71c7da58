// SPDX-License-Identifier: BSD-2-Clause
// mmaemu info [--json PATH]: version, presets, backends.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::cli {

namespace {

nlohmann::json info_json() {
  nlohmann::json j;
  j["version"] = MMAEMU_VERSION;
  nlohmann::json presets = nlohmann::json::array();
  for (const auto& name : list_presets()) {
    const Preset& p = get_preset_quiet(name);
    presets.push_back(
        {{"name", p.name},
         {"nfma", p.nfma},
         {"frac", p.frac},
         {"frac_out", p.frac_out},
         {"rounding", block_rounding_name(p.rounding)},
         {"min_exp", p.min_exp},
         {"late_c", p.late_c},
         {"slow_chunk", p.slow_chunk ? nlohmann::json(*p.slow_chunk) : nlohmann::json()},
         {"maturity", maturity_name(p.maturity)},
         {"evidence", p.evidence}});
  }
  j["presets"] = presets;
  j["backends"] = {
      {{"name", "reference"}, {"available", true}, {"source", "cpu"}},
      {{"name", "cuda"}, {"available", false}, {"reason", "no CUDA backend in this build"}}};
  return j;
}

int run_info(const std::string& json_path, int device) {
  if (!json_path.empty()) {
    try {
      support::check_output_path(json_path); // before anything is printed
    } catch (const support::FileError& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  nlohmann::json j = info_json();
  nlohmann::json profiles = nlohmann::json::array();
  for (const auto& name : list_profiles()) {
    const Profile& p = get_profile(name);
    profiles.push_back({{"name", p.name},
                        {"preset", p.preset},
                        {"gpu_name", p.gpu_name},
                        {"capability", p.capability},
                        {"sm_count", p.sm_count},
                        {"cublaslt_version", p.cublaslt_version},
                        {"caller", p.caller},
                        {"torch_version", p.torch_version},
                        {"workspace_bytes", p.workspace_bytes},
                        {"maturity", maturity_name(p.maturity)},
                        {"splitk_maturity", p.splitk_maturity},
                        {"splitk_table", p.splitk_table.id},
                        {"splitk_entries", p.splitk_table.entries.size()}});
  }
  j["profiles"] = profiles;
  if (device >= 0) {
    j["device"] = {{"index", device},
                   {"available", false},
                   {"reason", "no CUDA device is visible: this build has no CUDA backend"}};
  }
  std::printf("mmaemu %s\n", MMAEMU_VERSION);
  std::printf("presets:\n");
  for (const auto& p : j["presets"]) {
    std::printf("  %-14s nfma %-3d frac %-2d frac_out %-2d %-13s min_exp %-5d %s\n",
                p["name"].get<std::string>().c_str(), p["nfma"].get<int>(), p["frac"].get<int>(),
                p["frac_out"].get<int>(), p["rounding"].get<std::string>().c_str(),
                p["min_exp"].get<int>(), p["maturity"].get<std::string>().c_str());
  }
  std::printf("profiles:\n");
  for (const auto& p : j["profiles"]) {
    std::printf(
        "  %-28s %-14s %-26s cc %-4s %3d SMs  %s, split-K table %s (%zu entries)\n",
        p["name"].get<std::string>().c_str(), p["preset"].get<std::string>().c_str(),
        p["gpu_name"].get<std::string>().c_str(), p["capability"].get<std::string>().c_str(),
        p["sm_count"].get<int>(), p["maturity"].get<std::string>().c_str(),
        p["splitk_table"].get<std::string>().c_str(), p["splitk_entries"].get<std::size_t>());
  }
  std::printf("backends:\n  reference      available (CPU)\n  cuda           unavailable: no "
              "CUDA backend in this build\n");
  if (device >= 0)
    std::printf("device %d: unavailable (no CUDA device is visible)\n", device);
  if (!json_path.empty()) {
    try {
      support::write_file_atomic(json_path, j.dump(2) + "\n");
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  return kOk;
}

} // namespace

void add_info(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<std::string>();
  auto device = std::make_shared<int>(-1);
  CLI::App* cmd = app.add_subcommand("info", "Version, presets, profiles and backends");
  cmd->add_option("--json", *json, "Also write the information as JSON to this file");
  cmd->add_option("--device", *device, "CUDA device index to describe");
  cmd->callback([cmd, json, device, &exit_code] {
    if (cmd->get_option("--device")->count() > 0 && *device < 0) {
      error_line("--device: " + std::to_string(*device) + " is not a device index (0, 1, ...)");
      exit_code = kUsage;
      return;
    }
    exit_code = run_info(*json, *device);
  });
}

} // namespace mmaemu::cli
