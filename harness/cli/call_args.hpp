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

// The --backend help, from the kernel registry: "auto | reference | cuda | cuda:<v1|v4|h1|h4>"
// and the known kernels this build lacks, with the reason.
std::string backend_help();

// A usage error (ValueError naming `option` and the value) unless `name` is auto, reference,
// cuda or cuda:<a kernel the registry knows>. A known kernel this build lacks passes: asking
// for it is "unavailable" (BackendUnavailableError, exit 4) when the call runs. For "auto",
// $MMAEMU_BACKEND is checked the same way.
void check_backend_name(const std::string& option, const std::string& name);

// The backend that --device `device` with --backend `backend` means, one meaning for every
// subcommand and for `info`: "cpu" is the reference; "cuda" and "cuda:0" are a CUDA backend
// (the one --backend names, else the best kernel of the call's preset); "auto" is --backend.
// Operands always live on the host: a CUDA backend copies them to device 0 per call.
// ValueError for a bad device or a contradiction (--device cpu --backend cuda:h4);
// BackendUnavailableError when the device is not there, with the reason `info` prints.
std::string backend_for_device(const std::string& device, const std::string& backend);

// A CUDA device named on the command line (info, selftest, bench kernels): "cuda" (device 0),
// "cuda:N" or "N", as --device of explain and gemm spells it. ValueError naming `option`.
int parse_cuda_device(const std::string& option, const std::string& text);

// For --kernels of selftest and bench kernels: the message for the first name that is a known
// kernel this build lacks ("--kernels: v9 is unavailable: ..."; exit 4, as --backend cuda:v9),
// or empty. Names that are not kernels at all are left to the command (a usage error).
std::string absent_kernel_message(const std::vector<std::string>& names);

// The SplitKUnknownError message with the command line's spelling of the fix first.
std::string splitk_unknown_message(const std::string& message);

// A decimal value (or 0x-prefixed binary32 bits) as binary32 bits; ValueError naming `what`.
std::uint32_t parse_f32(const std::string& text, const std::string& what);

// A format name of an FP8 operand or an output dtype; ValueError naming `what`.
Format parse_dtype(const std::string& text, const std::string& what);

// The call on operands: input [M, K] row-major, mat2 [K, N] column-major (the transposed
// view of b [N, K]). Codes are taken from a_rows / b_rows when given, else the operands are
// meta tensors (shapes only, nothing allocated: for explain). ValueError first if M, N, K are
// over the emulator's limits (check_gemm_size), naming the size; then ValueError for every
// usage error of the options (a dtype, scale, profile, split-K or backend name that does not
// exist), so that what is left to the call is what the call itself would raise; and
// BackendUnavailableError from backend_for_device.
ScaledMmCall make_call(const CallArgs& args, const Tensor* a_rows = nullptr,
                       const Tensor* b_rows = nullptr);

} // namespace mmaemu::cli
