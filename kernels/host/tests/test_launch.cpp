// SPDX-License-Identifier: BSD-2-Clause
// launch() and __syncthreads(): barrier semantics, per-block shared memory, index coverage,
// argument checks and exceptions, on the fiber switch this binary was built with.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fiber_context.hpp"

// The shim, then the kernels written against it (as a host TU of a real kernel does).
#include "mmaemu/kernels/host/cuda_shim.hpp"

#include "launch_test_kernels.cu"

namespace {

using mmaemu::kernels::host::current_thread;
using mmaemu::kernels::host::launch;
using mmaemu::kernels::host::LaunchOptions;
using mmaemu::kernels::host::ThreadOrder;

constexpr ThreadOrder kOrders[] = {ThreadOrder::ascending, ThreadOrder::descending};

const char* order_name(ThreadOrder o) {
  return o == ThreadOrder::ascending ? "ascending" : "descending";
}

TEST(HostLaunch, FiberBackendIsTheConfiguredOne) {
  const std::string backend = mmaemu::kernels::host::detail::fiber_backend();
  std::cout << "fiber backend: " << backend << "\n";
  ::testing::Test::RecordProperty("fiber_backend", backend);
#if defined(MMAEMU_HOST_FIBER_UCONTEXT) && MMAEMU_HOST_FIBER_UCONTEXT
  EXPECT_EQ(backend, "ucontext");
#elif defined(__x86_64__)
  EXPECT_EQ(backend, "x86_64-asm");
#endif
}

TEST(HostLaunch, BarrierMakesNeighbourWritesVisible) {
  constexpr unsigned kBlocks = 6;
  for (unsigned threads : {1u, 2u, 33u, 256u, 1024u}) {
    for (ThreadOrder order : kOrders) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + order_name(order));
      std::vector<unsigned> out(kBlocks * threads, 0);
      launch(kBlocks, threads, 0, [&] { neighbour_exchange(out.data(), true); }, {3, order});
      for (unsigned b = 0; b < kBlocks; ++b) {
        for (unsigned t = 0; t < threads; ++t) {
          ASSERT_EQ(out[b * threads + t], slot_value(b, (t + 1) % threads, 0))
              << "block " << b << " thread " << t;
        }
      }
    }
  }
}

// The exchange test above has teeth: without the barrier it fails in both fiber orders.
TEST(HostLaunch, MissingBarrierIsVisibleInEitherOrder) {
  constexpr unsigned kBlocks = 4;
  constexpr unsigned kThreads = 64;
  for (ThreadOrder order : kOrders) {
    SCOPED_TRACE(order_name(order));
    std::vector<unsigned> out(kBlocks * kThreads, 0);
    launch(kBlocks, kThreads, 0, [&] { neighbour_exchange(out.data(), false); }, {1, order});
    unsigned wrong = 0;
    for (unsigned b = 0; b < kBlocks; ++b) {
      for (unsigned t = 0; t < kThreads; ++t) {
        wrong += out[b * kThreads + t] != slot_value(b, (t + 1) % kThreads, 0) ? 1 : 0;
      }
    }
    EXPECT_GT(wrong, 0u);
  }
}

// The same rounds computed one block at a time with plain arrays.
std::vector<unsigned> rotate_reference(unsigned blocks, unsigned threads, int rounds) {
  std::vector<unsigned> out(blocks * threads);
  for (unsigned b = 0; b < blocks; ++b) {
    std::vector<unsigned> v(threads);
    for (unsigned t = 0; t < threads; ++t) {
      v[t] = slot_value(b, t, 0);
    }
    for (int r = 0; r < rounds; ++r) {
      std::vector<unsigned> next(threads);
      for (unsigned t = 0; t < threads; ++t) {
        next[t] = v[t + 1 < threads ? t + 1 : t] * 2654435761u + static_cast<unsigned>(r);
      }
      v = next;
    }
    for (unsigned t = 0; t < threads; ++t) {
      out[b * threads + t] = v[t];
    }
  }
  return out;
}

TEST(HostLaunch, ManyBarriersInALoopKeepEveryRoundApart) {
  constexpr unsigned kBlocks = 8;
  constexpr unsigned kThreads = 128;
  constexpr int kRounds = 40;
  const std::vector<unsigned> expected = rotate_reference(kBlocks, kThreads, kRounds);
  for (unsigned workers : {1u, 2u, 3u}) {
    for (ThreadOrder order : kOrders) {
      SCOPED_TRACE(std::to_string(workers) + " workers, " + order_name(order));
      std::vector<unsigned> out(kBlocks * kThreads, 0);
      launch(kBlocks, kThreads, 0, [&] { rotate_rounds(out.data(), kRounds, true); },
             {workers, order});
      EXPECT_EQ(out, expected);
    }
  }
}

// Without the second barrier a thread may overwrite its slot before its left neighbour read it:
// the ascending order happens to hide that race, the descending one exposes it, which is why
// kernels' tests should run both orders.
TEST(HostLaunch, DescendingOrderExposesAWriteAfterReadRace) {
  constexpr unsigned kThreads = 64;
  const std::vector<unsigned> expected = rotate_reference(1, kThreads, 3);
  std::vector<unsigned> out(kThreads, 0);
  launch(1, kThreads, 0, [&] { rotate_rounds(out.data(), 3, false); }, {1, ThreadOrder::ascending});
  EXPECT_EQ(out, expected);
  launch(1, kThreads, 0, [&] { rotate_rounds(out.data(), 3, false); },
         {1, ThreadOrder::descending});
  EXPECT_NE(out, expected);
}

TEST(HostLaunch, ReturnedThreadsCountAsArrivedAtLaterBarriers) {
  constexpr unsigned kBlocks = 5;
  constexpr unsigned kSentinel = 0xdeadbeefu;
  for (unsigned threads : {8u, 96u, 1024u}) {
    for (ThreadOrder order : kOrders) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + order_name(order));
      std::vector<unsigned> out(kBlocks * threads, kSentinel);
      launch(kBlocks, threads, 0, [&] { early_return(out.data()); }, {2, order});
      for (unsigned b = 0; b < kBlocks; ++b) {
        for (unsigned t = 0; t < threads; ++t) {
          const unsigned rounds = t % 4;
          const unsigned want =
              rounds == 0 ? kSentinel : slot_value(b, (t + 4) % threads, rounds - 1);
          ASSERT_EQ(out[b * threads + t], want) << "block " << b << " thread " << t;
        }
      }
    }
  }
}

TEST(HostLaunch, ABlockWhoseThreadsAllReturnAtOnceFinishes) {
  std::atomic<unsigned> ran{0};
  launch(3, 512, 0, [&] { ran.fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(ran.load(), 3u * 512u);
}

// Many blocks on several workers at once: each block's dynamic shared memory starts as the fill
// pattern and holds only that block's words, however the workers interleave.
TEST(HostLaunch, DynamicSharedMemoryIsPerBlockAndStartsFilled) {
  constexpr unsigned kBlocks = 48;
  constexpr unsigned kThreads = 96;
  constexpr unsigned kWords = 3000; // not a multiple of the thread count
  constexpr int kRounds = 4;
  std::vector<unsigned> expected(kBlocks * kThreads);
  for (unsigned b = 0; b < kBlocks; ++b) {
    for (unsigned t = 0; t < kThreads; ++t) {
      unsigned sum = 0;
      for (int r = 0; r < kRounds; ++r) {
        for (unsigned w = (t + 1) % kThreads; w < kWords; w += kThreads) {
          sum = sum * 31u + slot_value(b, w, static_cast<unsigned>(r));
        }
      }
      expected[b * kThreads + t] = sum;
    }
  }
  for (ThreadOrder order : kOrders) {
    SCOPED_TRACE(order_name(order));
    std::vector<unsigned> out(kBlocks * kThreads, 0);
    std::vector<unsigned> fill_seen(kBlocks * kThreads, 0);
    launch(kBlocks, kThreads, kWords * sizeof(unsigned),
           [&] { dynamic_smem_rounds(out.data(), fill_seen.data(), kWords, kRounds); }, {4, order});
    EXPECT_EQ(out, expected);
    for (unsigned b = 0; b < kBlocks; ++b) {
      unsigned seen = 0;
      for (unsigned t = 0; t < kThreads; ++t) {
        seen += fill_seen[b * kThreads + t];
      }
      EXPECT_EQ(seen, kWords) << "block " << b << " did not start with the fill pattern";
    }
  }
}

TEST(HostLaunch, DynamicSharedMemoryIsAlignedAndSized) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4096},
                            mmaemu::kernels::host::kMaxDynamicSmemBytes}) {
    std::atomic<unsigned> bad{0};
    launch(2, 4, bytes, [&] {
      const auto address = reinterpret_cast<std::uintptr_t>(mmaemu::kernels::host::dynamic_smem());
      if (address == 0 || address % 16 != 0 ||
          mmaemu::kernels::host::dynamic_smem_size() != bytes) {
        bad.fetch_add(1);
      }
    });
    EXPECT_EQ(bad.load(), 0u) << bytes << " bytes";
  }
}

// Every (block, thread) of a 3-D grid of 3-D blocks runs exactly once, with the indices and
// dimensions CUDA gives it (x fastest).
TEST(HostLaunch, EveryBlockAndThreadRunsExactlyOnce) {
  const dim3 grid(3, 4, 5);
  const dim3 block(4, 3, 2);
  const unsigned blocks = grid.x * grid.y * grid.z;
  const unsigned threads = block.x * block.y * block.z;
  for (unsigned workers : {0u, 1u, 4u, 100u}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    std::vector<std::atomic<unsigned>> runs(blocks * threads);
    std::atomic<unsigned> wrong_dims{0};
    launch(
        grid, block, 0,
        [&] {
          if (blockDim.x != block.x || blockDim.y != block.y || blockDim.z != block.z ||
              gridDim.x != grid.x || gridDim.y != grid.y || gridDim.z != grid.z ||
              threadIdx.x >= block.x || threadIdx.y >= block.y || threadIdx.z >= block.z ||
              blockIdx.x >= grid.x || blockIdx.y >= grid.y || blockIdx.z >= grid.z) {
            wrong_dims.fetch_add(1);
            return;
          }
          const unsigned b = blockIdx.x + grid.x * (blockIdx.y + grid.y * blockIdx.z);
          const unsigned t = threadIdx.x + block.x * (threadIdx.y + block.y * threadIdx.z);
          runs[b * threads + t].fetch_add(1);
          __syncthreads(); // the indices survive a switch
          const unsigned t2 = threadIdx.x + block.x * (threadIdx.y + block.y * threadIdx.z);
          if (t2 != t) {
            wrong_dims.fetch_add(1);
          }
        },
        workers);
    EXPECT_EQ(wrong_dims.load(), 0u);
    for (unsigned i = 0; i < blocks * threads; ++i) {
      ASSERT_EQ(runs[i].load(), 1u) << "block " << i / threads << " thread " << i % threads;
    }
  }
}

TEST(HostLaunch, LargestGridYAndBlockShapesAreAccepted) {
  std::atomic<unsigned> ran{0};
  launch(
      dim3(1, 65535, 1), 1, 0, [&] { ran.fetch_add(1, std::memory_order_relaxed); }, 2);
  EXPECT_EQ(ran.load(), 65535u);
  ran = 0;
  launch(1, dim3(1, 1, 64), 0, [&] { ran.fetch_add(1, std::memory_order_relaxed); });
  launch(1, dim3(1, 1024, 1), 0, [&] { ran.fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(ran.load(), 64u + 1024u);
}

void expect_rejected(dim3 grid, dim3 block, std::size_t smem, const std::string& names) {
  try {
    launch(grid, block, smem, [] {});
    ADD_FAILURE() << "accepted; expected a complaint about " << names;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(HostLaunch, InvalidLaunchesAreRejectedNamingTheValue) {
  expect_rejected(1, dim3(0, 1, 1), 0, "block.x = 0");
  expect_rejected(1, dim3(1025, 1, 1), 0, "block.x = 1025");
  expect_rejected(1, dim3(1, 0, 1), 0, "block.y = 0");
  expect_rejected(1, dim3(1, 1, 65), 0, "block.z = 65");
  expect_rejected(1, dim3(32, 32, 2), 0, "block (32, 32, 2) has 2048 threads");
  expect_rejected(dim3(0, 1, 1), 1, 0, "grid.x = 0");
  expect_rejected(dim3(0x80000000u, 1, 1), 1, 0, "grid.x = 2147483648");
  expect_rejected(dim3(1, 65536, 1), 1, 0, "grid.y = 65536");
  expect_rejected(dim3(1, 1, 0), 1, 0, "grid.z = 0");
  expect_rejected(1, 1, 227 * 1024 + 1, "dynamic_smem_bytes = 232449");
  EXPECT_THROW(launch(1, 1, 0, std::function<void()>{}), std::invalid_argument);
}

// Counts live instances, so the test can see that every thread's stack was unwound.
struct Tracked {
  static inline std::atomic<int> live{0};
  std::vector<int> payload = std::vector<int>(64, 1); // heap memory: LeakSanitizer checks it
  Tracked() { live.fetch_add(1); }
  ~Tracked() { live.fetch_sub(1); }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;
};

// Thread 5 of block 3 and thread 0 of block 7 throw (block 7 before any barrier, block 3 after
// two); every other thread holds a Tracked across three barriers. The exception of the lowest
// block surfaces, whatever the workers' interleaving, and no stack is left un-unwound.
TEST(HostLaunch, AnExceptionInOneThreadSurfacesFromLaunch) {
  for (unsigned workers : {1u, 2u, 4u}) {
    for (ThreadOrder order : kOrders) {
      SCOPED_TRACE(std::to_string(workers) + " workers, " + order_name(order));
      std::vector<std::atomic<unsigned>> finished(16);
      try {
        launch(16, 32, 64,
               [&] {
                 const Tracked held;
                 if (blockIdx.x == 7 && threadIdx.x == 0) {
                   throw std::runtime_error("boom in block 7");
                 }
                 for (int r = 0; r < 3; ++r) {
                   if (blockIdx.x == 3 && threadIdx.x == 5 && r == 2) {
                     throw std::runtime_error("boom in block 3");
                   }
                   __syncthreads();
                 }
                 finished[blockIdx.x].fetch_add(1);
               },
               {workers, order});
        ADD_FAILURE() << "launch returned normally";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "boom in block 3");
      }
      EXPECT_EQ(Tracked::live.load(), 0);
      for (unsigned b = 0; b < 3; ++b) {
        EXPECT_EQ(finished[b].load(), 32u) << "block " << b << " below the failure must finish";
      }
      EXPECT_EQ(finished[3].load(), 0u);
    }
  }
}

TEST(HostLaunch, ANonStandardExceptionIsRethrownAsIs) {
  try {
    launch(2, 4, 0, [] {
      if (blockIdx.x == 1 && threadIdx.x == 2) {
        throw 42;
      }
    });
    ADD_FAILURE() << "launch returned normally";
  } catch (int v) {
    EXPECT_EQ(v, 42);
  }
}

TEST(HostLaunch, LaunchFromInsideAKernelIsALogicError) {
  EXPECT_THROW(launch(1, 2, 0, [] { launch(1, 1, 0, [] {}); }), std::logic_error);
}

TEST(HostLaunch, OutsideALaunchTheCallerIsThreadZeroOfOne) {
  EXPECT_EQ(threadIdx.x, 0u);
  EXPECT_EQ(blockIdx.z, 0u);
  EXPECT_EQ(blockDim.x, 1u);
  EXPECT_EQ(gridDim.y, 1u);
  EXPECT_EQ(mmaemu::kernels::host::dynamic_smem(), nullptr);
  __syncthreads(); // a barrier of one thread returns at once
  launch(1, 1, 0, [] {});
  EXPECT_EQ(current_thread().block_dim.x, 1u); // the launch left nothing behind
}

// Each fiber has its own stack of kFiberStackBytes: a large local array per thread survives
// barriers (overlapping stacks would corrupt one another).
TEST(HostLaunch, EveryThreadHasItsOwnLargeStack) {
  constexpr std::size_t kWords = 96 * 1024 / sizeof(unsigned);
  std::atomic<unsigned> corrupted{0};
  launch(
      2, 64, 0,
      [&] {
        volatile unsigned local[kWords];
        const unsigned id = threadIdx.x * 1000003u + blockIdx.x;
        for (std::size_t i = 0; i < kWords; ++i) {
          local[i] = id + static_cast<unsigned>(i);
        }
        __syncthreads();
        __syncthreads();
        for (std::size_t i = 0; i < kWords; ++i) {
          if (local[i] != id + static_cast<unsigned>(i)) {
            corrupted.fetch_add(1);
            break;
          }
        }
      },
      2);
  EXPECT_EQ(corrupted.load(), 0u);
}

// About 1 KiB of stack per level, so deep enough a recursion runs off a fiber stack.
unsigned deep(unsigned levels) {
  volatile unsigned char frame[1000];
  frame[0] = static_cast<unsigned char>(levels);
  frame[sizeof frame - 1] = 1;
  return levels == 0 ? 0u : deep(levels - 1) + frame[0] + frame[sizeof frame - 1];
}

TEST(HostLaunch, RecursionWithinTheStackRunsAndBeyondItHitsTheGuardPage) {
  std::atomic<unsigned> sum{0};
  launch(1, 4, 0, [&] { sum.fetch_add(deep(100)); });
  EXPECT_GT(sum.load(), 0u);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 1000 levels need about 1 MB: a fault on the guard page, not a silent write over another
  // fiber's stack.
  EXPECT_DEATH(launch(
                   1, 4, 0, [&] { sum.fetch_add(deep(1000)); }, 1),
               "");
}

// Static shared memory is one variable per worker, seen by all threads of the block it runs.
TEST(HostLaunch, StaticSharedMemoryIsSharedWithinABlock) {
  constexpr unsigned kBlocks = 16;
  std::vector<unsigned> out(kBlocks, 0);
  launch(
      kBlocks, 64, 0,
      [&] {
        __shared__ unsigned total;
        if (threadIdx.x == 0) {
          total = 0;
        }
        __syncthreads();
        for (unsigned t = 0; t < blockDim.x; ++t) {
          __syncthreads();
          if (threadIdx.x == t) {
            total += t + blockIdx.x;
          }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
          out[blockIdx.x] = total;
        }
      },
      4);
  for (unsigned b = 0; b < kBlocks; ++b) {
    EXPECT_EQ(out[b], 63u * 64u / 2u + 64u * b) << "block " << b;
  }
}

TEST(HostVectorTypes, Dim3DefaultsAndConvertsLikeCuda) {
  constexpr dim3 d;
  static_assert(d.x == 1 && d.y == 1 && d.z == 1);
  constexpr dim3 e(7);
  static_assert(e.x == 7 && e.y == 1 && e.z == 1);
  constexpr uint3 u = dim3(2, 3, 4);
  static_assert(u.x == 2 && u.y == 3 && u.z == 4);
  constexpr dim3 f = make_uint3(5, 6, 7);
  static_assert(f.x == 5 && f.y == 6 && f.z == 7);
  constexpr uint4 v = make_uint4(1, 2, 3, 4);
  static_assert(v.w == 4 && alignof(uint4) == 16);
  EXPECT_EQ(warpSize, 32);
}

} // namespace
