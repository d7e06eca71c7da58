// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// model::dot: one tensor-core chain per row, d = c + a_0 b_0 + ... in blocks of the preset's
// size (block-fma.md, "the chain over K"), with the non-finite rule around it.

#include <cstddef>
#include <cstdint>
#include <span>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::model {

struct FormatPair {
  Format a = Format::e4m3;
  Format b = Format::e4m3;
};

// The chain over K = a.size() FP8 codes from the binary32 accumulator input c_bits
// (+0 = 0u for a GEMM chain). K need not be a multiple of nfma (zero pairs pad it); K = 0
// returns c_bits. Non-finite rule: a NaN operand or c, Inf * 0, or +Inf meeting -Inf give the
// canonical NaN 0x7FFFFFFF; otherwise an Inf operand or c gives an Inf of its sign.
// Throws ValueError if a and b differ in length or a format is not FP8.
std::uint32_t dot(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                  std::uint32_t c_bits, const Preset& p, FormatPair fmt = {});

// Which code computes a chain. `automatic`: the vectorised binary32 kernel (dot_f32.cpp) where
// it applies to the preset, the formats and this CPU, else the block-FMA model; `model`: always
// the block-FMA model (block_fma.cpp), the arithmetic of block-fma.md as the mutation matrix
// flips it. The two give the same bits (test_dot_f32.cpp); the replay computes both, so that a
// recording judges the model's decisions as well as the code users run.
enum class ChainPath { automatic, model };

// `rows` chains of length K: a and b are [rows][K] row-major, c is [rows] binary32 bits or
// null (+0), out is [rows].
void dot_rows(const std::uint8_t* a, const std::uint8_t* b, const std::uint32_t* c,
              std::size_t rows, std::size_t K, const Preset& p, FormatPair fmt, std::uint32_t* out,
              ChainPath path = ChainPath::automatic);

} // namespace mmaemu::model
