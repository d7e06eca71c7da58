// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// `mmaemu bench kernels` (seed 000, "Benchmarks"): the raw ABI v1 kernels timed with CUDA
// events on one device, after an exactness gate.
//
// Method:
//   * data: seeded finite E4M3 codes ("gauss40": code = int(N(0, 40)) & 0xFF, non-finite codes
//     redrawn, as `mmaemu bench gemm` draws them; "uniform": random_problem's generator), A
//     [M][K] and B [N][K] uploaded once;
//   * load: load_module's ladder, as users get the kernels. Only a fatbin counts for
//     performance acceptance: a kernel loaded through NVRTC is gated and reported but not
//     timed unless allow_nvrtc (its numbers are then marked "nvrtc");
//   * exactness gate before any timing: v1 and h1 against the CPU reference of their preset on
//     the first min(M, 64) rows x min(N, 256) columns; v4 against v1 and h4 against h1 on the
//     full output (against the CPU reference on that block when the IEEE kernel of the preset
//     is not benchmarked). Any mismatch stops the run (verdict FAIL, exit 1);
//   * timing: only launches of the raw kernel (grid (ceil(N/tile_n), ceil(M/tile_m)) in row
//     chunks of at most max_grid_y blocks, spec.threads, spec.dynamic_smem opted in above
//     48 KiB), between CUDA events on the default stream, the queue kept fed; a warm-up of at
//     least warmup_s per kernel, then `windows` interleaved windows in which each kernel runs
//     back to back for at least window_s. Value: the median TMAC/s over the windows
//     (M*N*K MACs a launch);
//   * clocks: nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active every
//     200 ms in a background thread during the windows (the device chosen by its UUID);
//     each sample belongs to the kernel whose window was running. MAC/clk/SM = TMAC/s * 1e12 /
//     (mean SM clock in Hz * SM count); without nvidia-smi the clock is unknown and MAC/clk/SM
//     is omitted;
//   * targets (the issue's, on the Evo 2 1B projection shape 2048 x 5760 x 1920 only):
//     v4 >= 22.5 and h4 >= 25 MAC/clk/SM.
// Outcomes and the verdict are the one vocabulary (mmaemu/outcome/outcome.hpp): each kernel's
// exactness gate is PASS, FAIL or UNSUPPORTED (not run: not loaded, or the run stopped
// first), and the verdict is outcome::verdict_of over them: FAIL on a mismatch, UNSUPPORTED
// when no gate ran (no device, nothing loaded), PASS otherwise (the reason says which kernels
// were not timed), ERROR for a driver error during the run.
// Exit codes of the report: 0 PASS, 1 FAIL or ERROR, 2 bad options, 4 UNSUPPORTED.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/outcome/outcome.hpp"

namespace mmaemu::kernels {

// The Evo 2 1B projection shape, the default and the only shape the targets apply to.
inline constexpr std::int64_t kEvo2M = 2048, kEvo2N = 5760, kEvo2K = 1920;

struct BenchOptions {
  std::vector<std::string> kernels; // empty: v1, v4, h1, h4
  std::int64_t M = kEvo2M, N = kEvo2N, K = kEvo2K;
  int device = 0;
  double warmup_s = 1.5; // per kernel, at least one launch
  double window_s = 1.0; // per kernel and window, at least one launch
  int windows = 5;
  std::uint32_t seed = 40;
  std::string data = "gauss40"; // or "uniform"
  bool allow_nvrtc = false;
  // nvidia-smi to sample with: empty looks up "nvidia-smi" in PATH, then
  // /usr/lib/wsl/lib/nvidia-smi; "none" samples nothing.
  std::string nvidia_smi;
  double sample_interval_s = 0.2;
  std::function<void(const std::string&)> progress; // optional: one line per step
};

// One nvidia-smi sample; a field nvidia-smi reports as "[N/A]" (or unparsable) is empty.
struct ClockSample {
  double t_s = 0; // seconds since the windows began
  std::optional<double> sm_mhz;
  std::optional<double> power_w;
  std::string throttle; // clocks_throttle_reasons.active as printed ("0x0000000000000004")
};

// One line of `--format=csv,noheader,nounits` output ("1980, 351.20, 0x0000000000000000");
// nullopt when it does not have three fields.
std::optional<ClockSample> parse_smi_sample(const std::string& line);

struct KernelBench {
  std::string kernel, preset;
  std::string load_error;   // non-empty: not loaded (nothing else is set)
  std::string source;       // "fatbin" or "nvrtc"
  std::string image_sha256; // of the loaded image
  std::string fatbin_reason;
  // The exactness gate: PASS, FAIL or UNSUPPORTED (not run: not loaded, or the run stopped
  // first).
  outcome::Outcome exactness = outcome::Outcome::unsupported;
  std::string exactness_detail; // what was compared with what, the first difference
  bool timed = false;
  std::string not_timed_reason;
  double launch_s = 0; // mean seconds a launch in the warm-up
  std::int64_t warmup_launches = 0;
  std::vector<double> window_tmacs; // TMAC/s of each window
  std::vector<std::int64_t> window_launches;
  std::vector<double> window_seconds; // event time of each window
  double median_tmacs = 0, min_tmacs = 0, max_tmacs = 0;
  std::vector<ClockSample> samples; // taken during this kernel's windows
  std::optional<double> mean_sm_mhz;
  std::optional<double> mac_per_clk_sm;
  std::vector<std::string> throttle_reasons; // distinct values seen
  // The target for this kernel (v4 22.5, h4 25 MAC/clk/SM), when there is one.
  std::optional<double> target_mac_per_clk_sm;
  std::optional<bool> target_met; // empty: no target, other shape, not timed or clock unknown
  std::string target_note;
};

struct BenchReport {
  // PASS (every gate that ran passed; `reason` names the kernels not timed, if any), FAIL (a
  // kernel is not bit-exact), ERROR (a driver call failed during the run), UNSUPPORTED (no
  // CUDA device, no kernel loaded).
  outcome::Outcome verdict = outcome::Outcome::pass;
  std::string reason; // why it is not PASS; for a PASS, the kernels that were not timed
  int exit_code = 0;
  BenchOptions options; // as run (the default kernel list filled in)
  std::string data_description;
  int device = 0;
  std::string device_name, device_uuid;
  int cc = 0, sm_count = 0, driver_version = 0, clock_khz = 0;
  std::string nvidia_smi; // the program used, or "" when none
  std::string clock_note; // why the clock is unknown, when it is
  std::vector<KernelBench> kernels;
};

// Runs the benchmark. Throws ValueError for bad options (unknown kernel, a non-positive or
// larger-than-int dimension, K not below a kernel's k_max, a device ordinal not visible,
// non-finite or negative times, windows < 1, an unknown data kind). Without a usable CUDA
// device returns verdict UNSUPPORTED (exit 4) and the reason of cuda_unavailable_reason().
// A driver error during the run is returned as verdict ERROR (exit 1), never thrown.
BenchReport run_kernel_bench(const BenchOptions& options);

// The report as JSON, schema "mmaemu-bench-kernels/1" (docs/backends.md, "Kernel benchmark").
std::string bench_report_json(const BenchReport& report);

// The report as a text table, one line per kernel, then the verdict.
std::string bench_report_table(const BenchReport& report);

} // namespace mmaemu::kernels
