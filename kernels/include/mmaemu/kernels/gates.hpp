// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Gates (seed 000, "Gates and the verdict cache"): a loaded kernel serves calls only after
// its gates passed on that device. Every kernel has the smoke gate: the kernel against the
// CPU reference, bit for bit, on smoke_problems() (16x8x64 random, 64x64x256 adversarial).
// Verdicts are cached (verdict_cache.hpp); a gate that throws is failed and not cached, and
// so is a failure forced by MMAEMU_TEST_FORCE_FAIL=<gate name>.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/kernels/gate_problems.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/kernels/module_loader.hpp"
#include "mmaemu/kernels/verdict_cache.hpp"

namespace mmaemu::kernels {

inline constexpr const char* kSmokeGate = "smoke";
inline constexpr int kSmokeGateVersion = 1;
// The gated tensor-core kernels' own gates (docs/backends.md): each checks the tensor-core
// properties its design relies on, on problems chosen to fail when one does not hold.
inline constexpr const char* kWindowGate = "window"; // cuda:v9
inline constexpr int kWindowGateVersion = 1;
inline constexpr const char* kDesignAGate = "design_a"; // cuda:tc3
inline constexpr int kDesignAGateVersion = 1;

struct GateResult {
  std::string gate;
  int version = 0;
  bool passed = false;
  bool cached = false; // the verdict came from the verdict cache
  std::string detail;
};

// Runs a kernel on one problem: out [M][N] binary32 bits.
using ProblemRunner = std::function<void(const GateProblem&, std::uint32_t* out)>;

// The smoke gate's comparison (no cache): the runner against the reference of the kernel's
// preset on every smoke problem. Throws what the runner throws.
GateResult smoke_gate(const KernelSpec& spec, const ProblemRunner& run);

// The window gate (v9) and the design_a gate (tc3): the same comparison on window_problems()
// and design_a_problems().
GateResult window_gate(const KernelSpec& spec, const ProblemRunner& run);
GateResult design_a_gate(const KernelSpec& spec, const ProblemRunner& run);

// One gate of a kernel: its name, version (part of the verdict key) and comparison.
struct GateSpec {
  const char* name;
  int version;
  GateResult (*run)(const KernelSpec&, const ProblemRunner&);
};

// The gates of a kernel in the order they run: smoke, then window for v9, design_a for tc3.
std::vector<GateSpec> gates_of(const KernelSpec& spec);

// The reference bits of a problem: the preset's chain over K from +0 (finite codes).
std::vector<std::uint32_t> reference_bits(const KernelSpec& spec, const GateProblem& p);

// What the smoke gate's cached verdict is keyed on: the device (its UUID, compute capability and
// driver version), the module's image and the gate's name and version. A verdict holds for that
// combination only.
VerdictKeyFields smoke_verdict_fields(const LoadedModule& loaded, const driver::Device& device);

// The verdict key fields of any gate of gates_of(): smoke_verdict_fields with its name and
// version.
VerdictKeyFields gate_verdict_fields(const GateSpec& gate, const LoadedModule& loaded,
                                     const driver::Device& device);

// Runs the gates of a loaded kernel on its device (gates_of: smoke, then the kernel's own),
// each verdict from the cache unless `force`; stops at the first failure. Never throws: a smoke
// gate that throws is a failure and is not cached; a window or design_a gate that throws gives
// a failed "<gate>.error: ..." verdict, which is cached.
std::vector<GateResult> run_gates(const KernelSpec& spec, const LoadedModule& loaded,
                                  const driver::Device& device, bool force = false);

} // namespace mmaemu::kernels
