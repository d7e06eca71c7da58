// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Internal to `mmaemu bench kernels` (kernels/src/kernel_bench*.cpp): what its files share.
// kernel_bench.cpp runs the benchmark (options, loading, the exactness gate, warm-up, windows,
// figures, verdict); kernel_bench_launch.cpp times launches of a raw kernel between CUDA
// events; kernel_bench_clock.cpp samples the SM clock with nvidia-smi; kernel_bench_report.cpp
// writes the report as JSON and as a table.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/kernel_bench.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/module_loader.hpp"

namespace mmaemu::kernels::detail {

using Clock = std::chrono::steady_clock;

// One number through a printf format ("%.3f").
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The shape the targets apply to (kEvo2M x kEvo2N x kEvo2K).
bool is_evo2_shape(const BenchOptions& o) {
  return o.M == kEvo2M && o.N == kEvo2N && o.K == kEvo2K;
}

// Timed launches (kernel_bench_launch.cpp).

// Device memory freed on every path (errors of cuMemFree are ignored).
class DeviceMem {
public:
  explicit DeviceMem(std::size_t bytes);
  ~DeviceMem();
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  driver::CUdeviceptr get() const { return ptr_; }

private:
  driver::CUdeviceptr ptr_ = 0;
};

class Event {
public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record() const;
  void sync() const;
  // Seconds from `start` to this event (both recorded and complete).
  double since(const Event& start) const;

private:
  driver::CUevent ev_ = nullptr;
};

// What one launch of a kernel on the benchmark's buffers needs.
struct Launcher {
  const KernelSpec* spec = nullptr;
  const LoadedModule* loaded = nullptr;
  unsigned grid_y_max = 65535;
  driver::CUdeviceptr a = 0, b = 0, c = 0;
  std::size_t m = 0, n = 0, k = 0;

  // One product C = A x B^T: the raw kernel, in row chunks of at most grid_y_max blocks (one
  // launch for every shape the grid's y limit allows). Asynchronous.
  void operator()() const;
};

struct Timed {
  std::int64_t launches = 0;
  double seconds = 0;
};

// Launches `batch` at a time between a start event and batch events until the event time
// reaches `min_s` (at least one batch). The next batch is queued before the previous one is
// waited for, so the device never idles between batches inside the measured interval.
Timed run_timed(const Launcher& launch, double min_s, std::int64_t batch);

// Clock samples (kernel_bench_clock.cpp).

// nvidia-smi invocations that work for this device, probed once.
struct Sampler {
  std::vector<std::string> argv; // empty: no sampling

  // One sample, or nothing when nvidia-smi failed or printed no usable line.
  std::optional<ClockSample> sample() const;
};

// Finds nvidia-smi and a query it answers for the device (its UUID first, then the ordinal;
// the query under its old and new field names). `note` receives why there is none.
Sampler probe_sampler(const BenchOptions& o, const driver::Device& dev, std::string& program,
                      std::string& note);

// Samples every `interval` seconds in its own thread from construction to stop().
class SamplerThread {
public:
  SamplerThread(const Sampler& s, double interval, Clock::time_point t0);
  ~SamplerThread() { stop(); }
  SamplerThread(const SamplerThread&) = delete;
  SamplerThread& operator=(const SamplerThread&) = delete;

  // Stops and joins the thread (once); the samples taken.
  std::vector<ClockSample> stop();

private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<ClockSample> samples_;
  std::thread thread_;
};

} // namespace mmaemu::kernels::detail
