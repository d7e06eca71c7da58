// SPDX-License-Identifier: BSD-2-Clause
#include "fiber_context.hpp"

#include <cerrno>
#include <cstdint>
#include <system_error>

#if !MMAEMU_HOST_FIBER_USE_UCONTEXT
// mmaemu_host_fiber_switch(save_sp, load_sp): pushes the System V callee-saved registers,
// stores the stack pointer in *save_sp, loads load_sp and pops the same registers from there;
// the `ret` then continues wherever that stack was saved (or enters a fresh fiber's entry
// function, see make_context). Caller-saved registers, including every SSE register, are the
// compiler's business because this is an ordinary call.
asm(R"(
  .text
  .p2align 4
  .globl mmaemu_host_fiber_switch
  .hidden mmaemu_host_fiber_switch
  .type mmaemu_host_fiber_switch, @function
mmaemu_host_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size mmaemu_host_fiber_switch, .-mmaemu_host_fiber_switch
)");

extern "C" void mmaemu_host_fiber_switch(void** save_sp, void* load_sp);
#endif

namespace mmaemu::kernels::host::detail {

#if MMAEMU_HOST_FIBER_USE_UCONTEXT

const char* fiber_backend() noexcept {
  return "ucontext";
}

void make_context(FiberContext& ctx, std::byte* bottom, std::size_t bytes, void (*entry)()) {
  if (getcontext(&ctx.uc) != 0) {
    throw std::system_error(errno, std::generic_category(), "getcontext");
  }
  ctx.uc.uc_stack.ss_sp = bottom;
  ctx.uc.uc_stack.ss_size = bytes;
  ctx.uc.uc_link = nullptr;
  makecontext(&ctx.uc, entry, 0);
}

void swap_context(FiberContext& from, FiberContext& to) {
  if (swapcontext(&from.uc, &to.uc) != 0) {
    throw std::system_error(errno, std::generic_category(), "swapcontext");
  }
}

#else

const char* fiber_backend() noexcept {
  return "x86_64-asm";
}

void make_context(FiberContext& ctx, std::byte* bottom, std::size_t bytes, void (*entry)()) {
  // The first switch pops six zero registers (rbp = 0 ends frame-pointer walks) and returns
  // into entry with rsp = 8 mod 16, as if entry had been called; its own return slot holds 0
  // so unwinders stop there.
  const std::uintptr_t top =
      (reinterpret_cast<std::uintptr_t>(bottom) + bytes) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uintptr_t*>(top - 8 * sizeof(std::uintptr_t));
  for (int i = 0; i < 6; ++i) {
    frame[i] = 0;
  }
  frame[6] = reinterpret_cast<std::uintptr_t>(entry);
  frame[7] = 0;
  ctx.sp = frame;
}

void swap_context(FiberContext& from, FiberContext& to) {
  mmaemu_host_fiber_switch(&from.sp, to.sp);
}

#endif

} // namespace mmaemu::kernels::host::detail
