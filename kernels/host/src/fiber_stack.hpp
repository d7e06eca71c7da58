// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Fiber stacks: one mapping per pool, reused across blocks and launches, because mapping and
// protecting a thousand stacks per launch would cost more than the small kernels run.

#include <cstddef>
#include <memory>

namespace mmaemu::kernels::host::detail {

// `count` stacks of `bytes` each (rounded up to whole pages) in one anonymous mapping (lazily
// committed), each with a PROT_NONE guard page below it while the process holds fewer than 8192
// guards and the system grants the mapping (best effort: beyond that, stacks go unguarded).
class StackPool {
public:
  StackPool(std::size_t count, std::size_t bytes);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  std::size_t count() const noexcept { return count_; }
  std::size_t stack_bytes() const noexcept { return stack_bytes_; }
  // Lowest address of stack i (its guard page lies just below).
  std::byte* bottom(std::size_t i) const noexcept;

private:
  std::byte* base_ = nullptr;
  std::size_t count_ = 0;
  std::size_t stack_bytes_ = 0;
  std::size_t stride_ = 0;
  std::size_t mapped_bytes_ = 0;
  std::size_t guard_pages_ = 0;
};

// A pool of at least `count` stacks of `bytes`: a cached one when one fits, else a new one.
std::unique_ptr<StackPool> acquire_stacks(std::size_t count, std::size_t bytes);

// Returns a pool to the cache (a bounded number of stacks is kept; the rest is unmapped).
void release_stacks(std::unique_ptr<StackPool> pool) noexcept;

} // namespace mmaemu::kernels::host::detail
