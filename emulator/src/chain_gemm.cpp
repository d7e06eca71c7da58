// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/chain_gemm.hpp"

#include <span>

namespace mmaemu::model {

void chain_gemm_simple(const GemmOperands& op, std::size_t k0, std::size_t k1, const Preset& p,
                       std::uint32_t* out, std::size_t ldo) {
  const std::size_t L = k1 - k0;
  for (std::size_t m = 0; m < op.M; ++m) {
    for (std::size_t n = 0; n < op.N; ++n) {
      out[m * ldo + n] = dot(std::span(op.a + m * op.lda + k0, L),
                             std::span(op.b + n * op.ldb + k0, L), 0u, p, op.fmt);
    }
  }
}

void chain_gemm(const GemmOperands& op, std::size_t k0, std::size_t k1, const Preset& p,
                std::uint32_t* out, std::size_t ldo, unsigned threads) {
  (void)threads;
  chain_gemm_simple(op, k0, k1, p, out, ldo);
}

}  // namespace mmaemu::model
