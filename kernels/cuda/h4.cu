// SPDX-License-Identifier: BSD-2-Clause
// cuda:h4, the hopper preset's chain (32-term blocks, min_exp -133): 128 x 128 tile per
// block of 256 threads, 8 x 8 outputs per thread, dynamic shared memory (two value stages). Kernel
// ABI v1.
#include "mmaemu_chain.cuh"

extern "C" __global__ void __launch_bounds__(256)
    mmaemu_h4_e4m3e4m3(const unsigned char* A, const unsigned char* B, float* C, int M, int N,
                       int K) {
  mmaemu_chain::chain_dynamic<32, -133, 8, 8>(A, B, C, M, N, K);
}
