// SPDX-License-Identifier: BSD-2-Clause
// The shim's mma.sync, each instruction on its own: 32 lanes load their fragments from whole
// matrices with the PTX ISA layouts (written here from the ISA's formulas, not shared with
// src/mma.cpp), run the kernels/cuda/mmaemu_mma.cuh wrapper, and store D; every element must
// equal the emulator's chain (model::dot_codes) of its row and column under the preset of the
// architecture the launch emulates. Also: how the architecture is chosen, hand-derived cases
// where Ada and Hopper differ, warps next to __syncthreads(), and the refusals.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/preset.hpp"

// The shim first, then the wrappers as a kernel source includes them.
#include "mmaemu/kernels/host/cuda_shim.hpp"

#include "mmaemu_mma.cuh"

namespace {

using mmaemu::Format;
using mmaemu::kernels::host::launch;
using mmaemu::kernels::host::LaunchOptions;
using mmaemu::kernels::host::ThreadOrder;

enum class Instr { k16_f32_f16, k16_f32_bf16, k16_f16_f16, k8_f32_f16, k8_f32_bf16, k8_f16_f16 };

struct InstrInfo {
  Instr instr;
  const char* name;
  int K;
  Format fmt;
  bool half_acc;
};

const InstrInfo kInstrs[] = {
    {Instr::k16_f32_f16, "m16n8k16_f32_f16", 16, Format::fp16, false},
    {Instr::k16_f32_bf16, "m16n8k16_f32_bf16", 16, Format::bf16, false},
    {Instr::k16_f16_f16, "m16n8k16_f16_f16", 16, Format::fp16, true},
    {Instr::k8_f32_f16, "m16n8k8_f32_f16", 8, Format::fp16, false},
    {Instr::k8_f32_bf16, "m16n8k8_f32_bf16", 8, Format::bf16, false},
    {Instr::k8_f16_f16, "m16n8k8_f16_f16", 8, Format::fp16, true},
};

// The preset each architecture's instruction must use (docs/semantics.md).
std::string expected_preset(int arch, Format fmt) {
  const std::string f = fmt == Format::bf16 ? "bf16" : "fp16";
  if (arch == 70)
    return "volta_" + f;
  if (arch == 89)
    return "ada_" + f;
  if (arch == 90)
    return "hopper_" + f;
  return "ampere_" + f;
}

// One warp's problem: A [16][K] and B [K][8] codes, C and D [16][8] (fp32 bits or fp16 codes).
struct Problem {
  std::vector<std::uint16_t> A, B;
  std::vector<std::uint32_t> C, D;
};

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type" and the same for
// m16n8k8: groupID = lane >> 2, threadID_in_group = lane % 4.
int a_row(int K, int lane, int i) {
  const int g = lane >> 2;
  if (K == 16)
    return (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  return i < 2 ? g : g + 8;
}
int a_col(int K, int lane, int i) {
  const int t = lane % 4;
  if (K == 16)
    return i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
  return t * 2 + (i & 1);
}
int b_row(int K, int lane, int i) {
  const int t = lane % 4;
  if (K == 16)
    return i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
  return t * 2 + i;
}
int c_row(int lane, int i) {
  return i < 2 ? lane >> 2 : (lane >> 2) + 8;
}
int c_col(int lane, int i) {
  return (lane % 4) * 2 + (i & 1);
}

// What lane `lane` of a warp does: pack its fragments (element 2j in the low half of register
// j), run the instruction, unpack D.
void warp_step(const InstrInfo& in, Problem& p, int lane) {
  const int K = in.K;
  unsigned int a[4] = {}, b[2] = {};
  for (int i = 0; i < (K == 16 ? 8 : 4); ++i)
    a[i / 2] |= static_cast<unsigned int>(p.A[a_row(K, lane, i) * K + a_col(K, lane, i)])
                << (16 * (i % 2));
  for (int i = 0; i < (K == 16 ? 4 : 2); ++i)
    b[i / 2] |= static_cast<unsigned int>(p.B[b_row(K, lane, i) * 8 + (lane >> 2)])
                << (16 * (i % 2));
  if (in.half_acc) {
    unsigned int c[2] = {}, d[2] = {};
    for (int i = 0; i < 4; ++i)
      c[i / 2] |= (p.C[c_row(lane, i) * 8 + c_col(lane, i)] & 0xFFFFu) << (16 * (i % 2));
    if (in.instr == Instr::k16_f16_f16)
      mmaemu_mma_m16n8k16_f16_f16(d, a, b, c);
    else
      mmaemu_mma_m16n8k8_f16_f16(d, a, b, c);
    for (int i = 0; i < 4; ++i)
      p.D[c_row(lane, i) * 8 + c_col(lane, i)] = (d[i / 2] >> (16 * (i % 2))) & 0xFFFFu;
    return;
  }
  float c[4], d[4];
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t bits = p.C[c_row(lane, i) * 8 + c_col(lane, i)];
    std::memcpy(&c[i], &bits, 4);
  }
  switch (in.instr) {
  case Instr::k16_f32_f16:
    mmaemu_mma_m16n8k16_f32_f16(d, a, b, c);
    break;
  case Instr::k16_f32_bf16:
    mmaemu_mma_m16n8k16_f32_bf16(d, a, b, c);
    break;
  case Instr::k8_f32_f16:
    mmaemu_mma_m16n8k8_f32_f16(d, a, b, c);
    break;
  default:
    mmaemu_mma_m16n8k8_f32_bf16(c, a, b, c); // in place: d is c
    for (int i = 0; i < 4; ++i)
      d[i] = c[i];
    break;
  }
  for (int i = 0; i < 4; ++i)
    std::memcpy(&p.D[c_row(lane, i) * 8 + c_col(lane, i)], &d[i], 4);
}

// Finite random codes: mostly exponents near 1 (cancellation, ties), some spread, some zeros
// and subnormals.
std::uint16_t random_code(std::mt19937_64& rng, Format f) {
  const int frac = f == Format::bf16 ? 7 : 10;
  const int bias = f == Format::bf16 ? 127 : 15;
  const std::uint32_t sign = (rng() & 1u) << 15;
  const std::uint32_t m = static_cast<std::uint32_t>(rng()) & ((1u << frac) - 1u);
  const int kind = static_cast<int>(rng() % 8);
  std::uint32_t e;
  if (kind == 0)
    e = 0; // zeros and subnormals
  else if (kind == 1)
    e = static_cast<std::uint32_t>(bias - 10 + static_cast<int>(rng() % 14));
  else
    e = static_cast<std::uint32_t>(bias - 2 + static_cast<int>(rng() % 4));
  return static_cast<std::uint16_t>(sign | (e << frac) | m);
}

Problem random_problem(const InstrInfo& in, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.A.resize(16 * in.K);
  p.B.resize(in.K * 8);
  p.C.resize(16 * 8);
  p.D.assign(16 * 8, 0xDEADBEEFu);
  for (auto& v : p.A)
    v = random_code(rng, in.fmt);
  for (auto& v : p.B)
    v = random_code(rng, in.fmt);
  for (auto& v : p.C) {
    if (in.half_acc)
      v = random_code(rng, Format::fp16);
    else
      v = (rng() % 4 == 0) ? 0u
                           : ((static_cast<std::uint32_t>(rng()) & 0x807FFFFFu) |
                              (static_cast<std::uint32_t>(124 + rng() % 6) << 23));
  }
  return p;
}

// Expects every D element to be the model's chain under `preset`.
void expect_model(const InstrInfo& in, const Problem& p, const mmaemu::Preset& preset) {
  const Format acc = in.half_acc ? Format::fp16 : Format::fp32;
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      std::vector<std::uint32_t> a(in.K), b(in.K);
      for (int k = 0; k < in.K; ++k) {
        a[k] = p.A[m * in.K + k];
        b[k] = p.B[k * 8 + n];
      }
      const std::uint32_t want =
          mmaemu::model::dot_codes(a, b, p.C[m * 8 + n], preset, {in.fmt, in.fmt}, acc);
      ASSERT_EQ(mmaemu::compare_bits(want, p.D[m * 8 + n], acc), mmaemu::Mismatch::none)
          << in.name << " under " << preset.name << ": d[" << m << "][" << n << "] want "
          << mmaemu::decompose_bits(want, acc) << " got "
          << mmaemu::decompose_bits(p.D[m * 8 + n], acc);
    }
  }
}

// Runs one problem per warp of a block of `warps` warps.
void run_problems(const InstrInfo& in, std::vector<Problem>& ps, int arch, ThreadOrder order) {
  LaunchOptions opt;
  opt.workers = 1;
  opt.order = order;
  opt.mma_arch = arch;
  launch(
      1, static_cast<unsigned>(32 * ps.size()), 0,
      [&] {
        const unsigned t = threadIdx.x;
        warp_step(in, ps[t / 32], static_cast<int>(t % 32));
      },
      opt);
}

struct ScopedEnv {
  explicit ScopedEnv(const char* value) {
    if (const char* old = std::getenv("MMAEMU_SHIM_MMA_ARCH"))
      saved = old, had = true;
    if (value)
      setenv("MMAEMU_SHIM_MMA_ARCH", value, 1);
    else
      unsetenv("MMAEMU_SHIM_MMA_ARCH");
  }
  ~ScopedEnv() {
    if (had)
      setenv("MMAEMU_SHIM_MMA_ARCH", saved.c_str(), 1);
    else
      unsetenv("MMAEMU_SHIM_MMA_ARCH");
  }
  std::string saved;
  bool had = false;
};

} // namespace

TEST(ShimMma, EveryInstructionMatchesTheModelOfEachArchitecture) {
  for (const InstrInfo& in : kInstrs) {
    for (int arch : {70, 80, 86, 89, 90}) {
      if (arch == 70 && in.fmt == Format::bf16)
        continue; // no bf16 on Volta (refused below)
      const mmaemu::Preset& preset = mmaemu::get_preset_quiet(expected_preset(arch, in.fmt));
      for (ThreadOrder order : {ThreadOrder::ascending, ThreadOrder::descending}) {
        std::vector<Problem> ps;
        for (int w = 0; w < 3; ++w) // three warps, three independent problems
          ps.push_back(
              random_problem(in, 0x6D6D6100u + arch * 16 + w + static_cast<int>(in.instr) * 1000));
        run_problems(in, ps, arch, order);
        for (const Problem& p : ps)
          expect_model(in, p, preset);
      }
    }
  }
}

// Sixteen products of 0.75 (fp16 0x3A00) with 1.0 and c = 2^24: a block aligned to E = 24
// keeps 24 bits below (Ampere, Ada: units of 1, 0.75 truncates to 0; two blocks of 8) or 25
// (Hopper: units of 0.5, one block of 16: 16 * 0.5 = 8). So d = 2^24 on sm_80/sm_89, 2^24 + 8
// on sm_90. And the choice of architecture: launch option, then $MMAEMU_SHIM_MMA_ARCH, then 89.
TEST(ShimMma, TheLaunchEnvironmentOrDefaultArchitectureDecidesTheBits) {
  const InstrInfo& in = kInstrs[0]; // m16n8k16 f32 f16
  auto run_one = [&](int arch) {
    std::vector<Problem> ps(1);
    Problem& p = ps[0];
    p.A.assign(16 * 16, 0x3A00u);
    p.B.assign(16 * 8, 0x3C00u);
    p.C.assign(16 * 8, 0x4B800000u);
    p.D.assign(16 * 8, 0u);
    run_problems(in, ps, arch, ThreadOrder::ascending);
    for (std::uint32_t d : p.D)
      EXPECT_EQ(d, p.D[0]);
    return p.D[0];
  };
  {
    ScopedEnv env(nullptr);
    EXPECT_EQ(run_one(0), 0x4B800000u);  // default sm_89
    EXPECT_EQ(run_one(90), 0x4B800004u); // 2^24 + 8
    EXPECT_EQ(run_one(80), 0x4B800000u);
  }
  {
    ScopedEnv env("sm_90");
    EXPECT_EQ(run_one(0), 0x4B800004u);  // the environment
    EXPECT_EQ(run_one(89), 0x4B800000u); // the launch option wins
  }
  {
    ScopedEnv env("70"); // Volta: frac 23, units of 2, four blocks of 4
    EXPECT_EQ(run_one(0), 0x4B800000u);
  }
}

TEST(ShimMma, WarpsNextToABarrierKeepItsMeaning) {
  // Warp 0 runs an mma before the barrier, warp 1 after it; every thread writes shared memory
  // before the barrier and reads a neighbour warp's slot after it.
  const InstrInfo& in = kInstrs[1];
  for (ThreadOrder order : {ThreadOrder::ascending, ThreadOrder::descending}) {
    std::vector<Problem> ps{random_problem(in, 1), random_problem(in, 2)};
    std::vector<unsigned> seen(64, 0);
    LaunchOptions opt;
    opt.workers = 1;
    opt.order = order;
    launch(
        1, 64, 0,
        [&] {
          __shared__ unsigned slots[64];
          const unsigned t = threadIdx.x;
          if (t < 32)
            warp_step(in, ps[0], static_cast<int>(t));
          slots[t] = 1000 + t;
          __syncthreads();
          seen[t] = slots[(t + 32) % 64];
          if (t >= 32)
            warp_step(in, ps[1], static_cast<int>(t - 32));
        },
        opt);
    for (unsigned t = 0; t < 64; ++t)
      EXPECT_EQ(seen[t], 1000 + (t + 32) % 64) << t;
    const mmaemu::Preset& preset = mmaemu::get_preset_quiet("ada_bf16");
    expect_model(in, ps[0], preset);
    expect_model(in, ps[1], preset);
  }
}

TEST(ShimMma, PresetForEachArchitecture) {
  using mmaemu::kernels::host::mma_preset_for;
  EXPECT_EQ(mma_preset_for(70, "fp16"), "volta_fp16");
  EXPECT_EQ(mma_preset_for(72, "fp16"), "volta_fp16");
  for (int a : {80, 86, 87})
    EXPECT_EQ(mma_preset_for(a, "bf16"), "ampere_bf16");
  EXPECT_EQ(mma_preset_for(89, "fp16"), "ada_fp16");
  EXPECT_EQ(mma_preset_for(90, "bf16"), "hopper_bf16");
  EXPECT_THROW(mma_preset_for(70, "bf16"), std::invalid_argument);
  EXPECT_THROW(mma_preset_for(75, "fp16"), std::invalid_argument);
  EXPECT_THROW(mma_preset_for(100, "fp16"), std::invalid_argument);
  EXPECT_THROW(mma_preset_for(89, "tf32"), std::invalid_argument);
}

TEST(ShimMma, RefusalsEndTheLaunchWithAMessage) {
  auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  const InstrInfo& bf = kInstrs[1];
  std::vector<Problem> ps{random_problem(bf, 3)};
  // bf16 on sm_70.
  EXPECT_NE(message([&] { run_problems(bf, ps, 70, ThreadOrder::ascending); }).find("sm_80"),
            std::string::npos);
  // An architecture the shim does not emulate.
  LaunchOptions opt;
  opt.mma_arch = 75;
  EXPECT_NE(message([&] {
              launch(
                  1, 32, 0, [] {}, opt);
            }).find("mma_arch = 75"),
            std::string::npos);
  {
    ScopedEnv env("sm_120");
    EXPECT_NE(message([&] {
                run_problems(bf, ps, 0, ThreadOrder::ascending);
              }).find("MMAEMU_SHIM_MMA_ARCH"),
              std::string::npos);
  }
  // A block of 16 threads has no full warp.
  EXPECT_NE(message([&] {
              launch(1, 16, 0, [&] { warp_step(bf, ps[0], static_cast<int>(threadIdx.x)); });
            }).find("needs all 32 lanes"),
            std::string::npos);
  // Half a warp returns while the other half waits: a divergent warp.
  EXPECT_NE(message([&] {
              launch(1, 32, 0, [&] {
                if (threadIdx.x < 16)
                  warp_step(bf, ps[0], static_cast<int>(threadIdx.x));
              });
            }).find("diverged"),
            std::string::npos);
  // Half a warp at __syncthreads(), half at the mma.
  EXPECT_NE(message([&] {
              launch(1, 32, 0, [&] {
                if (threadIdx.x < 16)
                  __syncthreads();
                warp_step(bf, ps[0], static_cast<int>(threadIdx.x));
              });
            }).find("at __syncthreads()"),
            std::string::npos);
  // Lanes that meet at different instructions.
  const InstrInfo& k8 = kInstrs[4];
  std::vector<Problem> p8{random_problem(k8, 4)};
  EXPECT_NE(message([&] {
              launch(1, 32, 0, [&] {
                const int l = static_cast<int>(threadIdx.x);
                if (l < 16)
                  warp_step(bf, ps[0], l);
                else
                  warp_step(k8, p8[0], l);
              });
            }).find("reached operation"),
            std::string::npos);
  // Outside a launch.
  unsigned a[4] = {}, b[2] = {};
  float c[4] = {}, d[4];
  EXPECT_THROW(mmaemu_mma_m16n8k16_f32_bf16(d, a, b, c), std::logic_error);
}
