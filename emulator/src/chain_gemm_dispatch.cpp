// SPDX-License-Identifier: BSD-2-Clause
// Which chain_gemm kernel computes a call: the fastest one that the CPU, the preset and the
// format pair allow (the terms' and sums' bounds decide the lane width), or the one a test
// forced.

#include <algorithm>
#include <atomic>
#include <climits>

#include "chain_gemm_kernels.hpp"
#include "dot_f32.hpp"

namespace mmaemu::model::cg {

namespace {

std::atomic<int> g_forced{static_cast<int>(ChainKernel::automatic)};
std::atomic<std::size_t> g_slab_bytes{0};

int max_mant(Format f) {
  int m = 0;
  for (const Fp8Operand& o : fp8_operand_table(f)) {
    if (o.cls == static_cast<std::uint8_t>(ValueClass::finite))
      m = std::max<int>(m, o.mant);
  }
  return m;
}

// The largest product term (|significand product| << G) and the largest |S| a block can
// reach: every product term at its maximum plus c's term (c's significand << cpre).
struct Bounds {
  unsigned __int128 product, sum;
};

Bounds bounds_of(const Preset& p, FormatPair fmt) {
  const int s0 = p.frac - spec(fmt.a).frac_bits - spec(fmt.b).frac_bits;
  const int G = std::max(s0, 0);
  const int cpre = std::max(p.frac - p.frac_out, 0);
  const auto product = static_cast<unsigned __int128>(max_mant(fmt.a) * max_mant(fmt.b)) << G;
  const auto c = ((static_cast<unsigned __int128>(1) << (p.frac_out + 1)) - 1) << cpre;
  return {product, product * static_cast<unsigned>(p.nfma) + c};
}

bool cpu_has_avx512() {
  // __builtin_cpu_init: this may run before the constructors that would otherwise do it.
  static const bool ok = (__builtin_cpu_init(), true) && __builtin_cpu_supports("avx512f") &&
                         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
                         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return ok;
}

bool cpu_has_avx512_vnni() {
  static const bool ok = cpu_has_avx512() && __builtin_cpu_supports("avx512vnni");
  return ok;
}

bool cpu_has_avx2() {
  static const bool ok = (__builtin_cpu_init(), true) && __builtin_cpu_supports("avx2");
  return ok;
}

bool cpu_has_avx2_fma() {
  static const bool ok =
      cpu_has_avx2() && __builtin_cpu_supports("fma") && detail::cpu_rounds_toward_zero();
  return ok;
}

// The binary32 kernel represents a preset's blocks exactly when (chain_gemm_f32.cpp): the
// block results round toward zero; every block sum stays below 2^24 units (bounds_of); a
// term (below 2^(E + 2)) lies below C = 2^(E - frac + 23), i.e. frac <= 21; and C is a normal
// binary32 value for every block exponent, E >= min_exp >= frac - 149; a block exponent
// above 100 comes only from c (min_exp <= 100), whose term is then exact with C at E = 100.
bool fits_f32(const Preset& p, const Bounds& b) {
  return !p.late_c && p.rounding == BlockRounding::toward_zero &&
         b.sum < (static_cast<unsigned __int128>(1) << 24) && p.frac <= 21 &&
         p.min_exp >= p.frac - 149 && p.min_exp <= 100;
}

bool cpu_can(ChainKernel k) {
  switch (k) {
  case ChainKernel::avx512_i16:
  case ChainKernel::lanes_avx512:
    return cpu_has_avx512();
  case ChainKernel::avx512_i16_vnni:
    return cpu_has_avx512_vnni();
  case ChainKernel::lanes_avx2:
    return cpu_has_avx2();
  case ChainKernel::f32_avx2:
    return cpu_has_avx2_fma();
  default:
    return true;
  }
}

// The smallest alignment exponent of a nonzero finite code of format f, and the largest of a
// finite one.
int lowest_nonzero_exp(Format f) {
  int e = INT_MAX;
  for (const Fp8Operand& o : fp8_operand_table(f)) {
    if (o.cls == static_cast<std::uint8_t>(ValueClass::finite) && o.mant != 0)
      e = std::min<int>(e, o.ea);
  }
  return e;
}

int highest_exp(Format f) {
  int e = INT_MIN;
  for (const Fp8Operand& o : fp8_operand_table(f)) {
    if (o.cls == static_cast<std::uint8_t>(ValueClass::finite))
      e = std::max<int>(e, o.ea);
  }
  return e;
}

} // namespace

int lowest_product_exp(FormatPair fmt) {
  return lowest_nonzero_exp(fmt.a) + lowest_nonzero_exp(fmt.b);
}

bool i16_carry32_fits(const Preset& p, FormatPair fmt, std::int64_t max_len) {
  const int s0 = p.frac - spec(fmt.a).frac_bits - spec(fmt.b).frac_bits;
  int log2_len = 0;
  while ((std::int64_t{1} << log2_len) < max_len)
    ++log2_len;
  const int pmin = lowest_product_exp(fmt);
  const int pmax = highest_exp(fmt.a) + highest_exp(fmt.b);
  return !p.late_c && p.rounding == BlockRounding::toward_zero && s0 >= 0 && p.frac_out <= 23 &&
         bounds_of(p, fmt).sum < (static_cast<unsigned __int128>(1) << 24) && pmin > -127 &&
         pmin - 2 * p.frac >= kCarryLo && pmax + 2 + log2_len - p.frac <= kCarryHi;
}

Choice choose(const Preset& p, FormatPair fmt) {
  const auto forced = static_cast<ChainKernel>(g_forced.load(std::memory_order_relaxed));
  if (p.late_c || forced == ChainKernel::exact)
    return {ChainKernel::exact, false, forced != ChainKernel::automatic};
  const Bounds b = bounds_of(p, fmt);
  const auto two = [](int e) { return static_cast<unsigned __int128>(1) << e; };
  if (b.sum >= two(62))
    return {ChainKernel::exact, false,
            forced != ChainKernel::automatic}; // not with frac <= kMaxFrac
  const bool fits32 = b.sum < two(31);
  const bool fits16 = fits32 && b.product < two(15); // vpmaddwd multiplies signed 16-bit
  ChainKernel k = forced;
  if (k == ChainKernel::automatic) {
    k = cpu_has_avx512_vnni() ? ChainKernel::avx512_i16_vnni
        : cpu_has_avx512()    ? ChainKernel::avx512_i16
        : cpu_has_avx2_fma()  ? ChainKernel::f32_avx2
        : cpu_has_avx2()      ? ChainKernel::lanes_avx2
                              : ChainKernel::lanes_base;
  }
  if ((k == ChainKernel::avx512_i16 || k == ChainKernel::avx512_i16_vnni) && !fits16)
    k = ChainKernel::lanes_avx512;
  if (k == ChainKernel::f32_avx2 && !fits_f32(p, b))
    k = ChainKernel::lanes_avx2;
  return {k, !fits32, forced != ChainKernel::automatic};
}

std::size_t forced_slab_bytes() {
  return g_slab_bytes.load(std::memory_order_relaxed);
}

} // namespace mmaemu::model::cg

namespace mmaemu::model::detail {

const char* chain_kernel_name(ChainKernel k) {
  switch (k) {
  case ChainKernel::automatic:
    return "automatic";
  case ChainKernel::avx512_i16:
    return "avx512_i16";
  case ChainKernel::avx512_i16_vnni:
    return "avx512_i16_vnni";
  case ChainKernel::lanes_avx512:
    return "lanes_avx512";
  case ChainKernel::lanes_avx2:
    return "lanes_avx2";
  case ChainKernel::lanes_base:
    return "lanes_base";
  case ChainKernel::f32_avx2:
    return "f32_avx2";
  case ChainKernel::exact:
    return "exact";
  }
  return "?";
}

bool force_chain_kernel(ChainKernel k) {
  if (!cg::cpu_can(k))
    return false;
  cg::g_forced.store(static_cast<int>(k), std::memory_order_relaxed);
  return true;
}

ChainKernel chain_kernel_for(const Preset& p, FormatPair fmt) {
  return cg::choose(p, fmt).kernel;
}

void force_chain_slab_bytes(std::size_t bytes) {
  cg::g_slab_bytes.store(bytes, std::memory_order_relaxed);
}

} // namespace mmaemu::model::detail
