// SPDX-License-Identifier: BSD-2-Clause
// The report of `mmaemu bench kernels`: JSON (schema mmaemu-bench-kernels/1, docs/backends.md,
// "Kernel benchmark", with the figures a tier of kind "command" reads) and a text table.

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kernel_bench_internal.hpp"

#ifndef MMAEMU_KERNELS_VERSION
#define MMAEMU_KERNELS_VERSION "0.0.0"
#endif

namespace mmaemu::kernels {

using detail::fmt;
using detail::is_evo2_shape;

namespace {

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string cell_or_dash(const std::optional<double>& v, const char* f) {
  return v ? fmt(f, *v) : "-";
}

} // namespace

std::string bench_report_json(const BenchReport& r) {
  using nlohmann::json;
  const BenchOptions& o = r.options;
  json j;
  j["schema"] = "mmaemu-bench-kernels/1";
  j["mmaemu_version"] = MMAEMU_KERNELS_VERSION;
  j["verdict"] = outcome::outcome_name(r.verdict);
  j["reason"] = r.reason;
  j["exit_code"] = r.exit_code;
  j["options"] = {{"kernels", o.kernels},
                  {"shape", {{"M", o.M}, {"N", o.N}, {"K", o.K}}},
                  {"device", o.device},
                  {"warmup_s", o.warmup_s},
                  {"window_s", o.window_s},
                  {"windows", o.windows},
                  {"seed", o.seed},
                  {"data", o.data},
                  {"allow_nvrtc", o.allow_nvrtc}};
  j["data"] = r.data_description;
  j["timing"] = "CUDA events around back-to-back launches of the raw kernel (default stream)";
  j["macs_per_launch"] =
      static_cast<double>(o.M) * static_cast<double>(o.N) * static_cast<double>(o.K);
  if (r.verdict == outcome::Outcome::unsupported && r.device_name.empty()) {
    j["device"] = nullptr;
  } else {
    j["device"] = {{"ordinal", r.device},         {"name", r.device_name},
                   {"uuid", r.device_uuid},       {"cc", r.cc},
                   {"sm_count", r.sm_count},      {"driver_version", r.driver_version},
                   {"clock_khz_max", r.clock_khz}};
  }
  j["clock"] = {{"nvidia_smi", r.nvidia_smi.empty() ? json(nullptr) : json(r.nvidia_smi)},
                {"interval_s", o.sample_interval_s},
                {"note", r.clock_note}};
  j["targets"] = json::array(
      {{{"kernel", "v4"}, {"mac_per_clk_sm", 22.5}, {"shape", {kEvo2M, kEvo2N, kEvo2K}}},
       {{"kernel", "h4"}, {"mac_per_clk_sm", 25.0}, {"shape", {kEvo2M, kEvo2N, kEvo2K}}}});
  json ks = json::array();
  for (const auto& k : r.kernels) {
    json windows = json::array();
    for (std::size_t w = 0; w < k.window_tmacs.size(); ++w) {
      windows.push_back({{"tmacs", k.window_tmacs[w]},
                         {"launches", k.window_launches[w]},
                         {"seconds", k.window_seconds[w]}});
    }
    json samples = json::array();
    for (const auto& s : k.samples) {
      samples.push_back({{"t_s", s.t_s},
                         {"sm_mhz", opt_json(s.sm_mhz)},
                         {"power_w", opt_json(s.power_w)},
                         {"throttle", s.throttle}});
    }
    json kj = {{"kernel", k.kernel},
               {"backend", "cuda:" + k.kernel},
               {"preset", k.preset},
               {"loaded", k.load_error.empty()},
               {"load_error", k.load_error},
               {"source", k.source},
               {"image_sha256", k.image_sha256},
               {"fatbin_reason", k.fatbin_reason},
               {"exactness",
                {{"result", outcome::outcome_name(k.exactness)}, {"detail", k.exactness_detail}}},
               {"timed", k.timed},
               {"not_timed_reason", k.not_timed_reason},
               {"warmup_launches", k.warmup_launches},
               {"launch_s", k.launch_s},
               {"windows", windows},
               {"samples", samples},
               {"throttle_reasons", k.throttle_reasons},
               {"mean_sm_mhz", opt_json(k.mean_sm_mhz)},
               {"mac_per_clk_sm", opt_json(k.mac_per_clk_sm)}};
    if (k.timed) {
      kj["tmacs"] = {{"median", k.median_tmacs}, {"min", k.min_tmacs}, {"max", k.max_tmacs}};
    } else {
      kj["tmacs"] = nullptr;
    }
    if (k.target_mac_per_clk_sm) {
      kj["target"] = {{"mac_per_clk_sm", *k.target_mac_per_clk_sm},
                      {"met", k.target_met ? json(*k.target_met) : json(nullptr)},
                      {"counts_for_acceptance", k.timed && k.source == "fatbin" &&
                                                    is_evo2_shape(o) && k.target_met.has_value()},
                      {"note", k.target_note}};
    } else {
      kj["target"] = nullptr;
    }
    ks.push_back(std::move(kj));
  }
  j["kernels"] = std::move(ks);
  // The figures as a tier of kind "command" reads them (T6g): only what was measured.
  json benchmarks = json::array();
  for (const auto& k : r.kernels) {
    if (!k.timed)
      continue;
    benchmarks.push_back(
        {{"name", k.kernel + "_tmacs"}, {"value", k.median_tmacs}, {"unit", "TMAC/s"}});
    if (k.mac_per_clk_sm) {
      benchmarks.push_back({{"name", k.kernel + "_mac_per_clk_sm"},
                            {"value", *k.mac_per_clk_sm},
                            {"unit", "MAC/clk/SM"}});
    }
  }
  j["benchmarks"] = std::move(benchmarks);
  return j.dump(2) + "\n";
}

std::string bench_report_table(const BenchReport& r) {
  const BenchOptions& o = r.options;
  std::string t;
  if (!r.device_name.empty()) {
    t += "device " + std::to_string(r.device) + ": " + r.device_name + " (sm_" +
         std::to_string(r.cc) + ", " + std::to_string(r.sm_count) + " SMs, driver " +
         std::to_string(r.driver_version) + ")\n";
  }
  t += "shape " + std::to_string(o.M) + " x " + std::to_string(o.N) + " x " + std::to_string(o.K) +
       ", data " + o.data + " seed " + std::to_string(o.seed) + ", " + std::to_string(o.windows) +
       " windows of >= " + fmt("%g", o.window_s) + " s after >= " + fmt("%g", o.warmup_s) +
       " s warm-up\n";
  if (!r.clock_note.empty())
    t += "clock: " + r.clock_note + "\n";
  if (!r.kernels.empty()) {
    char line[256];
    std::snprintf(line, sizeof line, "%-6s %-7s %-11s %-28s %-8s %-11s %s\n", "kernel", "source",
                  "exact", "TMAC/s median (min-max)", "SM MHz", "MAC/clk/SM", "target");
    t += line;
    for (const auto& k : r.kernels) {
      std::string tm = "-";
      if (k.timed) {
        tm = fmt("%.3f", k.median_tmacs) + " (" + fmt("%.3f", k.min_tmacs) + "-" +
             fmt("%.3f", k.max_tmacs) + ")";
      } else if (!k.load_error.empty()) {
        tm = "not loaded";
      } else {
        tm = "not timed";
      }
      std::string target = "-";
      if (k.target_mac_per_clk_sm) {
        target = ">= " + fmt("%g", *k.target_mac_per_clk_sm) + " " +
                 (k.target_met ? (*k.target_met ? "met" : "NOT MET") : "n/a");
        if (k.target_met && k.source != "fatbin")
          target += " (nvrtc)";
      }
      std::snprintf(line, sizeof line, "%-6s %-7s %-11s %-28s %-8s %-11s %s\n", k.kernel.c_str(),
                    k.source.empty() ? "-" : k.source.c_str(), outcome::outcome_name(k.exactness),
                    tm.c_str(), cell_or_dash(k.mean_sm_mhz, "%.0f").c_str(),
                    cell_or_dash(k.mac_per_clk_sm, "%.2f").c_str(), target.c_str());
      t += line;
    }
  }
  t += std::string("verdict: ") + outcome::outcome_name(r.verdict) +
       (r.reason.empty() ? "" : ": " + r.reason) + "\n";
  return t;
}

} // namespace mmaemu::kernels
