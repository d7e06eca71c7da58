// SPDX-License-Identifier: BSD-2-Clause
// The SM clock of `mmaemu bench kernels`: nvidia-smi found and probed for a query it answers for
// the device (its UUID first, then the ordinal; the query under its old and new field names),
// sampled in a background thread during the windows, each line parsed (parse_smi_sample).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "kernel_bench_internal.hpp"
#include "mmaemu/support/process.hpp"

namespace mmaemu::kernels {

namespace {

constexpr const char* kSmiQuery = "clocks.sm,power.draw,clocks_throttle_reasons.active";
constexpr const char* kSmiQueryNew = "clocks.sm,power.draw,clocks_event_reasons.active";
constexpr const char* kWslSmi = "/usr/lib/wsl/lib/nvidia-smi";

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty())
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from 32 hex digits (empty when not 32).
std::string smi_uuid(const std::string& hex) {
  if (hex.size() != 32)
    return {};
  return "GPU-" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

} // namespace

namespace detail {

std::optional<ClockSample> Sampler::sample() const {
  const auto r = support::run_process(argv, support::ProcessOptions::with_timeout(10));
  if (r.exit_code != 0 || r.timed_out)
    return std::nullopt;
  std::size_t start = 0;
  while (start < r.output.size()) {
    auto end = r.output.find('\n', start);
    if (end == std::string::npos)
      end = r.output.size();
    if (auto s = parse_smi_sample(r.output.substr(start, end - start)))
      return s;
    start = end + 1;
  }
  return std::nullopt;
}

Sampler probe_sampler(const BenchOptions& o, const driver::Device& dev, std::string& program,
                      std::string& note) {
  Sampler s;
  if (o.nvidia_smi == "none") {
    note = "clock sampling disabled (nvidia-smi none)";
    return s;
  }
  std::optional<std::filesystem::path> smi;
  if (!o.nvidia_smi.empty()) {
    smi = support::find_program(o.nvidia_smi);
  } else {
    smi = support::find_program("nvidia-smi");
    if (!smi)
      smi = support::find_program(kWslSmi);
  }
  if (!smi) {
    note = "nvidia-smi not found (" +
           (o.nvidia_smi.empty() ? "PATH, " + std::string(kWslSmi) : o.nvidia_smi) +
           "): SM clock unknown, MAC/clk/SM omitted";
    return s;
  }
  program = smi->string();
  std::vector<std::string> ids;
  if (const std::string u = smi_uuid(dev.uuid); !u.empty())
    ids.push_back(u);
  ids.push_back(std::to_string(dev.ordinal));
  for (const char* q : {kSmiQuery, kSmiQueryNew}) {
    for (const auto& id : ids) {
      s.argv = {program, std::string("--query-gpu=") + q, "--format=csv,noheader,nounits", "-i",
                id};
      if (s.sample())
        return s;
    }
  }
  s.argv.clear();
  note = "nvidia-smi (" + program + ") gave no usable sample for device " +
         std::to_string(dev.ordinal) + ": SM clock unknown, MAC/clk/SM omitted";
  return s;
}

SamplerThread::SamplerThread(const Sampler& s, double interval, Clock::time_point t0) {
  if (s.argv.empty())
    return;
  thread_ = std::thread([this, s, interval, t0] {
    const auto step = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::max(interval, 0.01)));
    auto next = Clock::now();
    for (;;) {
      const auto before = Clock::now();
      auto sample = s.sample();
      const auto after = Clock::now();
      if (sample) {
        sample->t_s = std::chrono::duration<double>(before - t0 + (after - before) / 2).count();
        std::lock_guard lock(mu_);
        samples_.push_back(*sample);
      }
      next += step;
      std::unique_lock lock(mu_);
      if (cv_.wait_until(lock, next, [this] { return stop_; }))
        return;
    }
  });
}

std::vector<ClockSample> SamplerThread::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  std::lock_guard lock(mu_);
  return samples_;
}

} // namespace detail

std::optional<ClockSample> parse_smi_sample(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const auto comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (fields.size() != 3)
    return std::nullopt;
  ClockSample s;
  s.sm_mhz = parse_number(fields[0]);
  s.power_w = parse_number(fields[1]);
  if (fields[2] != "[N/A]" && fields[2] != "N/A")
    s.throttle = fields[2];
  if (!s.sm_mhz && !s.power_w && s.throttle.empty())
    return std::nullopt;
  return s;
}

} // namespace mmaemu::kernels
