// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Running a CUDA kernel's source on the CPU: a grid of blocks spread over OS worker threads,
// the threads of one block as fibers on one worker that switch only at __syncthreads(). Only
// barriers and shared memory connect the threads of a block, so results do not depend on the
// number of workers or on which worker ran which block.

#include <cstddef>
#include <cstdint>
#include <functional>

#include "mmaemu/kernels/host/vector_types.hpp"

namespace mmaemu::kernels::host {

// Limits a launch is checked against (CUDA on sm_89/sm_90; 227 KiB is the sm_90 opt-in maximum).
inline constexpr unsigned int kMaxThreadsPerBlock = 1024;
inline constexpr unsigned int kMaxBlockDimX = 1024;
inline constexpr unsigned int kMaxBlockDimY = 1024;
inline constexpr unsigned int kMaxBlockDimZ = 64;
inline constexpr unsigned int kMaxGridDimX = 0x7fffffffu;
inline constexpr unsigned int kMaxGridDimYZ = 65535;
inline constexpr std::size_t kMaxDynamicSmemBytes = 227 * 1024;
// Each fiber (CUDA thread) runs on a stack of this size: kernel-local arrays and recursion must
// fit (frames are larger under ASan). A guard page below it turns an overflow into SIGSEGV
// (best effort: for the first 8192 stacks mapped in the process).
inline constexpr std::size_t kFiberStackBytes = 256 * 1024;
// The byte that fills a block's dynamic shared memory when the block starts, so a read of
// shared memory nobody wrote shows up as a wrong result rather than a lucky zero.
inline constexpr unsigned char kSmemFillByte = 0xA5;

// What one CUDA thread sees of its launch: threadIdx, blockIdx, blockDim, gridDim and its
// block's dynamic shared memory.
struct ThreadContext {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim{1, 1, 1};
  dim3 grid_dim{1, 1, 1};
  void* dynamic_smem = nullptr;
  std::size_t dynamic_smem_bytes = 0;
  int mma_arch = 0; // the architecture the launch's mma.sync emulates (mma.hpp); 0: the default
};

namespace detail {
// The running fiber's context; null outside launch(). Defined in shim.cpp.
extern constinit thread_local const ThreadContext* t_current;
inline constexpr ThreadContext kHostThread{};
} // namespace detail

// The calling CUDA thread's context. Outside launch() the caller is thread 0 of block 0 of a
// 1x1 launch without dynamic shared memory, so device functions can be called directly.
inline const ThreadContext& current_thread() noexcept {
  const ThreadContext* c = detail::t_current;
  return c != nullptr ? *c : detail::kHostThread;
}

// The block's dynamic shared memory: dynamic_smem_bytes as given to launch(), 128-byte aligned,
// filled with kSmemFillByte when the block starts, one buffer per block in flight (under ASan a
// read past its size is reported). Null outside launch().
inline void* dynamic_smem() noexcept {
  return current_thread().dynamic_smem;
}
inline std::size_t dynamic_smem_size() noexcept {
  return current_thread().dynamic_smem_bytes;
}

// __syncthreads(): waits until every thread of the block has arrived here or has returned from
// the kernel (as on sm_70+), so it never deadlocks. Outside launch() it returns at once (a block
// of one thread). Throws an internal exception to unwind the thread when another thread of the
// block threw: kernels must not catch (...) around it.
void sync_block();

// Order in which the fibers of a block run between two barriers. Correct kernels give the same
// bits in both; running both catches many missing-barrier races (a read of a slot another thread
// writes before the next barrier).
enum class ThreadOrder { ascending, descending };

// The architectures mma.sync can emulate (mma.hpp says which preset each one uses).
inline constexpr int kMmaArchs[] = {70, 72, 80, 86, 87, 89, 90};
inline constexpr int kDefaultMmaArch = 89;

struct LaunchOptions {
  // OS worker threads; 0 means std::thread::hardware_concurrency(). Never more than the blocks.
  unsigned int workers = 0;
  ThreadOrder order = ThreadOrder::ascending;
  // The architecture whose tensor cores mma.sync emulates in this launch (one of kMmaArchs);
  // 0: $MMAEMU_SHIM_MMA_ARCH when set, else kDefaultMmaArch (mma.hpp). launch() refuses others.
  int mma_arch = 0;
};

// A warp-collective step, the way mma.sync works: the 32 lanes of the calling thread's warp
// (lane = linear thread index % 32) each pass `in` (in_bytes) and an `out` buffer (out_bytes).
// The thread that arrives last runs `compute(ins, outs)` once, on its own stack, with the
// lanes' inputs as [32][in_bytes] and the outputs as [32][out_bytes] (by lane); every lane
// then returns with its `out` filled. The others wait without passing a __syncthreads() of
// the block, which still waits for every thread. `tag` names the operation; the lanes must
// agree on it and on the sizes. Throws std::logic_error (which ends the launch as a kernel's
// exception does) outside launch(), when the warp has fewer than 32 threads, when the lanes'
// tags or sizes differ, or when a lane waits here while another lane of its warp has returned
// or waits at __syncthreads() (a divergent warp: undefined on a GPU). in_bytes, out_bytes <= 256.
void warp_collective(std::uint64_t tag, const void* in, std::size_t in_bytes, void* out,
                     std::size_t out_bytes,
                     const std::function<void(const std::byte* ins, std::byte* outs)>& compute);

// Runs `body` once for every thread of every block of grid x block, with current_thread() set.
// Blocks run on `workers` OS threads (the caller is one of them); a block's threads are fibers
// on one worker, switched only in sync_block(). Blocks are claimed in linear order (x fastest).
// Throws std::invalid_argument naming the value if a dimension is 0 or above the CUDA limits
// (block: x,y <= 1024, z <= 64, x*y*z <= 1024; grid: x < 2^31, y,z <= 65535), if
// dynamic_smem_bytes > 227 KiB or body is empty; std::logic_error when called from inside a
// kernel. An exception thrown by `body` in any thread unwinds the other threads of its block,
// stops the launch of later blocks, and is rethrown here once every worker has stopped; if
// several blocks throw, the one of the lowest linear block index wins (deterministic).
void launch(dim3 grid, dim3 block, std::size_t dynamic_smem_bytes,
            const std::function<void()>& body, unsigned int workers = 0);
void launch(dim3 grid, dim3 block, std::size_t dynamic_smem_bytes,
            const std::function<void()>& body, const LaunchOptions& options);

} // namespace mmaemu::kernels::host
