// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Include this before a kernel .cu file to compile it as host C++ (see launch.hpp for running
// it). It defines MMAEMU_HOST_SHIM, maps the CUDA keywords and built-in variables onto the shim
// and brings in the exact intrinsics (intrinsics.hpp) and the warp-level mma.sync (mma.hpp,
// which kernels reach through kernels/cuda/mmaemu_mma.cuh).
//
// The standard headers a kernel may use are included first: once these macros exist a later
// first inclusion could break (libstdc++ spells attributes __noinline__, for one).

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "mmaemu/kernels/host/intrinsics.hpp"
#include "mmaemu/kernels/host/launch.hpp"
#include "mmaemu/kernels/host/mma.hpp"
#include "mmaemu/kernels/host/vector_types.hpp"

#define MMAEMU_HOST_SHIM 1

// Function qualifiers: every kernel and device function is an ordinary host function.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
// A GNU attribute, as in CUDA, so `__shared__ __align__(16) T x[N];` stays valid.
#define __align__(n) __attribute__((aligned(n)))

// Static shared memory: one instance per OS worker, and a worker runs one block at a time with
// all of that block's threads, so every thread of a block sees the same variable. It is not
// reset between blocks (stale data from the worker's previous block, zero at first): as on a GPU
// a kernel must write shared memory before reading it.
#define __shared__ static thread_local
// Constant memory: an ordinary (namespace-scope) variable.
#define __constant__

// Built-in variables, per fiber; read-only as in CUDA.
#define threadIdx (::mmaemu::kernels::host::current_thread().thread_idx)
#define blockIdx (::mmaemu::kernels::host::current_thread().block_idx)
#define blockDim (::mmaemu::kernels::host::current_thread().block_dim)
#define gridDim (::mmaemu::kernels::host::current_thread().grid_dim)

inline constexpr int warpSize = 32;

// The block-wide barrier (launch.hpp: sync_block).
inline void __syncthreads() {
  ::mmaemu::kernels::host::sync_block();
}
