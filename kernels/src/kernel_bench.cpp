// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/kernel_bench.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/gate_problems.hpp"
#include "mmaemu/kernels/gates.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/module_loader.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/support/process.hpp"

#ifndef MMAEMU_KERNELS_VERSION
#define MMAEMU_KERNELS_VERSION "0.0.0"
#endif

namespace mmaemu::kernels {

namespace {

using Clock = std::chrono::steady_clock;
using driver::check;
using driver::CUdeviceptr;
using driver::CUevent;

constexpr int kGateRows = 64;
constexpr int kGateCols = 256;
constexpr const char* kSmiQuery = "clocks.sm,power.draw,clocks_throttle_reasons.active";
constexpr const char* kSmiQueryNew = "clocks.sm,power.draw,clocks_event_reasons.active";
constexpr const char* kWslSmi = "/usr/lib/wsl/lib/nvidia-smi";

std::optional<double> target_of(std::string_view kernel) {
  if (kernel == "v4")
    return 22.5;
  if (kernel == "h4")
    return 25.0;
  return std::nullopt;
}

bool is_evo2_shape(const BenchOptions& o) {
  return o.M == kEvo2M && o.N == kEvo2N && o.K == kEvo2K;
}

// Device memory freed on every path (errors of cuMemFree are ignored).
class DeviceMem {
public:
  explicit DeviceMem(std::size_t bytes) {
    check(driver::api().cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cuMemAlloc");
  }
  ~DeviceMem() {
    if (ptr_)
      driver::api().cuMemFree(ptr_);
  }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  CUdeviceptr get() const { return ptr_; }

private:
  CUdeviceptr ptr_ = 0;
};

class Event {
public:
  Event() { check(driver::api().cuEventCreate(&ev_, 0), "cuEventCreate"); }
  ~Event() {
    if (ev_)
      driver::api().cuEventDestroy(ev_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record() const { check(driver::api().cuEventRecord(ev_, nullptr), "cuEventRecord"); }
  void sync() const { check(driver::api().cuEventSynchronize(ev_), "cuEventSynchronize"); }
  // Seconds from `start` to this event (both recorded and complete).
  double since(const Event& start) const {
    float ms = 0;
    check(driver::api().cuEventElapsedTime(&ms, start.ev_, ev_), "cuEventElapsedTime");
    return static_cast<double>(ms) / 1e3;
  }

private:
  CUevent ev_ = nullptr;
};

// What one launch of a kernel on the benchmark's buffers needs.
struct Launcher {
  const KernelSpec* spec = nullptr;
  const LoadedModule* loaded = nullptr;
  unsigned grid_y_max = 65535;
  CUdeviceptr a = 0, b = 0, c = 0;
  std::size_t m = 0, n = 0, k = 0;

  // One product C = A x B^T: the raw kernel, in row chunks of at most grid_y_max blocks (one
  // launch for every shape the grid's y limit allows). Asynchronous.
  void operator()() const {
    const driver::Api& api = driver::api();
    const auto tile_m = static_cast<std::size_t>(spec->tile_m);
    const auto tile_n = static_cast<std::size_t>(spec->tile_n);
    const std::size_t rows_per_launch = static_cast<std::size_t>(grid_y_max) * tile_m;
    const auto grid_x = static_cast<unsigned>((n + tile_n - 1) / tile_n);
    for (std::size_t row0 = 0; row0 < m; row0 += rows_per_launch) {
      const std::size_t rows = std::min(rows_per_launch, m - row0);
      CUdeviceptr pa = a + row0 * k;
      CUdeviceptr pb = b;
      CUdeviceptr pc = c + row0 * n * sizeof(float);
      int im = static_cast<int>(rows);
      int in = static_cast<int>(n);
      int ik = static_cast<int>(k);
      void* params[] = {&pa, &pb, &pc, &im, &in, &ik};
      const auto grid_y = static_cast<unsigned>((rows + tile_m - 1) / tile_m);
      check(api.cuLaunchKernel(loaded->function, grid_x, grid_y, 1,
                               static_cast<unsigned>(spec->threads), 1, 1,
                               static_cast<unsigned>(spec->dynamic_smem), nullptr, params, nullptr),
            "cuLaunchKernel");
    }
  }
};

struct Timed {
  std::int64_t launches = 0;
  double seconds = 0;
};

// Launches `batch` at a time between a start event and batch events until the event time
// reaches `min_s` (at least one batch). The next batch is queued before the previous one is
// waited for, so the device never idles between batches inside the measured interval.
Timed run_timed(const Launcher& launch, double min_s, std::int64_t batch) {
  Event start, ev[2];
  start.record();
  Timed t;
  int cur = 0;
  bool have_prev = false;
  for (;;) {
    for (std::int64_t i = 0; i < batch; ++i)
      launch();
    t.launches += batch;
    ev[cur].record();
    if (!have_prev && min_s <= 0) {
      ev[cur].sync();
      t.seconds = ev[cur].since(start);
      return t;
    }
    if (have_prev) {
      ev[cur ^ 1].sync();
      if (ev[cur ^ 1].since(start) >= min_s) {
        ev[cur].sync();
        t.seconds = ev[cur].since(start);
        return t;
      }
    }
    have_prev = true;
    cur ^= 1;
  }
}

std::vector<std::uint8_t> gauss40_codes(std::mt19937_64& rng, std::size_t count) {
  std::normal_distribution<double> g(0.0, 40.0);
  std::vector<std::uint8_t> codes(count);
  for (auto& c : codes) {
    do
      c = static_cast<std::uint8_t>(static_cast<int>(g(rng)) & 0xFF);
    while ((c & 0x7F) == 0x7F);
  }
  return codes;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

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

// nvidia-smi invocations that work for this device, probed once.
struct Sampler {
  std::vector<std::string> argv; // empty: no sampling

  std::optional<ClockSample> sample() const {
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
};

// Finds nvidia-smi and a query it answers for the device (its UUID first, then the ordinal;
// the query under its old and new field names). `note` receives why there is none.
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

// Samples every `interval` seconds in its own thread from construction to stop().
class SamplerThread {
public:
  SamplerThread(const Sampler& s, double interval, Clock::time_point t0) {
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
  ~SamplerThread() { stop(); }
  SamplerThread(const SamplerThread&) = delete;
  SamplerThread& operator=(const SamplerThread&) = delete;

  std::vector<ClockSample> stop() {
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

private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<ClockSample> samples_;
  std::thread thread_;
};

void validate(const BenchOptions& o) {
  for (const auto& name : o.kernels) {
    if (!find_kernel_spec(name)) {
      throw ValueError("--kernels: '" + name + "' is not a kernel of this build (" +
                       kernel_names_text() + ")");
    }
  }
  for (std::size_t i = 0; i < o.kernels.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (o.kernels[i] == o.kernels[j])
        throw ValueError("--kernels: '" + o.kernels[i] + "' is named twice");
    }
  }
  const std::pair<const char*, std::int64_t> dims[] = {{"M", o.M}, {"N", o.N}, {"K", o.K}};
  for (const auto& [what, v] : dims) {
    if (v <= 0 || v > std::numeric_limits<int>::max()) {
      throw ValueError(std::string("--shape: ") + what + " = " + std::to_string(v) +
                       " must be in 1..2147483647");
    }
  }
  for (const auto& name : o.kernels) {
    const KernelSpec* s = find_kernel_spec(name);
    if (static_cast<std::uint64_t>(o.K) >= s->k_max) {
      throw ValueError("--shape: K = " + std::to_string(o.K) + " is not below cuda:" + name +
                       "'s limit k_max = " + std::to_string(s->k_max));
    }
  }
  const std::pair<const char*, double> times[] = {{"--warmup-s", o.warmup_s},
                                                  {"--window-s", o.window_s}};
  for (const auto& [what, v] : times) {
    if (!std::isfinite(v) || v < 0 || v > 3600)
      throw ValueError(std::string(what) + " = " + fmt("%g", v) + " must be in 0..3600 seconds");
  }
  if (o.windows < 1 || o.windows > 1000)
    throw ValueError("--windows = " + std::to_string(o.windows) + " must be in 1..1000");
  if (!std::isfinite(o.sample_interval_s) || o.sample_interval_s <= 0)
    throw ValueError("sample interval must be positive");
  if (o.data != "gauss40" && o.data != "uniform")
    throw ValueError("--data: '" + o.data + "' is not gauss40 or uniform");
  if (o.device < 0)
    throw ValueError("--device " + std::to_string(o.device) + ": must be 0 or more");
}

// The number of outputs where `got` differs from `want` (bit for bit, fp32) and a sentence
// naming the first: `got` is [rows][ld_got] (the first `cols` of each row compared).
std::size_t compare(const std::uint32_t* want, std::size_t ld_want, const std::uint32_t* got,
                    std::size_t ld_got, std::size_t rows, std::size_t cols, std::string& first) {
  std::size_t bad = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const std::uint32_t w = want[r * ld_want + c], g = got[r * ld_got + c];
      if (compare_bits(w, g, Format::fp32) != Mismatch::none && bad++ == 0) {
        first = "first (" + std::to_string(r) + ", " + std::to_string(c) + "): expected " +
                decompose_bits(w, Format::fp32) + ", got " + decompose_bits(g, Format::fp32);
      }
    }
  }
  return bad;
}

void say(const BenchOptions& o, const std::string& line) {
  if (o.progress)
    o.progress(line);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The verdict of a run that went through: the one rule over the kernels' exactness gates (a
// kernel that did not load ran no gate: UNSUPPORTED).
void finish_verdict(BenchReport& r) {
  outcome::Tally gates;
  std::size_t timed = 0;
  std::string why;
  for (const auto& k : r.kernels) {
    gates.add(k.exactness);
    timed += k.timed;
    if (!k.timed && why.empty())
      why = k.kernel + ": " + (k.load_error.empty() ? k.not_timed_reason : k.load_error);
  }
  r.verdict = outcome::verdict_of(gates);
  r.exit_code = outcome::exit_status_of(r.verdict);
  if (r.verdict == outcome::Outcome::unsupported) {
    r.reason = "no kernel could be loaded on device " + std::to_string(r.device) + "; " + why;
  } else if (r.verdict == outcome::Outcome::pass && timed < r.kernels.size()) {
    r.reason = std::to_string(r.kernels.size() - timed) + " of " +
               std::to_string(r.kernels.size()) + " kernels not timed; " + why;
  }
}

// The run once the device is known to be usable; driver errors propagate.
void run_on_device(BenchReport& r) {
  const BenchOptions& o = r.options;
  const driver::Device& dev = driver::device(o.device);
  r.device_name = dev.name;
  r.device_uuid = dev.uuid;
  r.cc = dev.cc;
  r.sm_count = dev.sm_count;
  r.driver_version = dev.driver_version;
  r.clock_khz = dev.clock_khz;
  say(o, "device " + std::to_string(dev.ordinal) + ": " + dev.name + " (sm_" +
             std::to_string(dev.cc) + ", " + std::to_string(dev.sm_count) + " SMs)");

  // Load every kernel (the ladder, as users get them).
  std::vector<const KernelSpec*> specs;
  std::vector<const LoadedModule*> mods;
  for (const auto& name : o.kernels) {
    const KernelSpec* spec = find_kernel_spec(name);
    KernelBench kb;
    kb.kernel = name;
    kb.preset = std::string(spec->preset);
    kb.target_mac_per_clk_sm = target_of(name);
    const LoadedModule* m = nullptr;
    if (dev.cc < spec->min_cc) {
      kb.load_error = "needs compute capability " + std::to_string(spec->min_cc) + " or later";
    } else if (!spec_runs_on(*spec, dev.cc)) {
      // tc3 (SASS for cc 8.0, 8.6, 8.9 only) elsewhere: NVRTC does not extend its architectures.
      kb.load_error = "has no SASS or PTX for sm_" + std::to_string(dev.cc) +
                      " (a gated kernel runs only where its design holds)";
    } else if (spec->dynamic_smem > dev.smem_optin &&
               spec->dynamic_smem > driver::kDefaultDynamicSmemLimit) {
      kb.load_error = "needs " + std::to_string(spec->dynamic_smem) +
                      " bytes of dynamic shared memory; the device allows " +
                      std::to_string(dev.smem_optin);
    } else {
      try {
        m = &load_module(*spec, dev);
        kb.source = m->source;
        kb.image_sha256 = m->image_sha256;
        kb.fatbin_reason = m->fatbin_reason;
      } catch (const driver::DriverError&) {
        throw;
      } catch (const MmaemuError& e) {
        kb.load_error = e.what();
      }
    }
    say(o, name + ": " + (m ? "loaded (" + kb.source + ")" : "not loaded: " + kb.load_error));
    r.kernels.push_back(std::move(kb));
    specs.push_back(spec);
    mods.push_back(m);
  }
  bool any_loaded = false;
  for (const auto* m : mods)
    any_loaded = any_loaded || m;
  if (!any_loaded)
    return;

  // The operands, uploaded once.
  const auto m = static_cast<std::size_t>(o.M), n = static_cast<std::size_t>(o.N),
             k = static_cast<std::size_t>(o.K);
  GateProblem p;
  if (o.data == "uniform") {
    p = random_problem(o.seed, static_cast<int>(o.M), static_cast<int>(o.N), static_cast<int>(o.K),
                       "bench");
  } else {
    std::mt19937_64 rng(o.seed);
    p.what = "bench";
    p.M = static_cast<int>(o.M);
    p.N = static_cast<int>(o.N);
    p.K = static_cast<int>(o.K);
    p.a = gauss40_codes(rng, m * k);
    p.b = gauss40_codes(rng, n * k);
  }
  const driver::Api& api = driver::api();
  driver::make_current(dev);
  DeviceMem da(m * k), db(n * k), dc(m * n * sizeof(float));
  check(api.cuMemcpyHtoD(da.get(), p.a.data(), m * k), "cuMemcpyHtoD(A)");
  check(api.cuMemcpyHtoD(db.get(), p.b.data(), n * k), "cuMemcpyHtoD(B)");

  std::vector<Launcher> launchers(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!mods[i])
      continue;
    if (specs[i]->dynamic_smem > driver::kDefaultDynamicSmemLimit) {
      check(api.cuFuncSetAttribute(mods[i]->function, driver::kFuncAttrMaxDynamicSharedSizeBytes,
                                   specs[i]->dynamic_smem),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    }
    launchers[i] = {specs[i], mods[i],  static_cast<unsigned>(std::max(dev.max_grid_y, 1)),
                    da.get(), db.get(), dc.get(),
                    m,        n,        k};
  }

  // The exactness gate: the IEEE kernels (v1, h1) first, each preset's other kernel after.
  const std::size_t gm = std::min<std::size_t>(m, kGateRows),
                    gn = std::min<std::size_t>(n, kGateCols);
  std::map<std::string, std::vector<std::uint32_t>> block_ref; // preset -> [gm][gn]
  std::map<std::string, std::vector<std::uint32_t>> ieee_out;  // preset -> [m][n]
  auto reference_block = [&](const KernelSpec& spec) -> const std::vector<std::uint32_t>& {
    auto it = block_ref.find(std::string(spec.preset));
    if (it != block_ref.end())
      return it->second;
    GateProblem sub{
        "bench block",
        static_cast<int>(gm),
        static_cast<int>(gn),
        p.K,
        std::vector<std::uint8_t>(p.a.begin(), p.a.begin() + static_cast<long>(gm * k)),
        std::vector<std::uint8_t>(p.b.begin(), p.b.begin() + static_cast<long>(gn * k))};
    return block_ref[std::string(spec.preset)] = reference_bits(spec, sub);
  };
  std::vector<std::size_t> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const bool ieee = specs[i]->name == "v1" || specs[i]->name == "h1";
      if (mods[i] && ieee == (pass == 0))
        order.push_back(i);
    }
  }
  std::vector<std::uint32_t> got(m * n);
  for (const std::size_t i : order) {
    KernelBench& kb = r.kernels[i];
    const KernelSpec& spec = *specs[i];
    check(api.cuMemsetD8(dc.get(), 0xFF, m * n * sizeof(float)), "cuMemsetD8(C)");
    launchers[i]();
    check(api.cuCtxSynchronize(), "cuCtxSynchronize");
    check(api.cuMemcpyDtoH(got.data(), dc.get(), m * n * sizeof(float)), "cuMemcpyDtoH(C)");
    const std::string preset(spec.preset);
    const bool ieee = spec.name == "v1" || spec.name == "h1";
    const std::string ieee_name = preset == "ada" ? "v1" : "h1";
    std::string first;
    std::size_t bad = 0, compared = 0;
    if (!ieee && ieee_out.count(preset)) {
      bad = compare(ieee_out[preset].data(), n, got.data(), n, m, n, first);
      compared = m * n;
      kb.exactness_detail =
          "full " + std::to_string(m) + "x" + std::to_string(n) + " output vs cuda:" + ieee_name;
    } else {
      bad = compare(reference_block(spec).data(), gn, got.data(), n, gm, gn, first);
      compared = gm * gn;
      kb.exactness_detail = "first " + std::to_string(gm) + "x" + std::to_string(gn) +
                            " block vs the CPU reference (" + preset + ")";
    }
    if (bad > 0) {
      kb.exactness = outcome::Outcome::fail;
      kb.exactness_detail += ": " + std::to_string(bad) + " of " + std::to_string(compared) +
                             " outputs differ; " + first;
      say(o, kb.kernel + ": exactness FAIL: " + kb.exactness_detail);
      r.reason = "cuda:" + kb.kernel + " is not bit-exact: " + kb.exactness_detail;
      return; // nothing is timed after a mismatch
    }
    kb.exactness = outcome::Outcome::pass;
    kb.exactness_detail += ": " + std::to_string(compared) + " outputs bit-exact";
    say(o, kb.kernel + ": exactness PASS (" + kb.exactness_detail + ")");
    if (ieee)
      ieee_out[preset] = got;
  }
  ieee_out.clear();
  got = {};

  // Which kernels are timed: a fatbin, or NVRTC with allow_nvrtc.
  std::vector<std::size_t> timed;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!mods[i])
      continue;
    if (mods[i]->source != "fatbin" && !o.allow_nvrtc) {
      r.kernels[i].not_timed_reason =
          "loaded through " + mods[i]->source +
          " (performance acceptance needs a fatbin: give --allow-nvrtc to time it anyway)" +
          (mods[i]->fatbin_reason.empty() ? "" : "; fatbin: " + mods[i]->fatbin_reason);
      say(o, r.kernels[i].kernel + ": not timed: " + r.kernels[i].not_timed_reason);
      continue;
    }
    timed.push_back(i);
  }
  if (timed.empty())
    return;

  // Warm-up, per kernel: one launch to size the batches, then at least warmup_s.
  const double batch_target = std::clamp(std::min(o.window_s, 0.05) / 4, 1e-3, 0.05);
  std::vector<std::int64_t> batch(specs.size(), 1);
  for (const std::size_t i : timed) {
    KernelBench& kb = r.kernels[i];
    const Timed first = run_timed(launchers[i], 0, 1);
    double est = first.seconds;
    kb.warmup_launches = 1;
    double spent = first.seconds;
    if (o.warmup_s > spent) {
      const auto b =
          static_cast<std::int64_t>(std::max(1.0, std::floor(batch_target / std::max(est, 1e-7))));
      const Timed w = run_timed(launchers[i], o.warmup_s - spent, b);
      kb.warmup_launches += w.launches;
      est = w.seconds / static_cast<double>(w.launches);
    }
    kb.launch_s = est;
    batch[i] =
        static_cast<std::int64_t>(std::max(1.0, std::floor(batch_target / std::max(est, 1e-7))));
    say(o, kb.kernel + ": warm-up " + std::to_string(kb.warmup_launches) + " launches, " +
               fmt("%.3f", est * 1e3) + " ms a launch");
  }

  // Interleaved windows, clocks sampled throughout.
  std::string program, note;
  const Sampler sampler = probe_sampler(o, dev, program, note);
  r.nvidia_smi = sampler.argv.empty() ? "" : program;
  r.clock_note = note;
  const auto t0 = Clock::now();
  struct Span {
    std::size_t kernel;
    double from, to;
  };
  std::vector<Span> spans;
  std::vector<ClockSample> samples;
  {
    SamplerThread thread(sampler, o.sample_interval_s, t0);
    const double macs =
        static_cast<double>(o.M) * static_cast<double>(o.N) * static_cast<double>(o.K);
    for (int w = 0; w < o.windows; ++w) {
      for (const std::size_t i : timed) {
        const double from = std::chrono::duration<double>(Clock::now() - t0).count();
        const Timed t = run_timed(launchers[i], o.window_s, batch[i]);
        const double to = std::chrono::duration<double>(Clock::now() - t0).count();
        spans.push_back({i, from, to});
        KernelBench& kb = r.kernels[i];
        kb.window_launches.push_back(t.launches);
        kb.window_seconds.push_back(t.seconds);
        kb.window_tmacs.push_back(
            t.seconds > 0 ? macs * static_cast<double>(t.launches) / t.seconds / 1e12 : 0.0);
      }
      say(o, "window " + std::to_string(w + 1) + " of " + std::to_string(o.windows) + " done");
    }
    samples = thread.stop();
  }

  // Figures.
  double all_sum = 0;
  std::size_t all_count = 0;
  for (const auto& s : samples) {
    if (s.sm_mhz) {
      all_sum += *s.sm_mhz;
      ++all_count;
    }
  }
  for (const std::size_t i : timed) {
    KernelBench& kb = r.kernels[i];
    kb.timed = true;
    kb.median_tmacs = median_of(kb.window_tmacs);
    kb.min_tmacs = *std::min_element(kb.window_tmacs.begin(), kb.window_tmacs.end());
    kb.max_tmacs = *std::max_element(kb.window_tmacs.begin(), kb.window_tmacs.end());
    std::set<std::string> reasons;
    double sum = 0;
    std::size_t count = 0;
    for (const auto& s : samples) {
      bool mine = false;
      for (const auto& sp : spans)
        mine = mine || (sp.kernel == i && s.t_s >= sp.from && s.t_s <= sp.to);
      if (!mine)
        continue;
      kb.samples.push_back(s);
      if (!s.throttle.empty())
        reasons.insert(s.throttle);
      if (s.sm_mhz) {
        sum += *s.sm_mhz;
        ++count;
      }
    }
    kb.throttle_reasons.assign(reasons.begin(), reasons.end());
    if (count > 0) {
      kb.mean_sm_mhz = sum / static_cast<double>(count);
    } else if (all_count > 0) {
      kb.mean_sm_mhz = all_sum / static_cast<double>(all_count);
      kb.target_note = "no clock sample fell in its own windows: the mean SM clock of all windows";
    }
    if (kb.mean_sm_mhz && *kb.mean_sm_mhz > 0 && dev.sm_count > 0) {
      kb.mac_per_clk_sm =
          kb.median_tmacs * 1e12 / (*kb.mean_sm_mhz * 1e6 * static_cast<double>(dev.sm_count));
    }
    auto add_note = [&kb](const std::string& s) {
      kb.target_note += (kb.target_note.empty() ? "" : "; ") + s;
    };
    if (kb.target_mac_per_clk_sm) {
      if (!is_evo2_shape(o)) {
        add_note("target applies to the Evo 2 shape 2048,5760,1920 only");
      } else if (!kb.mac_per_clk_sm) {
        add_note("SM clock unknown");
      } else {
        kb.target_met = *kb.mac_per_clk_sm >= *kb.target_mac_per_clk_sm;
        if (kb.source != "fatbin")
          add_note("loaded through " + kb.source + ": does not count for acceptance");
      }
    }
  }
}

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string cell_or_dash(const std::optional<double>& v, const char* f) {
  return v ? fmt(f, *v) : "-";
}

} // namespace

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

BenchReport run_kernel_bench(const BenchOptions& options) {
  BenchReport r;
  r.options = options;
  if (r.options.kernels.empty()) {
    for (const auto& s : kernel_specs())
      r.options.kernels.emplace_back(s.name);
    // v1, v4, v9, tc3, h1, h4: the order of the issues (seed 002's T6 names v1,v4,v9,tc3).
    const auto rank = [](const std::string& k) {
      const auto names = known_kernel_names();
      return std::find(names.begin(), names.end(), k) - names.begin();
    };
    std::sort(r.options.kernels.begin(), r.options.kernels.end(),
              [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  }
  validate(r.options);
  r.device = r.options.device;
  r.data_description =
      r.options.data == "uniform"
          ? "uniform: every finite E4M3 code equally likely (mt19937, seed " +
                std::to_string(r.options.seed) + "), A then B"
          : "gauss40: code = int(N(0, 40)) & 0xFF, non-finite codes redrawn (mt19937_64 + "
            "std::normal_distribution, seed " +
                std::to_string(r.options.seed) + "), A then B";
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) {
    r.verdict = outcome::Outcome::unsupported;
    r.reason = why;
    r.exit_code = outcome::exit_status_of(r.verdict);
    return r;
  }
  if (const int count = driver::visible_device_count(); r.options.device >= count) {
    throw ValueError("--device " + std::to_string(r.options.device) + ": only " +
                     std::to_string(count) + " CUDA device(s) visible");
  }
  try {
    run_on_device(r);
  } catch (const MmaemuError& e) {
    r.verdict = outcome::Outcome::error;
    r.reason = std::string(e.class_name()) + ": " + e.what();
    r.exit_code = outcome::exit_status_of(r.verdict);
    return r;
  } catch (const std::bad_alloc&) {
    r.verdict = outcome::Outcome::error;
    r.reason = "out of host memory for the operands or the outputs";
    r.exit_code = outcome::exit_status_of(r.verdict);
    return r;
  }
  finish_verdict(r); // a mismatch has already said which kernel, in r.reason
  return r;
}

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
