// SPDX-License-Identifier: BSD-2-Clause
#include "fiber_stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <vector>

namespace mmaemu::kernels::host::detail {

namespace {

// At most this many stacks stay mapped between launches (2 GiB of address space at 256 KiB,
// of which only the pages the kernels touched are committed).
constexpr std::size_t kMaxCachedStacks = 8192;

// At most this many guard pages in the process: each splits the mapping (two entries against
// vm.max_map_count, 65530 by default), and the rest of the process needs mappings too.
constexpr std::size_t kMaxGuardPages = 8192;
std::atomic<std::size_t> g_guard_pages{0};

std::size_t page_bytes() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::size_t>(page) : 4096;
}

struct Cache {
  std::mutex mutex;
  std::vector<std::unique_ptr<StackPool>> pools;
};

Cache& cache() {
  static Cache c;
  return c;
}

} // namespace

StackPool::StackPool(std::size_t count, std::size_t bytes) : count_(count) {
  const std::size_t page = page_bytes();
  stack_bytes_ = (bytes + page - 1) / page * page;
  stride_ = stack_bytes_ + page;
  mapped_bytes_ = stride_ * count;
  void* p = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(), "mmap of fiber stacks");
  }
  base_ = static_cast<std::byte*>(p);
  for (std::size_t i = 0; i < count_; ++i) {
    if (g_guard_pages.fetch_add(1) >= kMaxGuardPages) {
      g_guard_pages.fetch_sub(1);
      break; // the remaining stacks go unguarded
    }
    if (mprotect(base_ + i * stride_, page, PROT_NONE) != 0) {
      g_guard_pages.fetch_sub(1);
      break; // out of mappings after all
    }
    ++guard_pages_;
  }
}

StackPool::~StackPool() {
  munmap(base_, mapped_bytes_);
  g_guard_pages.fetch_sub(guard_pages_);
}

std::byte* StackPool::bottom(std::size_t i) const noexcept {
  return base_ + i * stride_ + (stride_ - stack_bytes_);
}

std::unique_ptr<StackPool> acquire_stacks(std::size_t count, std::size_t bytes) {
  {
    Cache& c = cache();
    const std::lock_guard<std::mutex> lock(c.mutex);
    auto best = c.pools.end();
    for (auto it = c.pools.begin(); it != c.pools.end(); ++it) {
      if ((*it)->count() >= count && (*it)->stack_bytes() >= bytes &&
          (best == c.pools.end() || (*it)->count() < (*best)->count())) {
        best = it;
      }
    }
    if (best != c.pools.end()) {
      std::unique_ptr<StackPool> pool = std::move(*best);
      c.pools.erase(best);
      return pool;
    }
  }
  return std::make_unique<StackPool>(count, bytes);
}

void release_stacks(std::unique_ptr<StackPool> pool) noexcept {
  if (!pool) {
    return;
  }
  Cache& c = cache();
  const std::lock_guard<std::mutex> lock(c.mutex);
  std::size_t cached = 0;
  for (const auto& p : c.pools) {
    cached += p->count();
  }
  if (cached + pool->count() > kMaxCachedStacks) {
    return; // unmapped by the unique_ptr
  }
  try {
    c.pools.push_back(std::move(pool));
  } catch (...) {
    // No room to remember it: dropping the pool (unmapping it) is correct, only slower later.
  }
}

} // namespace mmaemu::kernels::host::detail
