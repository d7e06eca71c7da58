// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Switching between execution contexts on one OS thread (the threads of a block are fibers).
// On x86-64 ELF a hand-written switch saves the six callee-saved registers and the stack
// pointer (a few nanoseconds; the floating-point control state is per OS thread and shared by
// all fibers); elsewhere, or with MMAEMU_HOST_FIBER_UCONTEXT=1, ucontext (a system call per
// switch for the signal mask). Every TU that includes this must see the same choice.

#include <cstddef>

#if defined(MMAEMU_HOST_FIBER_UCONTEXT) && MMAEMU_HOST_FIBER_UCONTEXT
#define MMAEMU_HOST_FIBER_USE_UCONTEXT 1
#elif defined(__x86_64__) && defined(__ELF__)
#define MMAEMU_HOST_FIBER_USE_UCONTEXT 0
#else
#define MMAEMU_HOST_FIBER_USE_UCONTEXT 1
#endif

#if MMAEMU_HOST_FIBER_USE_UCONTEXT
#include <ucontext.h>
#endif

namespace mmaemu::kernels::host::detail {

// A suspended execution context (valid once saved by swap_context or made by make_context).
struct FiberContext {
#if MMAEMU_HOST_FIBER_USE_UCONTEXT
  ucontext_t uc;
#else
  void* sp = nullptr;
#endif
};

// Names the switch mechanism compiled in ("x86_64-asm" or "ucontext"), for test logs.
const char* fiber_backend() noexcept;

// Prepares `ctx` so that the first swap_context() into it calls entry() on the stack
// [bottom, bottom + bytes). entry() must never return: it leaves by swapping away for good.
void make_context(FiberContext& ctx, std::byte* bottom, std::size_t bytes, void (*entry)());

// Saves the running context into `from` and resumes `to`; returns when a later swap_context
// resumes `from`.
void swap_context(FiberContext& from, FiberContext& to);

} // namespace mmaemu::kernels::host::detail
