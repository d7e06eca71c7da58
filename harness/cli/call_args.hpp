// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The scaled_mm call options shared by `explain` and `gemm`: formats, scales, profile,
// split-K, backend; parsed into a ScaledMmCall on operands of the standard layout.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "mmaemu/emulator/scaled_mm.hpp"

namespace mmaemu::cli {

struct CallArgs {
  std::int64_t M = 0, N = 0, K = 0;
  std::string a = "e4m3", b = "e4m3";
  std::string out; // empty: torch's default (input's dtype)
  bool fast = false;
  std::string scale_a = "1", scale_b = "1", scale_result;
  std::string profile;
  std::string splitk = "auto";
  std::string backend = "auto";
  std::string device = "auto";
};

// Adds --a --b --out --fast --scale-a --scale-b --scale-result --profile --splitk --backend
// --device to a command.
void add_call_options(CLI::App& cmd, CallArgs& args);

// A decimal value (or 0x-prefixed binary32 bits) as binary32 bits; ValueError naming `what`.
std::uint32_t parse_f32(const std::string& text, const std::string& what);

// A format name of an FP8 operand or an output dtype; ValueError naming `what`.
Format parse_dtype(const std::string& text, const std::string& what);

// The call on operands: input [M, K] row-major, mat2 [K, N] column-major (the transposed
// view of b [N, K]). Codes are taken from a_rows / b_rows when given, else the operands are
// meta tensors (shapes only, nothing allocated: for explain). ValueError first if M, N, K are
// over the emulator's limits (check_gemm_size), naming the size.
ScaledMmCall make_call(const CallArgs& args, const Tensor* a_rows = nullptr,
                       const Tensor* b_rows = nullptr);

} // namespace mmaemu::cli
