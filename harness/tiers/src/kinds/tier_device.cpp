// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "device" (T3, device independence): on a CUDA device, every kernel of this
// build is loaded and gated, and each available one must reproduce the CPU reference bit
// for bit on (1) the committed recordings it can express (kernel ABI v1: chains from +0 over
// finite codes; the others are UNSUPPORTED), (2) the adversarial and random problem sets and
// (3) one whole projection GEMM (by default the Evo 2 1B shape, M 2048, N 5760, K 1920), whose
// output's sha256 must equal the reference's. Without a device the tier is UNSUPPORTED (the
// runner checks needs.devices first); a kernel that is not available is never PASS.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/gate_problems.hpp"
#include "mmaemu/kernels/gates.hpp"
#include "mmaemu/kernels/module_loader.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/support/digest.hpp"
#include "tier_kinds.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<fs::path> recordings_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".h5")
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string sha256_of_bits(const std::vector<std::uint32_t>& v) {
  std::string bytes(v.size() * 4, '\0');
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (int k = 0; k < 4; ++k)
      bytes[4 * i + static_cast<std::size_t>(k)] = static_cast<char>(v[i] >> (8 * k));
  }
  return support::sha256_hex(bytes);
}

// One problem on the kernel against the reference: a case.
TierCase problem_case(const kernels::KernelSpec& spec, const kernels::LoadedModule& loaded,
                      const kernels::driver::Device& dev, const kernels::GateProblem& p) {
  TierCase c;
  c.id = "cuda:" + std::string(spec.name) + "/" + p.what + "/" + std::to_string(p.M) + "x" +
         std::to_string(p.N) + "x" + std::to_string(p.K);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const auto want = kernels::reference_bits(spec, p);
    std::vector<float> got(want.size());
    kernels::run_kernel(spec, loaded, dev, p.a.data(), static_cast<std::size_t>(p.K), p.b.data(),
                        static_cast<std::size_t>(p.K), p.M, p.N, p.K, got.data());
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      std::uint32_t g = 0;
      std::memcpy(&g, &got[i], 4);
      if (compare_bits(want[i], g, Format::fp32) != Mismatch::none && bad++ == 0)
        first = i;
    }
    c.outcome = bad == 0 ? Outcome::pass : Outcome::fail;
    if (bad > 0) {
      c.message = std::to_string(bad) + " of " + std::to_string(want.size()) +
                  " outputs differ; first at index " + std::to_string(first);
    }
  } catch (const std::exception& e) {
    c.outcome = Outcome::error;
    c.message = e.what();
  }
  c.seconds = seconds_since(t0);
  return c;
}

} // namespace

void run_device_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const int ordinal = static_cast<int>(t.run.value("device", 0));
  const int pm = static_cast<int>(t.run.value("projection_m", 2048));
  const int pn = static_cast<int>(t.run.value("projection_n", 5760));
  const int pk = static_cast<int>(t.run.value("projection_k", 1920));
  const int adv = static_cast<int>(t.run.value("adversarial_size", 256));
  std::FILE* out = opt.text ? opt.text : stdout;

  std::vector<kernels::KernelStatus> statuses;
  try {
    statuses = kernels::kernel_statuses(ordinal, {}, false);
  } catch (const std::exception& e) {
    r.verdict = Outcome::error;
    r.reason = e.what();
    return;
  }
  json kernels_json = json::array();
  std::vector<const kernels::KernelSpec*> available;
  // A shard (--shard k/N, one GPU of a fleet each) takes kernels k-1, k-1+N, ... of the build
  // with all their cases: gates, recordings, problems and the projection.
  std::size_t kernel_index = 0;
  for (const auto& s : statuses) {
    if (!opt.shard.selects(kernel_index++))
      continue;
    kernels_json.push_back({{"backend", s.backend},
                            {"available", s.available},
                            {"source", s.source},
                            {"image_sha256", s.image_sha256},
                            {"validated_here", s.validated_here},
                            {"device_name", s.device_name},
                            {"cc", s.cc},
                            {"skip", s.skip},
                            {"failure", s.failure}});
    TierCase c;
    c.id = s.backend + "/gates";
    if (s.available) {
      c.outcome = Outcome::pass;
      c.message = s.source + ": " + (s.gates.empty() ? "" : s.gates.front().detail);
      available.push_back(kernels::find_kernel_spec(s.kernel));
    } else if (!s.skip.empty() || s.device < 0) {
      c.outcome = Outcome::unsupported;
      c.message = !s.skip.empty() ? s.skip : s.failure;
    } else {
      // v1, v4, h1 and h4 are IEEE-exact by construction: a failed load or gate is a bug.
      c.outcome = Outcome::fail;
      c.message = s.failure;
    }
    std::fprintf(out, "%-12s %s\n", outcome_name(c.outcome), (c.id + ": " + c.message).c_str());
    r.add(c);
  }
  r.details = {{"device", ordinal},
               {"kernels", kernels_json},
               {"projection", {{"M", pm}, {"N", pn}, {"K", pk}}}};
  // A simulated device (the tests' fake libcuda runs the kernels on the CPU) is not a GPU:
  // its results are recorded, but the tier cannot PASS on it.
  for (const auto& s : statuses) {
    if (s.device_name.rfind("mmaemu fake", 0) == 0) {
      r.check({"T3/real_device", false,
               "device " + std::to_string(ordinal) + " is '" + s.device_name +
                   "', a simulation through the host shim, not a GPU"});
      break;
    }
  }
  if (available.empty())
    return; // judge_tier: nothing ran beyond the gates

  const kernels::driver::Device& dev = kernels::driver::device(ordinal);
  // (1) The committed recordings, through the same replay engine as `mmaemu replay`.
  const auto files = recordings_under(opt.layout.recordings_dir);
  for (const kernels::KernelSpec* spec : available) {
    const std::string backend = "cuda:" + std::string(spec->name);
    ReplayOptions ro;
    ro.backend = backend;
    ro.hardware_only = true; // kernels against hardware bits: a computed file is no evidence
    const ReplayResult rr = replay_files(files, {}, {}, ro);
    for (const auto& u : rr.unreadable)
      r.add({backend + "/" + u.file, Outcome::error, 0, u.message, false});
    std::size_t passed = 0, unsupported = 0;
    for (const auto& s : rr.sets) {
      for (const auto& c : s.results) {
        if (c.outcome == Outcome::pass) {
          r.count(Outcome::pass);
          ++passed;
        } else if (c.outcome == Outcome::unsupported) {
          r.count(Outcome::unsupported);
          ++unsupported;
        } else {
          r.add({backend + "/" + c.id, c.outcome, 0, c.message, true});
        }
      }
    }
    std::fprintf(out,
                 "%s: recordings: %zu passed, %zu failed, %zu not run on this kernel (another "
                 "preset, or an accumulator input c != 0, which kernel ABI v1 cannot take)\n",
                 backend.c_str(), passed, rr.failed + rr.errors, unsupported);
  }
  // (2) Adversarial and random problems, larger than the smoke gate's, edge shapes included.
  for (const kernels::KernelSpec* spec : available) {
    const kernels::LoadedModule& loaded = kernels::load_module(*spec, dev);
    std::vector<kernels::GateProblem> ps = kernels::adversarial_problems(3u, adv, adv, 2 * adv);
    ps.push_back(kernels::mixed_adversarial_problem(4u, adv + 1, adv + 3, 2 * adv + 16));
    ps.push_back(kernels::random_problem(5u, 129, 65, 1000, "random"));
    ps.push_back(kernels::random_problem(6u, 1, 1, 17, "random"));
    for (const auto& p : ps)
      r.add(problem_case(*spec, loaded, dev, p));
  }
  // (3) The whole projection: the sha256 of the output equals the reference's.
  std::map<std::string, std::string> reference_sha; // by preset
  const kernels::GateProblem proj = kernels::random_problem(1920u, pm, pn, pk, "projection");
  for (const kernels::KernelSpec* spec : available) {
    TierCase c;
    c.id = "cuda:" + std::string(spec->name) + "/projection/" + std::to_string(pm) + "x" +
           std::to_string(pn) + "x" + std::to_string(pk);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      std::string& want = reference_sha[std::string(spec->preset)];
      if (want.empty()) {
        std::fprintf(out, "projection: CPU reference of preset %s (%d x %d x %d)...\n",
                     std::string(spec->preset).c_str(), pm, pn, pk);
        std::fflush(out);
        want = sha256_of_bits(kernels::reference_bits(*spec, proj));
      }
      const kernels::LoadedModule& loaded = kernels::load_module(*spec, dev);
      std::vector<float> got(static_cast<std::size_t>(pm) * static_cast<std::size_t>(pn));
      kernels::run_kernel(*spec, loaded, dev, proj.a.data(), static_cast<std::size_t>(pk),
                          proj.b.data(), static_cast<std::size_t>(pk), pm, pn, pk, got.data());
      std::vector<std::uint32_t> bits(got.size());
      std::memcpy(bits.data(), got.data(), bits.size() * 4);
      const std::string have = sha256_of_bits(bits);
      c.outcome = have == want ? Outcome::pass : Outcome::fail;
      c.message = "sha256 " + have + (have == want ? " = reference" : " != reference " + want);
    } catch (const std::exception& e) {
      c.outcome = Outcome::error;
      c.message = e.what();
    }
    c.seconds = seconds_since(t0);
    std::fprintf(out, "%-12s %s: %s\n", outcome_name(c.outcome), c.id.c_str(), c.message.c_str());
    r.add(c);
  }
}

} // namespace mmaemu::harness::detail
