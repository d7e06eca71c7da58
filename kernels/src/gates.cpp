// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/gates.hpp"

#include <cstring>
#include <string>

#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/kernels/verdict_cache.hpp"

namespace mmaemu::kernels {

std::vector<std::uint32_t> reference_bits(const KernelSpec& spec, const GateProblem& p) {
  const Preset& preset = get_preset_quiet(spec.preset);
  model::GemmOperands op;
  op.a = p.a.data();
  op.lda = static_cast<std::size_t>(p.K);
  op.b = p.b.data();
  op.ldb = static_cast<std::size_t>(p.K);
  op.M = static_cast<std::size_t>(p.M);
  op.N = static_cast<std::size_t>(p.N);
  op.K = static_cast<std::size_t>(p.K);
  std::vector<std::uint32_t> out(op.M * op.N, 0u);
  if (!out.empty())
    model::chain_gemm(op, 0, op.K, preset, out.data(), op.N);
  return out;
}

namespace {

// The gate `name` of version `version`: the runner against the reference on every problem.
GateResult problem_gate(const char* name, int version, const KernelSpec& spec,
                        const std::vector<GateProblem>& problems, const ProblemRunner& run) {
  GateResult r{name, version, true, false, ""};
  std::size_t outputs = 0;
  for (const GateProblem& p : problems) {
    const auto want = reference_bits(spec, p);
    std::vector<std::uint32_t> got(want.size(), 0u);
    run(p, got.data());
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (compare_bits(want[i], got[i], Format::fp32) != Mismatch::none && bad++ == 0)
        first = i;
    }
    outputs += want.size();
    if (bad > 0) {
      const auto n = static_cast<std::size_t>(p.N);
      r.passed = false;
      r.detail = std::string(name) + ": " + p.what + ": " + std::to_string(bad) + " of " +
                 std::to_string(want.size()) + " outputs differ from the reference; first (" +
                 std::to_string(first / n) + ", " + std::to_string(first % n) + "): expected " +
                 decompose_bits(want[first], Format::fp32) + ", got " +
                 decompose_bits(got[first], Format::fp32);
      return r;
    }
  }
  r.detail = std::string(name) + ": " + std::to_string(outputs) + " outputs of " +
             std::to_string(problems.size()) + " cases bit-exact";
  return r;
}

} // namespace

GateResult smoke_gate(const KernelSpec& spec, const ProblemRunner& run) {
  return problem_gate(kSmokeGate, kSmokeGateVersion, spec, smoke_problems(), run);
}

GateResult window_gate(const KernelSpec& spec, const ProblemRunner& run) {
  return problem_gate(kWindowGate, kWindowGateVersion, spec, window_problems(), run);
}

GateResult design_a_gate(const KernelSpec& spec, const ProblemRunner& run) {
  return problem_gate(kDesignAGate, kDesignAGateVersion, spec, design_a_problems(), run);
}

std::vector<GateSpec> gates_of(const KernelSpec& spec) {
  std::vector<GateSpec> g{{kSmokeGate, kSmokeGateVersion, &smoke_gate}};
  if (spec.name == "v9")
    g.push_back({kWindowGate, kWindowGateVersion, &window_gate});
  if (spec.name == "tc3")
    g.push_back({kDesignAGate, kDesignAGateVersion, &design_a_gate});
  return g;
}

VerdictKeyFields smoke_verdict_fields(const LoadedModule& loaded, const driver::Device& device) {
  VerdictKeyFields f;
  f.gpu_uuid = device.uuid;
  f.cc = device.cc;
  f.driver_version = device.driver_version;
  f.image_sha256 = loaded.image_sha256;
  f.gate = kSmokeGate;
  f.gate_version = kSmokeGateVersion;
  return f;
}

VerdictKeyFields gate_verdict_fields(const GateSpec& gate, const LoadedModule& loaded,
                                     const driver::Device& device) {
  VerdictKeyFields f = smoke_verdict_fields(loaded, device);
  f.gate = gate.name;
  f.gate_version = gate.version;
  return f;
}

std::vector<GateResult> run_gates(const KernelSpec& spec, const LoadedModule& loaded,
                                  const driver::Device& device, bool force) {
  std::vector<GateResult> results;
  const ProblemRunner runner = [&](const GateProblem& p, std::uint32_t* out) {
    std::vector<float> c(static_cast<std::size_t>(p.M) * static_cast<std::size_t>(p.N));
    run_kernel(spec, loaded, device, p.a.data(), static_cast<std::size_t>(p.K), p.b.data(),
               static_cast<std::size_t>(p.K), p.M, p.N, p.K, c.data());
    std::memcpy(out, c.data(), c.size() * 4);
  };
  for (const GateSpec& gate : gates_of(spec)) {
    const std::string name = gate.name;
    const std::string key = verdict_key(gate_verdict_fields(gate, loaded, device));
    // A forced failure wins over a cached verdict, and is not cached itself.
    if (forced_failure(name)) {
      results.push_back(
          {name, gate.version, false, false,
           name + ": failed on purpose (MMAEMU_TEST_FORCE_FAIL=" + name + "; not cached)"});
      return results;
    }
    if (!force) {
      if (auto v = verdict_cache().lookup(key)) {
        results.push_back({name, gate.version, v->passed, true, v->detail});
        if (!v->passed)
          return results;
        continue;
      }
    }
    GateResult r;
    try {
      r = gate.run(spec, runner);
    } catch (const std::exception& e) {
      if (name == kSmokeGate) {
        results.push_back(
            {name, gate.version, false, false, name + ": raised (not cached): " + e.what()});
        return results;
      }
      // The gated kernels' own gates report an error inside them as a failed verdict, cached
      // like any other (seed 000; `mmaemu selftest --force` runs them again).
      r = {name, gate.version, false, false, name + ".error: " + e.what()};
    }
    verdict_cache().store(key, {r.passed, r.detail});
    results.push_back(r);
    if (!r.passed)
      return results;
  }
  return results;
}

} // namespace mmaemu::kernels
