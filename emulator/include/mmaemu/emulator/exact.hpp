// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// An exactly represented floating-point value: (-1)^neg * sig * 2^exp.

#include <cstdint>

namespace mmaemu {

enum class ValueClass : std::uint8_t { zero, finite, inf, nan };

struct Exact {
  bool neg = false;
  ValueClass cls = ValueClass::zero;
  std::uint64_t sig = 0; // finite: > 0
  int exp = 0;           // finite: value = sig * 2^exp
};

} // namespace mmaemu
