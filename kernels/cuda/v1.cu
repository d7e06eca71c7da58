// SPDX-License-Identifier: BSD-2-Clause
// cuda:v1, the ada preset's chain (16-term blocks, min_exp -132): 64 x 64 tile per
// block of 256 threads, 4 x 4 outputs per thread, static shared memory (one stage). Kernel ABI v1.
#include "mmaemu_chain.cuh"

extern "C" __global__ void __launch_bounds__(256)
    mmaemu_v1_e4m3e4m3(const unsigned char* A, const unsigned char* B, float* C, int M, int N,
                       int K) {
  mmaemu_chain::chain_static<16, -132, 4, 4>(A, B, C, M, N, K);
}
