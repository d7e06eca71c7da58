// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/gate_problems.hpp"

#include <array>
#include <functional>
#include <random>

namespace mmaemu::kernels {

namespace {

bool finite_code(std::uint8_t c) {
  return (c & 0x7F) != 0x7F;
}

std::vector<std::uint8_t> finite_codes() {
  std::vector<std::uint8_t> f;
  for (int c = 0; c < 256; ++c) {
    if (finite_code(static_cast<std::uint8_t>(c)))
      f.push_back(static_cast<std::uint8_t>(c));
  }
  return f;
}

using Pattern = std::function<std::uint8_t(int row, int k)>;

std::vector<std::uint8_t> fill(int rows, int K, const Pattern& f) {
  std::vector<std::uint8_t> x(static_cast<std::size_t>(rows) * static_cast<std::size_t>(K));
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < K; ++k)
      x[static_cast<std::size_t>(r) * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)] =
          f(r, k);
  }
  return x;
}

constexpr int kPatterns = 6;

// Pattern p for operand A (a_side) or B: the two sides of a pattern are built to meet.
Pattern pattern(int p, bool a_side, std::mt19937& rng, int K) {
  static const std::vector<std::uint8_t> finite = finite_codes();
  static constexpr std::array<std::uint8_t, 10> small{0x00, 0x80, 0x01, 0x81, 0x02,
                                                      0x07, 0x87, 0x08, 0x88, 0x0F};
  auto rnd = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  switch (p) {
  case 0: // every finite code, in order along A's rows
    if (a_side) {
      return
          [K](int r, int k) { return finite[static_cast<std::size_t>(r * K + k) % finite.size()]; };
    }
    return [rnd](int, int) { return finite[rnd(finite.size())]; };
  case 1: // subnormals and zeros of both signs
    if (a_side)
      return [rnd](int, int) { return small[rnd(small.size())]; };
    return
        [rnd](int, int) { return rnd(3) ? small[rnd(small.size())] : finite[rnd(finite.size())]; };
  case 2: // +-448, the largest magnitude
    if (a_side)
      return [rnd](int, int) { return static_cast<std::uint8_t>(rnd(2) ? 0x7E : 0xFE); };
    return [rnd](int, int) {
      return static_cast<std::uint8_t>(rnd(4) ? (rnd(2) ? 0x7E : 0xFE) : 0x38);
    };
  case 3: // (x, y) and (x, -y) cancel inside a block; a small term decides what is left
    if (a_side) {
      return [](int r, int k) {
        return static_cast<std::uint8_t>(k % 4 == 3 ? 0x08 + (r % 8) : 0x70 + (r + k / 2) % 7);
      };
    }
    return [rnd](int n, int k) {
      const auto y = static_cast<std::uint8_t>(0x68 + (n + k / 2) % 9);
      if (k % 4 == 3)
        return static_cast<std::uint8_t>(rnd(2) ? 0x01 + n % 7 : 0x81 + n % 7);
      return static_cast<std::uint8_t>(k % 2 ? y | 0x80 : y);
    };
  case 4: // one exponent per 16-block, a different one in each block
    return [rnd, a_side](int, int k) {
      const int e = a_side ? (k / 16) % 15 : 14 - (k / 16) % 15;
      return static_cast<std::uint8_t>((rnd(2) << 7) | (e << 3) | rnd(8));
    };
  default: // -0 everywhere
    if (a_side)
      return [](int, int) { return std::uint8_t{0x80}; };
    return [rnd](int, int) { return rnd(2) ? std::uint8_t{0x80} : finite[rnd(finite.size())]; };
  }
}

const char* const kPatternNames[kPatterns] = {
    "every finite code",          "subnormals and zeros",   "+-448",
    "cancellation inside blocks", "one exponent per block", "-0 everywhere"};

} // namespace

GateProblem random_problem(std::uint32_t seed, int M, int N, int K, std::string what) {
  std::mt19937 rng(seed);
  auto code = [&rng](int, int) {
    for (;;) {
      const auto c = static_cast<std::uint8_t>(rng() & 0xFF);
      if (finite_code(c))
        return c;
    }
  };
  GateProblem p{std::move(what), M, N, K, {}, {}};
  p.a = fill(M, K, code);
  p.b = fill(N, K, code);
  return p;
}

std::vector<GateProblem> adversarial_problems(std::uint32_t seed, int M, int N, int K) {
  std::mt19937 rng(seed);
  std::vector<GateProblem> ps;
  for (int p = 0; p < kPatterns; ++p) {
    GateProblem g{kPatternNames[p], M, N, K, {}, {}};
    g.a = fill(M, K, pattern(p, true, rng, K));
    g.b = fill(N, K, pattern(p, false, rng, K));
    ps.push_back(std::move(g));
  }
  return ps;
}

GateProblem mixed_adversarial_problem(std::uint32_t seed, int M, int N, int K) {
  std::mt19937 rng(seed);
  std::vector<Pattern> as, bs;
  for (int p = 0; p < kPatterns; ++p) {
    as.push_back(pattern(p, true, rng, K));
    bs.push_back(pattern(p, false, rng, K));
  }
  GateProblem g{"adversarial " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                    std::to_string(K),
                M,
                N,
                K,
                {},
                {}};
  g.a = fill(M, K, [&](int r, int k) { return as[static_cast<std::size_t>(r % kPatterns)](r, k); });
  g.b = fill(N, K, [&](int n, int k) {
    return bs[static_cast<std::size_t>((n / kPatterns) % kPatterns)](n, k);
  });
  return g;
}

std::vector<GateProblem> smoke_problems() {
  std::vector<GateProblem> ps;
  ps.push_back(random_problem(0x5EED0001u, 16, 8, 64, "random 16x8x64"));
  ps.push_back(mixed_adversarial_problem(0x5EED0002u, 64, 64, 256));
  return ps;
}

} // namespace mmaemu::kernels
