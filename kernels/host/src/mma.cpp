// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/host/mma.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/kernels/host/launch.hpp"

namespace mmaemu::kernels::host {

namespace {

// The operations, as warp_collective tags.
enum class Op : std::uint64_t {
  m16n8k16_f32_f16 = 0x6d6d61000001u, // "mma" + number
  m16n8k16_f32_bf16,
  m16n8k16_f16_f16,
  m16n8k8_f32_f16,
  m16n8k8_f32_bf16,
  m16n8k8_f16_f16,
};

struct Shape {
  Op op;
  int K;         // 16 or 8
  Format fmt;    // fp16 or bf16 operands
  bool half_acc; // f16 C and D
};

// One lane's registers: a (up to 4), b (up to 2), c (4 floats as bits, or 2 .f16x2).
struct LaneIn {
  std::uint32_t a[4];
  std::uint32_t b[2];
  std::uint32_t c[4];
};
struct LaneOut {
  std::uint32_t d[4];
};

constexpr int kM = 16, kN = 8;

// Element i of a fragment: register i / 2, the lower half for even i.
std::uint32_t half_of(const std::uint32_t* regs, int i) {
  return (regs[i / 2] >> (16 * (i % 2))) & 0xFFFFu;
}
void set_half(std::uint32_t* regs, int i, std::uint32_t v) {
  const int shift = 16 * (i % 2);
  regs[i / 2] = (regs[i / 2] & ~(0xFFFFu << shift)) | ((v & 0xFFFFu) << shift);
}

// The PTX ISA fragment layouts (mma.hpp has them spelled out).
void a_pos(int K, int lane, int i, int& row, int& col) {
  const int g = lane >> 2, t = lane % 4;
  if (K == 16) {
    row = g + (((i >> 1) & 1) ? 8 : 0);
    col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  } else {
    row = g + (i >= 2 ? 8 : 0);
    col = t * 2 + (i & 1);
  }
}
void b_pos(int K, int lane, int i, int& k, int& n) {
  const int g = lane >> 2, t = lane % 4;
  k = K == 16 ? t * 2 + (i & 1) + (i >= 2 ? 8 : 0) : t * 2 + i;
  n = g;
}
void c_pos(int lane, int i, int& row, int& col) {
  const int g = lane >> 2, t = lane % 4;
  row = g + (i >= 2 ? 8 : 0);
  col = t * 2 + (i & 1);
}

// The whole warp's instruction: gathers A [16][K], B as [8][K] (columns), C [16][8] from the
// lanes' fragments, computes every d[m][n] as the preset's chain, scatters D.
void compute_warp(const Shape& s, const Preset& p, const LaneIn* ins, LaneOut* outs) {
  std::uint32_t A[kM][16] = {}, Bt[kN][16] = {}, C[kM][kN] = {};
  const int a_elems = s.K == 16 ? 8 : 4, b_elems = s.K == 16 ? 4 : 2;
  for (int lane = 0; lane < 32; ++lane) {
    const LaneIn& in = ins[lane];
    for (int i = 0; i < a_elems; ++i) {
      int r, c;
      a_pos(s.K, lane, i, r, c);
      A[r][c] = half_of(in.a, i);
    }
    for (int i = 0; i < b_elems; ++i) {
      int k, n;
      b_pos(s.K, lane, i, k, n);
      Bt[n][k] = half_of(in.b, i);
    }
    for (int i = 0; i < 4; ++i) {
      int r, c;
      c_pos(lane, i, r, c);
      C[r][c] = s.half_acc ? half_of(in.c, i) : in.c[i];
    }
  }
  const Format acc = s.half_acc ? Format::fp16 : Format::fp32;
  std::uint32_t D[kM][kN];
  for (int m = 0; m < kM; ++m) {
    for (int n = 0; n < kN; ++n) {
      D[m][n] = model::dot_codes(std::span<const std::uint32_t>(A[m], s.K),
                                 std::span<const std::uint32_t>(Bt[n], s.K), C[m][n], p,
                                 {s.fmt, s.fmt}, acc);
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    LaneOut& out = outs[lane];
    std::memset(&out, 0, sizeof out);
    for (int i = 0; i < 4; ++i) {
      int r, c;
      c_pos(lane, i, r, c);
      if (s.half_acc)
        set_half(out.d, i, D[r][c]);
      else
        out.d[i] = D[r][c];
    }
  }
}

int parse_arch(const char* text) {
  std::string v(text);
  if (v.rfind("sm_", 0) == 0)
    v = v.substr(3);
  else if (v.rfind("sm", 0) == 0)
    v = v.substr(2);
  int arch = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9' || arch > 1000)
      return -1;
    arch = arch * 10 + (ch - '0');
  }
  return v.empty() ? -1 : arch;
}

bool known_arch(int arch) {
  return std::find(std::begin(kMmaArchs), std::end(kMmaArchs), arch) != std::end(kMmaArchs);
}

std::atomic<const Preset*> g_override_fp16{nullptr};
std::atomic<const Preset*> g_override_bf16{nullptr};

void run(const Shape& s, std::uint32_t* d, const unsigned int* a, const unsigned int* b,
         const std::uint32_t* c) {
  const Preset* forced = (s.fmt == Format::bf16 ? g_override_bf16 : g_override_fp16).load();
  const Preset& p = forced ? *forced
                           : get_preset_quiet(mma_preset_for(
                                 current_mma_arch(), s.fmt == Format::bf16 ? "bf16" : "fp16"));
  LaneIn in{};
  const int a_regs = s.K == 16 ? 4 : 2, b_regs = s.K == 16 ? 2 : 1;
  for (int i = 0; i < a_regs; ++i)
    in.a[i] = a[i];
  for (int i = 0; i < b_regs; ++i)
    in.b[i] = b[i];
  for (int i = 0; i < (s.half_acc ? 2 : 4); ++i)
    in.c[i] = c[i];
  LaneOut out{};
  warp_collective(static_cast<std::uint64_t>(s.op), &in, sizeof in, &out, sizeof out,
                  [&](const std::byte* ins, std::byte* outs) {
                    compute_warp(s, p, reinterpret_cast<const LaneIn*>(ins),
                                 reinterpret_cast<LaneOut*>(outs));
                  });
  for (int i = 0; i < (s.half_acc ? 2 : 4); ++i)
    d[i] = out.d[i];
}

void run_f32(const Shape& s, float* d, const unsigned int* a, const unsigned int* b,
             const float* c) {
  std::uint32_t cb[4], db[4];
  std::memcpy(cb, c, sizeof cb); // the bits of c, before d (which may be c) is written
  run(s, db, a, b, cb);
  std::memcpy(d, db, sizeof db);
}

} // namespace

int current_mma_arch() {
  const int launch_arch = current_thread().mma_arch;
  if (launch_arch != 0)
    return launch_arch; // checked by launch()
  if (const char* env = std::getenv("MMAEMU_SHIM_MMA_ARCH"); env != nullptr && *env != '\0') {
    const int arch = parse_arch(env);
    if (!known_arch(arch)) {
      throw std::invalid_argument(std::string("MMAEMU_SHIM_MMA_ARCH = '") + env +
                                  "' is not an architecture the shim's mma.sync emulates (sm_70, "
                                  "sm_72, sm_80, sm_86, sm_87, sm_89, sm_90)");
    }
    return arch;
  }
  return kDefaultMmaArch;
}

std::string mma_preset_for(int arch, const char* fmt) {
  const std::string f(fmt);
  if (f != "fp16" && f != "bf16")
    throw std::invalid_argument("mma_preset_for: format '" + f + "' is not fp16 or bf16");
  if (!known_arch(arch)) {
    throw std::invalid_argument("mma_preset_for: sm_" + std::to_string(arch) +
                                " is not an architecture the shim's mma.sync emulates");
  }
  if (arch == 70 || arch == 72) {
    if (f != "fp16") {
      throw std::invalid_argument("mma.sync with bf16 operands needs sm_80 or later; the shim "
                                  "emulates sm_" +
                                  std::to_string(arch) + " (Volta: fp16 only)");
    }
    return "volta_fp16";
  }
  const char* family = arch == 89 ? "ada" : (arch == 90 ? "hopper" : "ampere");
  return std::string(family) + "_" + f;
}

void set_mma_preset_override(const char* fmt, const Preset* preset) {
  const std::string f(fmt);
  if (f == "fp16")
    g_override_fp16 = preset;
  else if (f == "bf16")
    g_override_bf16 = preset;
  else
    throw std::invalid_argument("set_mma_preset_override: format '" + f + "' is not fp16 or bf16");
}

void mma_sync_m16n8k16_f32_f16(float* d, const unsigned int* a, const unsigned int* b,
                               const float* c) {
  run_f32({Op::m16n8k16_f32_f16, 16, Format::fp16, false}, d, a, b, c);
}
void mma_sync_m16n8k16_f32_bf16(float* d, const unsigned int* a, const unsigned int* b,
                                const float* c) {
  run_f32({Op::m16n8k16_f32_bf16, 16, Format::bf16, false}, d, a, b, c);
}
void mma_sync_m16n8k16_f16_f16(unsigned int* d, const unsigned int* a, const unsigned int* b,
                               const unsigned int* c) {
  run({Op::m16n8k16_f16_f16, 16, Format::fp16, true}, d, a, b, c);
}
void mma_sync_m16n8k8_f32_f16(float* d, const unsigned int* a, const unsigned int* b,
                              const float* c) {
  run_f32({Op::m16n8k8_f32_f16, 8, Format::fp16, false}, d, a, b, c);
}
void mma_sync_m16n8k8_f32_bf16(float* d, const unsigned int* a, const unsigned int* b,
                               const float* c) {
  run_f32({Op::m16n8k8_f32_bf16, 8, Format::bf16, false}, d, a, b, c);
}
void mma_sync_m16n8k8_f16_f16(unsigned int* d, const unsigned int* a, const unsigned int* b,
                              const unsigned int* c) {
  run({Op::m16n8k8_f16_f16, 8, Format::fp16, true}, d, a, b, c);
}

} // namespace mmaemu::kernels::host
