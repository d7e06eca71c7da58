// SPDX-License-Identifier: BSD-2-Clause
// Every kernel of kernels/cuda/, compiled as C++ against the host shim, bit for bit against
// the reference emulator (model::chain_gemm_simple, model::dot) on random and adversarial
// problems. This tests the kernel sources without a GPU; it is not a GPU run.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/kernels/host/host_kernels.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"

namespace {

using mmaemu::kernels::KernelSpec;
namespace host = mmaemu::kernels::host;

constexpr std::uint8_t kNaN = 0x7F;
constexpr std::uint8_t kNegNaN = 0xFF;

bool finite_code(std::uint8_t c) {
  return c != kNaN && c != kNegNaN;
}

struct Problem {
  std::string what;
  int M = 0, N = 0, K = 0;
  std::vector<std::uint8_t> a, b; // [M][K], [N][K]
};

// Runs the kernel through the shim; returns C's bit patterns.
std::vector<std::uint32_t> run(const KernelSpec& spec, const Problem& p, unsigned workers = 0) {
  const auto entry = host::host_kernel(spec.name);
  EXPECT_NE(entry, nullptr) << spec.name;
  std::vector<float> c(static_cast<std::size_t>(p.M) * static_cast<std::size_t>(p.N));
  // A GPU's output buffer is not zeroed: poison it so that an unwritten output shows.
  for (auto& v : c) {
    const std::uint32_t poison = 0x7FBADBADu;
    std::memcpy(&v, &poison, 4);
  }
  host::HostLaunch shape{spec.tile_m, spec.tile_n, spec.threads,
                         static_cast<std::size_t>(spec.dynamic_smem)};
  host::run_host_kernel(entry, shape, p.a.data(), p.b.data(), c.data(), p.M, p.N, p.K, workers);
  std::vector<std::uint32_t> bits(c.size());
  std::memcpy(bits.data(), c.data(), bits.size() * 4);
  return bits;
}

// The reference: the chain of the kernel's preset over k = 0..K-1 from +0. Rows with a NaN
// code go through model::dot (the non-finite rule); the others through chain_gemm_simple.
std::vector<std::uint32_t> reference(const KernelSpec& spec, const Problem& p) {
  const mmaemu::Preset& preset = mmaemu::get_preset_quiet(spec.preset);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(p.M) * static_cast<std::size_t>(p.N));
  const auto K = static_cast<std::size_t>(p.K);
  bool any_nan = false;
  for (auto c : p.a)
    any_nan = any_nan || !finite_code(c);
  for (auto c : p.b)
    any_nan = any_nan || !finite_code(c);
  if (!any_nan) {
    mmaemu::model::GemmOperands op;
    op.a = p.a.data();
    op.lda = K;
    op.b = p.b.data();
    op.ldb = K;
    op.M = static_cast<std::size_t>(p.M);
    op.N = static_cast<std::size_t>(p.N);
    op.K = K;
    mmaemu::model::chain_gemm_simple(op, 0, K, preset, out.data(), op.N);
    return out;
  }
  for (int m = 0; m < p.M; ++m) {
    for (int n = 0; n < p.N; ++n) {
      out[static_cast<std::size_t>(m) * static_cast<std::size_t>(p.N) +
          static_cast<std::size_t>(n)] =
          mmaemu::model::dot(std::span(p.a.data() + static_cast<std::size_t>(m) * K, K),
                             std::span(p.b.data() + static_cast<std::size_t>(n) * K, K), 0u,
                             preset);
    }
  }
  return out;
}

void expect_bit_exact(const KernelSpec& spec, const Problem& p, unsigned workers = 0) {
  const auto got = run(spec, p, workers);
  const auto want = reference(spec, p);
  ASSERT_EQ(got.size(), want.size());
  int shown = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto why = mmaemu::compare_bits(want[i], got[i], mmaemu::Format::fp32);
    if (why == mmaemu::Mismatch::none)
      continue;
    ++bad;
    if (shown++ < 5) {
      ADD_FAILURE() << "cuda:" << spec.name << " " << p.what << " M " << p.M << " N " << p.N
                    << " K " << p.K << ": output (" << i / static_cast<std::size_t>(p.N) << ", "
                    << i % static_cast<std::size_t>(p.N) << ") " << mmaemu::mismatch_name(why)
                    << ": expected " << mmaemu::decompose_bits(want[i], mmaemu::Format::fp32)
                    << ", got " << mmaemu::decompose_bits(got[i], mmaemu::Format::fp32);
    }
  }
  EXPECT_EQ(bad, 0u) << "cuda:" << spec.name << " " << p.what << ": " << bad << " of " << got.size()
                     << " outputs differ";
}

std::uint8_t random_finite(std::mt19937& rng) {
  for (;;) {
    const auto c = static_cast<std::uint8_t>(rng() & 0xFF);
    if (finite_code(c))
      return c;
  }
}

Problem random_problem(std::mt19937& rng, int M, int N, int K, const std::string& what) {
  Problem p{what, M, N, K, {}, {}};
  p.a.resize(static_cast<std::size_t>(M) * static_cast<std::size_t>(K));
  p.b.resize(static_cast<std::size_t>(N) * static_cast<std::size_t>(K));
  for (auto& c : p.a)
    c = random_finite(rng);
  for (auto& c : p.b)
    c = random_finite(rng);
  return p;
}

// Fills X [rows][K] with f(row, k).
template <class F> std::vector<std::uint8_t> fill(int rows, int K, F f) {
  std::vector<std::uint8_t> x(static_cast<std::size_t>(rows) * static_cast<std::size_t>(K));
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < K; ++k)
      x[static_cast<std::size_t>(r) * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)] =
          f(r, k);
  return x;
}

// The adversarial problems of the smoke gate and the issue: every finite code, subnormals
// and zeros of both signs, +-448, cancellation inside blocks, one exponent per block, -0
// everywhere.
std::vector<Problem> adversarial(std::mt19937& rng, int M, int N, int K) {
  std::vector<Problem> ps;
  std::vector<std::uint8_t> finite;
  for (int c = 0; c < 256; ++c)
    if (finite_code(static_cast<std::uint8_t>(c)))
      finite.push_back(static_cast<std::uint8_t>(c));
  auto rnd = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };

  ps.push_back({"every finite code", M, N, K,
                fill(M, K,
                     [&](int r, int k) {
                       return finite[static_cast<std::size_t>(r * K + k) % finite.size()];
                     }),
                fill(N, K, [&](int, int) { return finite[rnd(finite.size())]; })});
  const std::uint8_t small[] = {0x00, 0x80, 0x01, 0x81, 0x02, 0x07, 0x87, 0x08, 0x88, 0x0F};
  ps.push_back({"subnormals and zeros", M, N, K,
                fill(M, K, [&](int, int) { return small[rnd(sizeof small)]; }),
                fill(N, K, [&](int, int) {
                  return rnd(3) ? small[rnd(sizeof small)] : finite[rnd(finite.size())];
                })});
  ps.push_back({"+-448", M, N, K, fill(M, K, [&](int, int) { return rnd(2) ? 0x7E : 0xFE; }),
                fill(N, K, [&](int, int) { return rnd(4) ? (rnd(2) ? 0x7E : 0xFE) : 0x38; })});
  // Pairs (x, y), (x, -y) inside a block cancel exactly; a small term then decides the sign
  // and is truncated against the large pair's exponent.
  ps.push_back({"cancellation inside blocks", M, N, K,
                fill(M, K,
                     [&](int r, int k) {
                       return static_cast<std::uint8_t>(k % 4 == 3 ? 0x08 + (r % 8)
                                                                   : 0x70 + (r + k / 2) % 7);
                     }),
                fill(N, K, [&](int n, int k) {
                  const std::uint8_t y = static_cast<std::uint8_t>(0x68 + (n + k / 2) % 9);
                  if (k % 4 == 3)
                    return static_cast<std::uint8_t>(rnd(2) ? 0x01 + n % 7 : 0x81 + n % 7);
                  return static_cast<std::uint8_t>(k % 2 ? y | 0x80 : y);
                })});
  ps.push_back({"one exponent per block", M, N, K,
                fill(M, K,
                     [&](int, int k) {
                       const int e = (k / 16) % 15;
                       return static_cast<std::uint8_t>((rnd(2) << 7) | (e << 3) | rnd(8));
                     }),
                fill(N, K, [&](int, int k) {
                  const int e = 14 - (k / 16) % 15;
                  return static_cast<std::uint8_t>((rnd(2) << 7) | (e << 3) | rnd(8));
                })});
  ps.push_back({"-0 everywhere", M, N, K, fill(M, K, [&](int, int) { return 0x80; }),
                fill(N, K, [&](int, int) { return rnd(2) ? 0x80 : finite[rnd(finite.size())]; })});
  return ps;
}

class HostKernel : public ::testing::TestWithParam<std::string> {
protected:
  const KernelSpec& spec() const { return *mmaemu::kernels::find_kernel_spec(GetParam()); }
};

TEST_P(HostKernel, SpecMatchesSourceSharedMemory) {
  EXPECT_EQ(host::host_kernel_dynamic_smem(spec().name), spec().dynamic_smem);
  EXPECT_NE(host::host_kernel_by_symbol(spec().symbol), nullptr);
}

TEST_P(HostKernel, RandomCodesBitExact) {
  const unsigned seed = 20261201u;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  expect_bit_exact(spec(), random_problem(rng, 16, 8, 64, "random 16x8x64"));
  expect_bit_exact(spec(), random_problem(rng, 64, 64, 256, "random 64x64x256"));
  expect_bit_exact(spec(), random_problem(rng, 129, 130, 97, "random 129x130x97"));
}

TEST_P(HostKernel, AdversarialCodesBitExact) {
  const unsigned seed = 448u;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const auto& p : adversarial(rng, 64, 64, 256))
    expect_bit_exact(spec(), p);
}

TEST_P(HostKernel, EdgeShapesBitExact) {
  const unsigned seed = 65u;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int M : {1, 63, 65, 129}) {
    for (int N : {1, 63, 65, 129}) {
      const int K = 1 + static_cast<int>(rng() % 70);
      expect_bit_exact(spec(), random_problem(rng, M, N, K, "edge shape"));
    }
  }
  // K around the block and tile sizes, and K = 0 (every output +0).
  for (int K : {0, 1, 15, 16, 17, 31, 32, 33, 48, 100, 257})
    expect_bit_exact(spec(), random_problem(rng, 65, 63, K, "K " + std::to_string(K)));
  for (const auto& p : adversarial(rng, 63, 65, 129))
    expect_bit_exact(spec(), p);
}

TEST_P(HostKernel, NaNCodesGiveTheCanonicalNaN) {
  std::mt19937 rng(7u);
  Problem p = random_problem(rng, 33, 17, 80, "NaN codes");
  p.a[5] = kNaN;              // row 0
  p.a[3 * 80 + 79] = kNegNaN; // row 3, last (padded) block
  p.b[2 * 80 + 40] = kNaN;    // column 2
  p.a[7 * 80 + 11] = kNaN;    // row 7: paired with a zero code below
  p.b[4 * 80 + 11] = 0x00;
  expect_bit_exact(spec(), p);
  const auto got = run(spec(), p);
  EXPECT_EQ(got[0], 0x7FFFFFFFu);
  EXPECT_EQ(got[7 * 17 + 4], 0x7FFFFFFFu);
}

TEST_P(HostKernel, WorkersDoNotChangeBits) {
  std::mt19937 rng(11u);
  const Problem p = random_problem(rng, 130, 129, 50, "workers");
  EXPECT_EQ(run(spec(), p, 1), run(spec(), p, 3));
}

INSTANTIATE_TEST_SUITE_P(Kernels, HostKernel, ::testing::Values("v1", "v4", "h1", "h4"),
                         [](const auto& info) { return info.param; });

} // namespace
