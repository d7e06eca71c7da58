// SPDX-License-Identifier: BSD-2-Clause
// Warp-level tensor-core MMA as a kernel of this folder spells it: one function per PTX
// instruction, with the instruction's fragments as register arrays (the PTX ISA layouts;
// kernels/host/include/mmaemu/kernels/host/mma.hpp lists them). On the device (nvcc, NVRTC)
// each is the inline PTX `mma.sync.aligned...`; compiled as C++ against the host shim
// (MMAEMU_HOST_SHIM, cuda_shim.hpp) each is the shim's exact model of that instruction on the
// architecture the launch emulates (sm_89 unless told otherwise: docs/backends.md).
//
// a, b: .f16x2 / .bf16x2 registers (the element of lower index in bits 0..15); c, d: four
// floats (f32 accumulators) or two .f16x2 registers (f16 accumulators). d may be c. All 32
// lanes of the warp must call the same function (mma.sync is .aligned). Device-only, no
// standard headers (NVRTC has none).
#pragma once

#if defined(MMAEMU_HOST_SHIM)

__device__ __forceinline__ void mmaemu_mma_m16n8k16_f32_f16(float* d, const unsigned int* a,
                                                            const unsigned int* b, const float* c) {
  ::mmaemu::kernels::host::mma_sync_m16n8k16_f32_f16(d, a, b, c);
}
__device__ __forceinline__ void mmaemu_mma_m16n8k16_f32_bf16(float* d, const unsigned int* a,
                                                             const unsigned int* b,
                                                             const float* c) {
  ::mmaemu::kernels::host::mma_sync_m16n8k16_f32_bf16(d, a, b, c);
}
__device__ __forceinline__ void mmaemu_mma_m16n8k16_f16_f16(unsigned int* d, const unsigned int* a,
                                                            const unsigned int* b,
                                                            const unsigned int* c) {
  ::mmaemu::kernels::host::mma_sync_m16n8k16_f16_f16(d, a, b, c);
}
__device__ __forceinline__ void mmaemu_mma_m16n8k8_f32_f16(float* d, const unsigned int* a,
                                                           const unsigned int* b, const float* c) {
  ::mmaemu::kernels::host::mma_sync_m16n8k8_f32_f16(d, a, b, c);
}
__device__ __forceinline__ void mmaemu_mma_m16n8k8_f32_bf16(float* d, const unsigned int* a,
                                                            const unsigned int* b, const float* c) {
  ::mmaemu::kernels::host::mma_sync_m16n8k8_f32_bf16(d, a, b, c);
}
__device__ __forceinline__ void mmaemu_mma_m16n8k8_f16_f16(unsigned int* d, const unsigned int* a,
                                                           const unsigned int* b,
                                                           const unsigned int* c) {
  ::mmaemu::kernels::host::mma_sync_m16n8k8_f16_f16(d, a, b, c);
}

#else // the device: inline PTX (sm_80 and later)

__device__ __forceinline__ void mmaemu_mma_m16n8k16_f32_f16(float* d, const unsigned int* a,
                                                            const unsigned int* b, const float* c) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void mmaemu_mma_m16n8k16_f32_bf16(float* d, const unsigned int* a,
                                                             const unsigned int* b,
                                                             const float* c) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void mmaemu_mma_m16n8k16_f16_f16(unsigned int* d, const unsigned int* a,
                                                            const unsigned int* b,
                                                            const unsigned int* c) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
               "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};\n"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),
                 "r"(c[1]));
}
__device__ __forceinline__ void mmaemu_mma_m16n8k8_f32_f16(float* d, const unsigned int* a,
                                                           const unsigned int* b, const float* c) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void mmaemu_mma_m16n8k8_f32_bf16(float* d, const unsigned int* a,
                                                            const unsigned int* b, const float* c) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
__device__ __forceinline__ void mmaemu_mma_m16n8k8_f16_f16(unsigned int* d, const unsigned int* a,
                                                           const unsigned int* b,
                                                           const unsigned int* c) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 "
               "{%0, %1}, {%2, %3}, {%4}, {%5, %6};\n"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
}

#endif
