// SPDX-License-Identifier: BSD-2-Clause
// mmaemu info [--device cuda:N] [--json PATH]: version, presets, profiles, and the status of
// every backend (seed 000, "Selection": available, validated_here, source, reason) on device N
// (default 0). Kernel modules are loaded and gated only when a CUDA device is visible; without
// one the reason is stated once and every kernel is listed as unavailable for it, and nothing
// but the driver library is touched (nothing at all with MMAEMU_DISABLE_CUDA=1). The known
// kernels this build lacks are listed as absent, with the reason.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

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
  return j;
}

// The status of the reference and of every kernel on device `ordinal`: loads and gates the
// kernels (cached verdicts) only when a device is visible.
nlohmann::json backends_json(int ordinal) {
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"name", "reference"},
                 {"kernel", nullptr},
                 {"preset", nullptr},
                 {"available", true},
                 {"validated_here", true},
                 {"source", "cpu"},
                 {"reason", ""}});
  auto unavailable = [&](const std::string& why) {
    for (const auto& spec : kernels::kernel_specs()) {
      out.push_back({{"name", "cuda:" + std::string(spec.name)},
                     {"kernel", std::string(spec.name)},
                     {"preset", std::string(spec.preset)},
                     {"available", false},
                     {"validated_here", false},
                     {"source", ""},
                     {"reason", why}});
    }
  };
  const std::string why = kernels::cuda_unavailable_reason();
  if (!why.empty()) {
    unavailable(why);
    return out;
  }
  std::vector<kernels::KernelStatus> statuses;
  try {
    statuses = kernels::kernel_statuses(ordinal);
  } catch (const MmaemuError& e) {
    unavailable(std::string(e.class_name()) + ": " + e.what());
    return out;
  }
  for (const auto& s : statuses) {
    out.push_back({{"name", s.backend},
                   {"kernel", s.kernel},
                   {"preset", s.preset},
                   {"available", s.available},
                   {"validated_here", s.validated_here},
                   {"source", s.source},
                   {"reason", s.available       ? ""
                              : !s.skip.empty() ? s.skip
                                                : s.failure}});
  }
  return out;
}

// Device `ordinal` as the driver reports it, or why it is unavailable.
nlohmann::json device_json(int ordinal) {
  std::string why = kernels::cuda_unavailable_reason();
  if (why.empty()) {
    const int count = kernels::driver::visible_device_count();
    if (ordinal >= count) {
      why = "device " + std::to_string(ordinal) + " does not exist (" + std::to_string(count) +
            " visible)";
    }
  }
  if (why.empty()) {
    try {
      const kernels::driver::Device& d = kernels::driver::device(ordinal);
      return {{"index", ordinal},       {"available", true},
              {"name", d.name},         {"cc", d.cc},
              {"sm_count", d.sm_count}, {"smem_optin", d.smem_optin},
              {"uuid", d.uuid},         {"driver_version", d.driver_version}};
    } catch (const MmaemuError& e) {
      why = std::string(e.class_name()) + ": " + e.what();
    }
  }
  return {{"index", ordinal}, {"available", false}, {"reason", why}};
}

int run_info(const JsonOption& json, int device) {
  try {
    json.check(); // before anything is printed
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
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
  if (device >= 0)
    j["device"] = device_json(device);
  const std::string cuda_why = kernels::cuda_unavailable_reason();
  j["cuda"] = {{"available", cuda_why.empty()}, {"reason", cuda_why}};
  j["backends"] = backends_json(device >= 0 ? device : 0);
  nlohmann::json absent = nlohmann::json::array();
  for (const auto name : kernels::absent_kernel_names()) {
    absent.push_back(
        {{"name", "cuda:" + std::string(name)}, {"reason", kernels::absent_kernel_reason(name)}});
  }
  j["absent_kernels"] = absent;
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
  if (device >= 0) {
    const auto& d = j["device"];
    if (d["available"].get<bool>()) {
      const int cc = d["cc"].get<int>();
      std::printf("device %d: %s, cc %d.%d, %d SMs\n", device,
                  support::printable(d["name"].get<std::string>(), 128).c_str(), cc / 10, cc % 10,
                  d["sm_count"].get<int>());
    } else {
      std::printf("device %d: unavailable (%s)\n", device,
                  support::printable(d["reason"].get<std::string>(), 400).c_str());
    }
  }
  std::printf("backends:\n");
  for (const auto& b : j["backends"]) {
    const std::string name = b["name"].get<std::string>();
    const std::string why = b["reason"].get<std::string>();
    if (name == "reference") {
      std::printf("  %-14s available (CPU)\n", name.c_str());
      // Why no CUDA kernel can run here, once (it is the same for every kernel).
      if (!cuda_why.empty()) {
        std::printf("  %-14s unavailable: %s\n", "cuda", support::printable(cuda_why, 400).c_str());
      }
    } else if (b["available"].get<bool>()) {
      std::printf("  %-14s available (%s, %s)\n", name.c_str(),
                  b["source"].get<std::string>().c_str(),
                  b["validated_here"].get<bool>() ? "validated here" : "not validated here");
    } else if (!cuda_why.empty() && why == cuda_why) {
      std::printf("  %-14s unavailable (no CUDA, above)\n", name.c_str());
    } else {
      std::printf("  %-14s unavailable: %s\n", name.c_str(), support::printable(why, 400).c_str());
    }
  }
  for (const auto& a : j["absent_kernels"]) {
    std::printf("  %-14s absent: %s\n", a["name"].get<std::string>().c_str(),
                a["reason"].get<std::string>().c_str());
  }
  try {
    json.write(j);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_info(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<JsonOption>();
  auto device = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Version, presets, profiles and backends");
  json->add(*cmd, "Also write the information");
  cmd->add_option("--device", *device, "CUDA device to describe: cuda, cuda:N or N");
  cmd->callback([json, device, &exit_code] {
    int ordinal = -1;
    if (!device->empty()) {
      try {
        ordinal = parse_cuda_device("--device", *device);
      } catch (const ValueError& e) {
        error_line(e.what());
        exit_code = kUsage;
        return;
      }
    }
    exit_code = run_info(*json, ordinal);
  });
}

} // namespace mmaemu::cli
