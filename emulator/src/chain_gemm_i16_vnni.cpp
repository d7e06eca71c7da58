// SPDX-License-Identifier: BSD-2-Clause
// The AVX-512 BW kernel of chain_gemm with VNNI (i16_avx512_vnni; its text is
// chain_gemm_i16_tile.inc).

#include <algorithm>
#include <climits>
#include <cstdint>

// GCC 12's _mm512_undefined_* (inside many AVX-512 intrinsics) trips -Wmaybe-uninitialized
// (GCC bug 105593); the warning points into the header, so it is silenced for the header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include "chain_gemm_kernels.hpp"

#define MMAEMU_I16_TARGET MMAEMU_AVX512_TARGET ",avx512vnni"
#define MMAEMU_I16_ENTRY i16_avx512_vnni
#define MMAEMU_I16_VNNI 1
#include "chain_gemm_i16_tile.inc"
