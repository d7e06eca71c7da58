// SPDX-License-Identifier: BSD-2-Clause
// `mmaemu bench kernels` (kernel_bench.hpp): the options checked, every kernel loaded through the
// ladder, the exactness gate, then warm-up and interleaved windows timed with
// kernel_bench_launch.cpp while kernel_bench_clock.cpp samples the clock, the figures and the
// verdict. kernel_bench_report.cpp writes the report.

#include "mmaemu/kernels/kernel_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "kernel_bench_internal.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/gate_problems.hpp"
#include "mmaemu/kernels/gates.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/module_loader.hpp"
#include "mmaemu/kernels/registry.hpp"

namespace mmaemu::kernels {

using detail::Clock;
using detail::DeviceMem;
using detail::fmt;
using detail::is_evo2_shape;
using detail::Launcher;
using detail::probe_sampler;
using detail::run_timed;
using detail::Sampler;
using detail::SamplerThread;
using detail::Timed;

namespace {

using driver::check;

constexpr int kGateRows = 64;
constexpr int kGateCols = 256;

std::optional<double> target_of(std::string_view kernel) {
  if (kernel == "v4")
    return 22.5;
  if (kernel == "h4")
    return 25.0;
  return std::nullopt;
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

} // namespace

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

} // namespace mmaemu::kernels
