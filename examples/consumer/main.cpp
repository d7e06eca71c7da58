// SPDX-License-Identifier: BSD-2-Clause
// mmaemu_consumer [RECORDING.h5]: uses the installed emulator and recordings libraries.
// 1. One chain whose result is known by hand: E4M3 1.0 * 1.0 + 1.0 * 2.0 = 3.0 (0x40400000).
// 2. With a recording: its first cases through model::dot (model::dot_codes for fp16, bf16 and
//    tf32 operands), compared with the hardware's bits.
// Exit status 0 when every bit matches.

#include <cstdint>
#include <cstdio>
#include <vector>

#include "mmaemu/emulator/compare_bits.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/recordings/recording.hpp"

int main(int argc, char** argv) {
  using namespace mmaemu;
  // 0x38 is E4M3 1.0 (exponent 7 = bias, no fraction); 0x40 is 2.0.
  const std::vector<std::uint8_t> a = {0x38, 0x38}, b = {0x38, 0x40};
  const std::uint32_t d = model::dot(a, b, 0u, get_preset("hopper"));
  if (compare_bits(0x40400000u, d, Format::fp32) != Mismatch::none) {
    std::printf("dot: expected 0x40400000, got %s\n", decompose_bits(d, Format::fp32).c_str());
    return 1;
  }
  std::printf("dot: 1*1 + 1*2 = %s\n", decompose_bits(d, Format::fp32).c_str());
  if (argc < 2)
    return 0;

  const recordings::Recording rec = recordings::read_recording(argv[1]);
  std::size_t checked = 0, differ = 0;
  for (const auto& batch : rec.mma) {
    const Preset& p = get_preset(batch.preset);
    for (std::size_t i = 0; i < batch.size() && i < 100; ++i) {
      std::uint32_t got;
      if (batch.wide()) {
        // fp16, bf16 or tf32 codes; an fp16 accumulator's c and expect are binary32 patterns
        // of fp16 values.
        const std::span<const std::uint32_t> ai(batch.a_wide.data() + i * batch.K, batch.K);
        const std::span<const std::uint32_t> bi(batch.b_wide.data() + i * batch.K, batch.K);
        const bool half = batch.acc == Format::fp16;
        const std::uint32_t c =
            half ? encode_binary32_bits(Format::fp16, batch.c[i], Overflow::infinity) : batch.c[i];
        got = model::dot_codes(ai, bi, c, p, {batch.fmt_a, batch.fmt_b}, batch.acc);
        if (half)
          got = encode_exact_bits(Format::fp32, decode_bits(Format::fp16, got), Overflow::infinity);
      } else {
        const std::span<const std::uint8_t> ai(batch.a.data() + i * batch.K, batch.K);
        const std::span<const std::uint8_t> bi(batch.b.data() + i * batch.K, batch.K);
        got = model::dot(ai, bi, batch.c[i], p, {batch.fmt_a, batch.fmt_b});
      }
      ++checked;
      if (compare_bits(batch.expect[i], got, Format::fp32) != Mismatch::none)
        ++differ;
    }
  }
  std::printf("%s: %zu cases checked, %zu differ\n", argv[1], checked, differ);
  return (checked > 0 && differ == 0) ? 0 : 1;
}
