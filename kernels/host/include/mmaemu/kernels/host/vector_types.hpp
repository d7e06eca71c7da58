// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// CUDA's built-in vector types (vector_types.h) for kernel sources compiled as host C++: same
// names, members, sizes and alignments, in the global namespace as in CUDA, so a kernel's
// `dim3`, `uint4` loads or `make_uint2(...)` mean the same thing on both sides.

struct uint3 {
  unsigned int x, y, z;
};

// A launch dimension: every component defaults to 1, and a uint3 converts both ways (CUDA).
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

struct int3 {
  int x, y, z;
};
struct alignas(4) char4 {
  signed char x, y, z, w;
};
struct alignas(4) uchar4 {
  unsigned char x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(8) uint2 {
  unsigned int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) ulonglong2 {
  unsigned long long x, y;
};

static_assert(sizeof(uint3) == 12 && alignof(uint3) == 4);
static_assert(sizeof(dim3) == 12 && alignof(dim3) == 4);
static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4);
static_assert(sizeof(uint2) == 8 && alignof(uint2) == 8);
static_assert(sizeof(uint4) == 16 && alignof(uint4) == 16);
static_assert(sizeof(float4) == 16 && alignof(float4) == 16);
static_assert(sizeof(ulonglong2) == 16 && alignof(ulonglong2) == 16);

constexpr uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
  return {x, y, z};
}
constexpr int3 make_int3(int x, int y, int z) {
  return {x, y, z};
}
constexpr char4 make_char4(signed char x, signed char y, signed char z, signed char w) {
  return {x, y, z, w};
}
constexpr uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) {
  return {x, y, z, w};
}
constexpr int2 make_int2(int x, int y) {
  return {x, y};
}
constexpr uint2 make_uint2(unsigned int x, unsigned int y) {
  return {x, y};
}
constexpr int4 make_int4(int x, int y, int z, int w) {
  return {x, y, z, w};
}
constexpr uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  return {x, y, z, w};
}
constexpr float2 make_float2(float x, float y) {
  return {x, y};
}
constexpr float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}
constexpr ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) {
  return {x, y};
}
