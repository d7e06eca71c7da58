// SPDX-License-Identifier: BSD-2-Clause
// The AVX-512 BW kernel of chain_gemm with VNNI (i16_avx512_vnni; its text is
// chain_gemm_i16_tile.inc).

#define MMAEMU_I16_TARGET MMAEMU_AVX512_TARGET ",avx512vnni"
#define MMAEMU_I16_ENTRY i16_avx512_vnni
#define MMAEMU_I16_VNNI 1
#include "chain_gemm_i16_tile.inc"
