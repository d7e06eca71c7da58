// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/host/launch.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "fiber_context.hpp"
#include "fiber_stack.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define MMAEMU_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MMAEMU_HOST_ASAN 1
#endif
#endif
#ifndef MMAEMU_HOST_ASAN
#define MMAEMU_HOST_ASAN 0
#endif
#if MMAEMU_HOST_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace mmaemu::kernels::host {

namespace detail {
constinit thread_local const ThreadContext* t_current = nullptr;
} // namespace detail

namespace {

// Thrown out of sync_block() in the other threads of a block once one thread has thrown, so
// that their stacks unwind (destructors run) before the block is dropped.
struct BlockAbandoned {};

// parked: at __syncthreads(); warp_wait: at a warp collective its warp has not completed;
// warp_done: its warp collective completed (runnable before any barrier is released).
enum class FiberState : unsigned char { not_started, running, parked, warp_wait, warp_done, done };

constexpr unsigned int kWarpSize = 32;
constexpr std::size_t kMaxCollectiveBytes = 256;

class Worker;

// One CUDA thread of the block a worker is running.
struct Fiber {
  ThreadContext ctx;
  detail::FiberContext context;
  FiberState state = FiberState::not_started;
  unsigned int linear = 0; // linear thread index in the block (warp = linear / 32)
  std::byte* stack_bottom = nullptr;
  std::size_t stack_bytes = 0;
  Worker* worker = nullptr;
};

// The fiber running on this OS thread; null in scheduler or host code.
constinit thread_local Fiber* t_fiber = nullptr;

// AddressSanitizer must know which stack is current, or it misreads frames (and exceptions
// thrown on a fiber stack make it print false reports).
void asan_start_switch(void** fake_stack_save, const void* bottom, std::size_t bytes) {
#if MMAEMU_HOST_ASAN
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, bytes);
#else
  (void)fake_stack_save;
  (void)bottom;
  (void)bytes;
#endif
}

void asan_finish_switch(void* fake_stack_save, const void** old_bottom, std::size_t* old_bytes) {
#if MMAEMU_HOST_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_save, old_bottom, old_bytes);
#else
  (void)fake_stack_save;
  (void)old_bottom;
  (void)old_bytes;
#endif
}

// A reused stack may still carry poisoned red zones of the frames of its last fiber.
void asan_unpoison(void* p, std::size_t bytes) {
#if MMAEMU_HOST_ASAN
  __asan_unpoison_memory_region(p, bytes);
#else
  (void)p;
  (void)bytes;
#endif
}

constexpr std::align_val_t kSmemAlign{128};

struct SmemFree {
  void operator()(std::byte* p) const noexcept { ::operator delete(p, kSmemAlign); }
};
using SmemBuffer = std::unique_ptr<std::byte, SmemFree>;

// The checked, derived parameters of one launch, shared read-only by its workers.
struct LaunchPlan {
  dim3 grid;
  dim3 block;
  std::size_t smem_bytes = 0;
  int mma_arch = 0;
  const std::function<void()>* body = nullptr;
  ThreadOrder order = ThreadOrder::ascending;
  unsigned int threads_per_block = 0;
  std::uint64_t blocks = 0;
};

// Block claiming and failure reporting across the workers of one launch.
class LaunchState {
public:
  // The next block to run, or `blocks` when this worker should stop.
  std::uint64_t claim(std::uint64_t blocks) {
    const std::uint64_t b = next_.fetch_add(1, std::memory_order_relaxed);
    // Blocks above a failed one are skipped; those below still run, so the failure reported is
    // always the lowest failing block whatever the interleaving.
    return b < blocks && b <= lowest_failed_.load(std::memory_order_relaxed) ? b : blocks;
  }

  void fail(std::uint64_t block, std::exception_ptr e) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!error_ || block < failed_block_) {
      failed_block_ = block;
      error_ = std::move(e);
      lowest_failed_.store(block, std::memory_order_relaxed);
    }
  }

  std::exception_ptr error() const { return error_; }

private:
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> lowest_failed_{std::numeric_limits<std::uint64_t>::max()};
  std::mutex mutex_;
  std::uint64_t failed_block_ = 0;
  std::exception_ptr error_;
};

// Runs blocks on the calling OS thread: owns the fiber stacks and the dynamic shared memory
// (reused from block to block) and schedules a block's fibers round by round: in each round
// every live fiber runs until its next barrier or its end, so no fiber passes barrier k before
// all live fibers reached it.
class Worker {
public:
  explicit Worker(const LaunchPlan& plan)
      : plan_(plan), stacks_(detail::acquire_stacks(plan.threads_per_block, kFiberStackBytes)),
        fibers_(plan.threads_per_block),
        smem_(static_cast<std::byte*>(::operator new(plan.smem_bytes, kSmemAlign))) {
    const dim3 b = plan.block;
    for (unsigned int i = 0; i < plan.threads_per_block; ++i) {
      Fiber& f = fibers_[i];
      f.ctx.thread_idx = uint3{i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
      f.ctx.block_dim = plan.block;
      f.ctx.grid_dim = plan.grid;
      f.ctx.dynamic_smem = smem_.get();
      f.ctx.dynamic_smem_bytes = plan.smem_bytes;
      f.ctx.mma_arch = plan.mma_arch;
      f.linear = i;
      f.stack_bottom = stacks_->bottom(i);
      f.stack_bytes = stacks_->stack_bytes();
      f.worker = this;
    }
  }
  ~Worker() { detail::release_stacks(std::move(stacks_)); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs every thread of block `linear` (x fastest); returns the first exception a thread
  // threw, in schedule order (deterministic), or null.
  std::exception_ptr run_block(std::uint64_t linear) {
    const dim3 g = plan_.grid;
    const uint3 block_idx{static_cast<unsigned int>(linear % g.x),
                          static_cast<unsigned int>((linear / g.x) % g.y),
                          static_cast<unsigned int>(linear / (std::uint64_t{g.x} * g.y))};
    std::memset(smem_.get(), kSmemFillByte, plan_.smem_bytes);
    abandoning_ = false;
    error_ = nullptr;
    for (auto& w : warps_) {
      if (w)
        w->arrived = 0;
    }
    for (Fiber& f : fibers_) {
      f.ctx.block_idx = block_idx;
      f.state = FiberState::not_started;
    }
    const std::size_t n = fibers_.size();
    std::size_t live = n;
    while (live > 0) {
      // A pass runs the fibers whose warp collective completed, if any; otherwise every live
      // fiber is at a barrier (or the block start), and the barrier is released for all. A
      // fiber that waits at a collective then can never be woken: its warp diverged.
      bool ready = false;
      const Fiber* waiting = nullptr;
      for (const Fiber& f : fibers_) {
        ready = ready || f.state == FiberState::warp_done;
        if (f.state == FiberState::warp_wait && waiting == nullptr)
          waiting = &f;
      }
      if (!ready && waiting != nullptr && !abandoning_) {
        error_ = std::make_exception_ptr(std::logic_error(divergence_message(*waiting)));
        abandoning_ = true;
      }
      for (std::size_t k = 0; k < n; ++k) {
        Fiber& f = fibers_[plan_.order == ThreadOrder::ascending ? k : n - 1 - k];
        if (f.state == FiberState::done) {
          continue;
        }
        const bool at_barrier = f.state == FiberState::not_started || f.state == FiberState::parked;
        const bool run = abandoning_ || (ready ? f.state == FiberState::warp_done : at_barrier);
        if (!run) {
          continue;
        }
        if (f.state == FiberState::not_started) {
          if (abandoning_) {
            f.state = FiberState::done; // never started, nothing to unwind
            --live;
            continue;
          }
          asan_unpoison(f.stack_bottom, f.stack_bytes);
          detail::make_context(f.context, f.stack_bottom, f.stack_bytes, &Worker::fiber_entry);
        }
        resume(f);
        if (f.state == FiberState::done) {
          --live;
        }
      }
    }
    return std::exchange(error_, nullptr);
  }

  // Called on fiber f's stack by sync_block(): back to the scheduler until the next round.
  void park(Fiber& f) { park_as(f, FiberState::parked); }

  // warp_collective() on fiber f's stack (launch.hpp).
  void warp_collective(Fiber& f, std::uint64_t tag, const void* in, std::size_t in_bytes, void* out,
                       std::size_t out_bytes,
                       const std::function<void(const std::byte*, std::byte*)>& compute) {
    const unsigned int warp = f.linear / kWarpSize;
    const unsigned int lane = f.linear % kWarpSize;
    if (in_bytes > kMaxCollectiveBytes || out_bytes > kMaxCollectiveBytes) {
      throw std::logic_error("warp_collective: " + std::to_string(in_bytes) + " / " +
                             std::to_string(out_bytes) + " bytes a lane, more than " +
                             std::to_string(kMaxCollectiveBytes));
    }
    if ((warp + 1) * kWarpSize > plan_.threads_per_block) {
      throw std::logic_error("warp_collective: thread " + std::to_string(f.linear) +
                             " is in warp " + std::to_string(warp) + " of only " +
                             std::to_string(plan_.threads_per_block - warp * kWarpSize) +
                             " threads; a warp-collective operation needs all 32 lanes");
    }
    if (warps_.size() <= warp)
      warps_.resize(plan_.threads_per_block / kWarpSize + 1);
    if (!warps_[warp])
      warps_[warp] = std::make_unique<WarpSlot>();
    WarpSlot& w = *warps_[warp];
    if (w.arrived == 0) {
      w.tag = tag;
      w.in_bytes = in_bytes;
      w.out_bytes = out_bytes;
    } else if (w.tag != tag || w.in_bytes != in_bytes || w.out_bytes != out_bytes) {
      throw std::logic_error("warp_collective: lane " + std::to_string(lane) + " of warp " +
                             std::to_string(warp) + " reached operation " + std::to_string(tag) +
                             " while its warp waits at operation " + std::to_string(w.tag));
    }
    if (in_bytes != 0)
      std::memcpy(w.ins.data() + lane * in_bytes, in, in_bytes);
    w.outs[lane] = out;
    w.fibers[lane] = &f;
    if (++w.arrived < kWarpSize) {
      park_as(f, FiberState::warp_wait); // the last lane fills `out` and wakes this one
      return;
    }
    std::array<std::byte, kWarpSize * kMaxCollectiveBytes> outs{};
    compute(w.ins.data(), outs.data());
    for (unsigned int l = 0; l < kWarpSize; ++l) {
      if (out_bytes != 0)
        std::memcpy(w.outs[l], outs.data() + l * out_bytes, out_bytes);
      if (l != lane)
        w.fibers[l]->state = FiberState::warp_done;
    }
    w.arrived = 0;
  }

private:
  // One warp's pending collective.
  struct WarpSlot {
    std::uint64_t tag = 0;
    std::size_t in_bytes = 0, out_bytes = 0;
    unsigned int arrived = 0;
    std::array<std::byte, kWarpSize * kMaxCollectiveBytes> ins{};
    std::array<void*, kWarpSize> outs{};
    std::array<Fiber*, kWarpSize> fibers{};
  };

  // Back to the scheduler in state `why` (parked or warp_wait) until a pass runs f again.
  void park_as(Fiber& f, FiberState why) {
    f.state = why;
    void* fake_stack = nullptr;
    asan_start_switch(&fake_stack, scheduler_stack_bottom_, scheduler_stack_bytes_);
    detail::swap_context(f.context, scheduler_);
    asan_finish_switch(fake_stack, &scheduler_stack_bottom_, &scheduler_stack_bytes_);
    if (abandoning_) {
      throw BlockAbandoned{};
    }
  }

  // Why a warp collective can never complete: where the other lanes of the waiting warp are.
  std::string divergence_message(const Fiber& waiting) const {
    const unsigned int warp = waiting.linear / kWarpSize;
    std::string where;
    for (unsigned int l = 0; l < kWarpSize; ++l) {
      const Fiber& g = fibers_[warp * kWarpSize + l];
      const char* state = g.state == FiberState::done     ? "returned"
                          : g.state == FiberState::parked ? "at __syncthreads()"
                                                          : nullptr;
      if (state != nullptr && where.size() < 200)
        where +=
            (where.empty() ? "" : ", ") + std::string("lane ") + std::to_string(l) + " " + state;
    }
    return "warp_collective: warp " + std::to_string(warp) + " of block (" +
           std::to_string(waiting.ctx.block_idx.x) + ", " +
           std::to_string(waiting.ctx.block_idx.y) + ", " +
           std::to_string(waiting.ctx.block_idx.z) + ") diverged: lane " +
           std::to_string(waiting.linear % kWarpSize) +
           " waits at a warp-collective operation while " + where;
  }

  void resume(Fiber& f) {
    f.state = FiberState::running;
    t_fiber = &f;
    detail::t_current = &f.ctx;
    void* fake_stack = nullptr;
    asan_start_switch(&fake_stack, f.stack_bottom, f.stack_bytes);
    detail::swap_context(scheduler_, f.context);
    asan_finish_switch(fake_stack, nullptr, nullptr);
    t_fiber = nullptr;
    detail::t_current = nullptr;
  }

  // Where every fiber starts (on its own stack). It never returns: exceptions stop here, and
  // the fiber leaves by a last switch to the scheduler.
  static void fiber_entry() {
    Fiber& f = *t_fiber;
    Worker& w = *f.worker;
    asan_finish_switch(nullptr, &w.scheduler_stack_bottom_, &w.scheduler_stack_bytes_);
    try {
      (*w.plan_.body)();
    } catch (const BlockAbandoned&) {
      // Unwound because another thread of the block threw; that one is reported.
    } catch (...) {
      if (!w.error_) {
        w.error_ = std::current_exception();
      }
      w.abandoning_ = true;
    }
    f.state = FiberState::done;
    // A null fake-stack save tells ASan this stack is finished.
    asan_start_switch(nullptr, w.scheduler_stack_bottom_, w.scheduler_stack_bytes_);
    detail::swap_context(f.context, w.scheduler_);
    std::abort(); // a finished fiber is never resumed
  }

  const LaunchPlan& plan_;
  std::unique_ptr<detail::StackPool> stacks_;
  std::vector<Fiber> fibers_;
  SmemBuffer smem_;
  detail::FiberContext scheduler_{};
  const void* scheduler_stack_bottom_ = nullptr;
  std::size_t scheduler_stack_bytes_ = 0;
  bool abandoning_ = false;
  std::exception_ptr error_;
  std::vector<std::unique_ptr<WarpSlot>> warps_;
};

void run_worker(const LaunchPlan& plan, LaunchState& state) noexcept {
  try {
    Worker worker(plan);
    for (std::uint64_t b = state.claim(plan.blocks); b < plan.blocks;
         b = state.claim(plan.blocks)) {
      if (std::exception_ptr e = worker.run_block(b)) {
        state.fail(b, std::move(e));
      }
    }
  } catch (...) {
    // No stacks or no memory for this worker: the launch cannot be trusted to complete.
    state.fail(0, std::current_exception());
  }
}

[[noreturn]] void reject(const std::string& what) {
  throw std::invalid_argument("mmaemu::kernels::host::launch: " + what);
}

void check_dim(const char* name, unsigned int value, unsigned int max) {
  if (value == 0 || value > max) {
    reject(std::string(name) + " = " + std::to_string(value) + " is outside 1.." +
           std::to_string(max));
  }
}

} // namespace

void sync_block() {
  Fiber* f = t_fiber;
  if (f != nullptr) {
    f->worker->park(*f);
  }
}

void warp_collective(std::uint64_t tag, const void* in, std::size_t in_bytes, void* out,
                     std::size_t out_bytes,
                     const std::function<void(const std::byte* ins, std::byte* outs)>& compute) {
  Fiber* f = t_fiber;
  if (f == nullptr) {
    throw std::logic_error("warp_collective: called outside a launch (a warp-collective "
                           "operation needs the 32 threads of a warp)");
  }
  f->worker->warp_collective(*f, tag, in, in_bytes, out, out_bytes, compute);
}

void launch(dim3 grid, dim3 block, std::size_t dynamic_smem_bytes,
            const std::function<void()>& body, unsigned int workers) {
  launch(grid, block, dynamic_smem_bytes, body, LaunchOptions{workers, ThreadOrder::ascending});
}

void launch(dim3 grid, dim3 block, std::size_t dynamic_smem_bytes,
            const std::function<void()>& body, const LaunchOptions& options) {
  check_dim("block.x", block.x, kMaxBlockDimX);
  check_dim("block.y", block.y, kMaxBlockDimY);
  check_dim("block.z", block.z, kMaxBlockDimZ);
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  if (threads > kMaxThreadsPerBlock) {
    reject("block (" + std::to_string(block.x) + ", " + std::to_string(block.y) + ", " +
           std::to_string(block.z) + ") has " + std::to_string(threads) + " threads, more than " +
           std::to_string(kMaxThreadsPerBlock));
  }
  check_dim("grid.x", grid.x, kMaxGridDimX);
  check_dim("grid.y", grid.y, kMaxGridDimYZ);
  check_dim("grid.z", grid.z, kMaxGridDimYZ);
  if (dynamic_smem_bytes > kMaxDynamicSmemBytes) {
    reject("dynamic_smem_bytes = " + std::to_string(dynamic_smem_bytes) + " exceeds " +
           std::to_string(kMaxDynamicSmemBytes) + " (227 KiB)");
  }
  if (!body) {
    reject("body is empty");
  }
  if (options.mma_arch != 0 && std::find(std::begin(kMmaArchs), std::end(kMmaArchs),
                                         options.mma_arch) == std::end(kMmaArchs)) {
    reject("mma_arch = " + std::to_string(options.mma_arch) +
           " is not an architecture the shim's mma.sync emulates (70, 72, 80, 86, 87, 89, 90)");
  }
  if (t_fiber != nullptr) {
    throw std::logic_error("mmaemu::kernels::host::launch: called from inside a kernel");
  }

  LaunchPlan plan;
  plan.grid = grid;
  plan.block = block;
  plan.smem_bytes = dynamic_smem_bytes;
  plan.body = &body;
  plan.order = options.order;
  plan.mma_arch = options.mma_arch;
  plan.threads_per_block = static_cast<unsigned int>(threads);
  plan.blocks = std::uint64_t{grid.x} * grid.y * grid.z;

  unsigned int wanted = options.workers;
  if (wanted == 0) {
    wanted = std::max(1u, std::thread::hardware_concurrency());
  }
  const auto count = static_cast<unsigned int>(std::min<std::uint64_t>(wanted, plan.blocks));

  LaunchState state;
  std::vector<std::thread> helpers;
  try {
    helpers.reserve(count - 1);
    for (unsigned int i = 1; i < count; ++i) {
      helpers.emplace_back(run_worker, std::cref(plan), std::ref(state));
    }
  } catch (const std::exception&) {
    // Fewer OS threads than asked for: blocks are claimed, so the ones running finish the grid.
  }
  run_worker(plan, state);
  for (std::thread& t : helpers) {
    t.join();
  }
  if (std::exception_ptr e = state.error()) {
    std::rethrow_exception(e);
  }
}

} // namespace mmaemu::kernels::host
