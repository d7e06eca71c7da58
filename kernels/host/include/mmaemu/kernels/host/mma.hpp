// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The host shim's warp-level tensor-core instructions: mma.sync.aligned.m16n8k16 and m16n8k8
// (.row.col) with f16 or bf16 operands, f32 accumulators (and f16 accumulators for f16
// operands), computed through the 16-bit presets of the emulator (model::dot_codes), so that a
// kernel using them runs on the CPU as the modelled GPU would. Kernels do not call these
// directly: they call the wrappers of kernels/cuda/mmaemu_mma.cuh, which are inline PTX on the
// device and these functions under the shim. docs/backends.md ("mma.sync in the host shim").
//
// Each function is warp-collective (launch.hpp, warp_collective): all 32 lanes of a warp call
// it with their fragments in the PTX ISA layouts (below), and each gets its D fragment back.
// Registers are passed as arrays: a .f16x2 / .bf16x2 register holds two elements, the lower
// index in bits 0..15; a, b and c are read before d is written, so d may be c.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8 with floating point
// type"), groupID = lane >> 2, tig = lane % 4:
//   m16n8k16 A (4 regs, a0..a7): row = groupID for a0, a1, a4, a5, else groupID + 8;
//                                col = tig * 2 + (i & 1), + 8 for a4..a7
//   m16n8k16 B (2 regs, b0..b3): row (k) = tig * 2 + (i & 1), + 8 for b2, b3; col = groupID
//   m16n8k8  A (2 regs, a0..a3): row = groupID for a0, a1, else groupID + 8; col = tig * 2 +
//                                (i & 1)
//   m16n8k8  B (1 reg, b0, b1):  row (k) = tig * 2 + i; col = groupID
//   C / D (f32: 4 floats c0..c3; f16: 2 regs holding c0..c3): row = groupID for c0, c1, else
//                                groupID + 8; col = tig * 2 + (i & 1)
//
// What each output element is: d[m][n] = the preset's chain over k = 0..K-1 of
// a[m][k] * b[k][n] from c[m][n], in blocks of nfma in k order ([0, nfma), [nfma, 2 nfma),
// ...), each block's result the next block's c (docs/semantics.md, "mma.sync in the host
// shim": the block order inside one instruction is a modelling decision, unverified). The
// preset is the architecture's (mma_preset_for): sm_70 volta_fp16 (f16 only; real sm_70 has
// only m8n8k4, so this is a model experiment), sm_80/86/87 ampere_*, sm_89 ada_*, sm_90
// hopper_* (the legacy mma.sync path). NaN and Inf operands follow the chain's non-finite rule.

#include <cstdint>
#include <string>

namespace mmaemu {
struct Preset;
}

namespace mmaemu::kernels::host {

// The architecture an mma.sync of the calling thread emulates: its launch's
// LaunchOptions::mma_arch when not 0, else $MMAEMU_SHIM_MMA_ARCH (read at each call: "sm_90",
// "90", ...) when set, else kDefaultMmaArch (89). std::invalid_argument for a value that is
// not one of kMmaArchs.
int current_mma_arch();

// The shipped preset an architecture's mma.sync uses for operand format `fmt` ("fp16" or
// "bf16"): "volta_fp16", "ampere_bf16", "ada_fp16", "hopper_bf16", ... std::invalid_argument
// when the architecture has no such instruction model (bf16 on sm_70).
std::string mma_preset_for(int arch, const char* fmt);

// Tests only: every mma.sync with `fmt` operands ("fp16" or "bf16") of this process uses
// `preset` (which the caller keeps alive) instead of its architecture's, until called again
// with nullptr. This is how the gated kernels' gates are shown to fail under models where a
// property they rely on does not hold (a custom preset that no architecture has).
void set_mma_preset_override(const char* fmt, const ::mmaemu::Preset* preset);

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32   d, a, b, c
void mma_sync_m16n8k16_f32_f16(float* d, const unsigned int* a, const unsigned int* b,
                               const float* c);
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 d, a, b, c
void mma_sync_m16n8k16_f32_bf16(float* d, const unsigned int* a, const unsigned int* b,
                                const float* c);
// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16   d, a, b, c (d, c: 2 .f16x2 registers)
void mma_sync_m16n8k16_f16_f16(unsigned int* d, const unsigned int* a, const unsigned int* b,
                               const unsigned int* c);
// mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32    d, a (2 regs), b (1 reg), c
void mma_sync_m16n8k8_f32_f16(float* d, const unsigned int* a, const unsigned int* b,
                              const float* c);
// mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32  d, a (2 regs), b (1 reg), c
void mma_sync_m16n8k8_f32_bf16(float* d, const unsigned int* a, const unsigned int* b,
                               const float* c);
// mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16    d, a (2 regs), b (1 reg), c
void mma_sync_m16n8k8_f16_f16(unsigned int* d, const unsigned int* a, const unsigned int* b,
                              const unsigned int* c);

} // namespace mmaemu::kernels::host
