// SPDX-License-Identifier: BSD-2-Clause
// Kernels for test_launch.cpp, written as CUDA device code (they compile with nvcc as well):
// test_launch.cpp includes this file after cuda_shim.hpp and runs them through launch().

#ifdef MMAEMU_HOST_SHIM
#define TEST_DYNAMIC_SMEM(T, name)                                                                 \
  T* name = static_cast<T*>(::mmaemu::kernels::host::dynamic_smem())
#else
#define TEST_DYNAMIC_SMEM(T, name)                                                                 \
  extern __shared__ __align__(16) unsigned char name##_bytes[];                                    \
  T* name = reinterpret_cast<T*>(name##_bytes)
#endif

// A value no thread of any block computes by accident.
__device__ __forceinline__ unsigned int slot_value(unsigned int block, unsigned int thread,
                                                   unsigned int round) {
  return (block * 7919u + thread * 3u + 1u) ^ (round * 0x9e3779b9u);
}

// Each thread writes its slot of static shared memory, then reads its right neighbour's (ring).
// Without the barrier some thread reads a slot before its owner wrote it, in either fiber order.
__global__ void __launch_bounds__(1024)
    neighbour_exchange(unsigned int* __restrict__ out, bool with_barrier) {
  __shared__ __align__(16) unsigned int slots[1024];
  const unsigned int t = threadIdx.x;
  const unsigned int n = blockDim.x;
  slots[t] = slot_value(blockIdx.x, t, 0);
  if (with_barrier) {
    __syncthreads();
  }
  out[blockIdx.x * n + t] = slots[(t + 1) % n];
}

// `rounds` times: publish v, barrier, take the right neighbour's v (the last thread its own)
// mixed with the round, barrier. The second barrier keeps a thread from overwriting its slot
// before its left neighbour read it; without it only the descending fiber order goes wrong.
__global__ void rotate_rounds(unsigned int* out, int rounds, bool second_barrier) {
  __shared__ unsigned int ring[1024];
  const unsigned int t = threadIdx.x;
  const unsigned int n = blockDim.x;
  unsigned int v = slot_value(blockIdx.x, t, 0);
  for (int r = 0; r < rounds; ++r) {
    ring[t] = v;
    __syncthreads();
    v = ring[min(t + 1, n - 1)] * 2654435761u + static_cast<unsigned int>(r);
    if (second_barrier) {
      __syncthreads();
    }
  }
  out[blockIdx.x * n + t] = v;
}

// Thread t takes part in t % 4 rounds, then returns: at the top of a round, or between the two
// barriers of its last one. It exchanges with thread t + 4, which has the same number of rounds.
// The barriers of the longer-lived threads must complete although others have returned.
__global__ void early_return(unsigned int* out) {
  __shared__ unsigned int slots[1024];
  const unsigned int t = threadIdx.x;
  const unsigned int n = blockDim.x;
  const unsigned int my_rounds = t % 4;
  for (unsigned int r = 0;; ++r) {
    if (r >= my_rounds) {
      return;
    }
    slots[t] = slot_value(blockIdx.x, t, r);
    __syncthreads();
    out[blockIdx.x * n + t] = slots[(t + 4) % n];
    if (r + 1 == my_rounds && t % 8 < 4) {
      return;
    }
    __syncthreads();
  }
}

// Dynamic shared memory of `words` words: every word must hold the fill pattern before anyone
// writes (fill_seen counts the words that did), then `rounds` times the block writes a
// block-specific pattern and every thread sums the words owned by other threads.
__global__ void dynamic_smem_rounds(unsigned int* out, unsigned int* fill_seen, unsigned int words,
                                    int rounds) {
  TEST_DYNAMIC_SMEM(unsigned int, s);
  const unsigned int t = threadIdx.x;
  const unsigned int n = blockDim.x;
  unsigned int seen = 0;
  for (unsigned int w = t; w < words; w += n) {
    seen += s[w] == 0xA5A5A5A5u ? 1u : 0u;
  }
  fill_seen[blockIdx.x * n + t] = seen;
  __syncthreads();
  unsigned int sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (unsigned int w = t; w < words; w += n) {
      s[w] = slot_value(blockIdx.x, w, static_cast<unsigned int>(r));
    }
    __syncthreads();
    for (unsigned int w = (t + 1) % n; w < words; w += n) {
      sum = sum * 31u + s[w];
    }
    __syncthreads();
  }
  out[blockIdx.x * n + t] = sum;
}
