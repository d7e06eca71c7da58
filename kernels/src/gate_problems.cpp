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

namespace mmaemu::kernels {

namespace {

// The E4M3 code of sign * (8 + m) / 8 * 2^e for e in [-6, 8] (a normal), or of
// sign * m * 2^-9 for e = -9 (a subnormal, m in 1..7); the caller keeps to those ranges.
std::uint8_t e4m3(int sign, int e, int m) {
  const int s = sign < 0 ? 0x80 : 0;
  if (e == -9)
    return static_cast<std::uint8_t>(s | m);
  return static_cast<std::uint8_t>(s | ((e + 7) << 3) | m);
}

// The code of sign * sig * 2^e where sig * 8 is an integer in [8, 16), or 0 when that value is
// not an E4M3 value (below the subnormals' resolution or above the normal range).
std::uint8_t e4m3_value(int sign, int sig8, int e) {
  // 1.875 * 2^8 = 480 is above E4M3's largest finite value (448): its code, 0x7F, is the NaN.
  if (e == 8 && sig8 == 15)
    return 0;
  if (e >= -6 && e <= 8)
    return e4m3(sign, e, sig8 - 8);
  // A subnormal: sig8 * 2^(e - 3) = m * 2^-9 with m = sig8 * 2^(e + 6) an integer below 8.
  if (e < -6 && e >= -9) {
    const int shift = e + 6; // -1, -2, -3
    if ((sig8 & ((1 << -shift) - 1)) == 0 && (sig8 >> -shift) < 8)
      return e4m3(sign, -9, sig8 >> -shift);
  }
  return 0;
}

// Columns of B shared by both gates: one constant factor beta_n = sign * 2^eb_n per column on
// slots 0..14 of every block (the whole block when `fine_slot` is false), so that every output
// scales its row's pattern by a power of two (the patterns are scale invariant) over
// E in [-12, 16]; slot 15 takes gamma_n = 2^(eb_n - 6) where that is an E4M3 value (else 0).
struct Column {
  int sign, eb;
};
constexpr std::array<Column, 8> kColumns{
    {{1, 0}, {-1, 0}, {1, 8}, {1, -6}, {-1, 3}, {1, -3}, {1, 5}, {-1, -1}}};

std::vector<std::uint8_t> columns(int K, bool fine_slot) {
  return fill(static_cast<int>(kColumns.size()), K, [&](int n, int k) {
    const Column c = kColumns[static_cast<std::size_t>(n)];
    if (fine_slot && k % 16 == 15)
      return e4m3_value(1, 8, c.eb - 6);
    return e4m3(c.sign, c.eb, 0);
  });
}

} // namespace

std::vector<GateProblem> window_problems() {
  // Rows of A: for every exponent ea of the block's largest factor (-6 .. 8, the subnormal
  // codes included, whose exponent is -6 as well), the largest exponent on 1, 2, 8 or 15 slots
  // (the window's bottom and top: one term, or 15 of them plus the rest one binade lower) with
  // significands that vary, and on slot 15 a fine factor whose product with gamma sits at
  // 2^(E - 13) and 2^(E - 14) (where representable): a wrong E moves the truncation of that
  // term. Two blocks, the second a mirror image of the first with the accumulator carried in;
  // and blocks where every pair has a zero factor (no pair: E from c alone).
  constexpr int K = 48;
  std::vector<std::vector<std::uint8_t>> rows;
  for (int ea = -6; ea <= 8; ++ea) {
    for (int count : {1, 2, 8, 15}) {
      for (int variant = 0; variant < 4; ++variant) {
        std::vector<std::uint8_t> r(K, 0);
        for (int blk = 0; blk < 2; ++blk) {
          for (int slot = 0; slot < 15; ++slot) {
            const int pos = blk == 0 ? slot : 14 - slot;
            const int sign = ((slot + variant) % 3 == 0) ? -1 : 1;
            const int sig8 = 8 + (slot * 3 + variant) % 8;
            std::uint8_t code = 0;
            if (slot < count)
              code = ea == -6 && variant == 3 ? e4m3(sign, -9, 1 + slot % 7)
                                              : e4m3_value(sign, sig8, ea);
            else if (variant >= 2 && ea > -6)
              code = e4m3_value(sign, sig8, ea - 1);
            // Two largest terms cancel: the block's sum is then the fine term (and the rest).
            if (count == 2 && slot == 1)
              code = static_cast<std::uint8_t>(
                  r[static_cast<std::size_t>(16 * blk + (blk == 0 ? 0 : 14))] ^ 0x80u);
            r[static_cast<std::size_t>(16 * blk + pos)] = code;
          }
          // The fine factor: its product with gamma (2^(eb - 6)) is 1.5 * 2^(ea + eb - 13).
          r[static_cast<std::size_t>(16 * blk + 15)] = e4m3_value(variant % 2 ? -1 : 1, 12, ea - 7);
        }
        // Block 3: zero factors only on A's side for odd variants (no pair), a lone term else.
        if (variant % 2 == 0)
          r[static_cast<std::size_t>(32 + variant)] = e4m3(1, -6, 0);
        rows.push_back(r);
      }
    }
  }
  GateProblem p;
  p.what = "window: every alignment exponent -12..16, 1 to 15 largest terms, fine terms";
  p.M = static_cast<int>(rows.size());
  p.N = static_cast<int>(kColumns.size());
  p.K = K;
  for (const auto& r : rows)
    p.a.insert(p.a.end(), r.begin(), r.end());
  p.b = columns(K, true);
  return {p};
}

std::vector<GateProblem> design_a_problems() {
  // Rows of A, per block: the largest term 2^Ea, optionally cancelled by -2^Ea in another
  // slot, and a fine term s * f * 2^(Ea - 13) (f = 9/8 .. 15/8 where representable) in a third
  // slot, the three slots spread over both halves of the block (both m16n8k8s of the design).
  // The exact result keeps the fine term truncated at 2^(E - 13): one alignment bit more
  // (frac 25, Hopper) keeps 2^(E - 14), one less (frac 23, Volta) drops 2^(E - 13), rounding
  // instead of truncation rounds it up, and a block split inside one m16n8k8 (nfma 4) aligns
  // its second part to the first part's result. B's columns scale every row by a power of two
  // (E from -1 to 16 over the columns). The second block repeats the first with other slots
  // and the accumulator carried in.
  constexpr int K = 32;
  constexpr std::array<std::array<int, 3>, 6> kSlots{
      {{0, 1, 2}, {0, 9, 8}, {7, 8, 15}, {8, 15, 3}, {15, 0, 12}, {3, 12, 5}}};
  std::vector<std::vector<std::uint8_t>> rows;
  for (int ea = 5; ea <= 8; ++ea) {
    for (int f8 = 9; f8 <= 15; ++f8) {
      if (e4m3_value(1, f8, ea - 13) == 0)
        continue;
      for (int sign : {1, -1}) {
        for (bool cancel : {true, false}) {
          for (std::size_t s = 0; s < kSlots.size(); ++s) {
            std::vector<std::uint8_t> r(K, 0);
            for (int blk = 0; blk < 2; ++blk) {
              const auto& sl = kSlots[(s + static_cast<std::size_t>(blk) * 3) % kSlots.size()];
              const int base = 16 * blk;
              r[static_cast<std::size_t>(base + sl[0])] = e4m3(blk == 0 ? 1 : -1, ea, 0);
              if (cancel)
                r[static_cast<std::size_t>(base + sl[1])] = e4m3(blk == 0 ? -1 : 1, ea, 0);
              r[static_cast<std::size_t>(base + sl[2])] = e4m3_value(sign, f8, ea - 13);
            }
            rows.push_back(r);
          }
        }
      }
    }
  }
  GateProblem p;
  p.what = "design_a: largest term, its cancellation and a term at 2^(E - 13), 2^(E - 14)";
  p.M = static_cast<int>(rows.size());
  p.N = static_cast<int>(kColumns.size());
  p.K = K;
  for (const auto& r : rows)
    p.a.insert(p.a.end(), r.begin(), r.end());
  p.b = columns(K, false);
  return {p};
}

} // namespace mmaemu::kernels
