// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The call description of a "gemm_call" case (docs/recordings.md): JSON naming each tensor's
// dtype, shape, strides, storage offset and values, parsed strictly. Every number must be an
// integer in range (never a float converted), every key known, every layout inside its
// storage (overflow-checked, tensor.hpp), every created tensor within a size limit.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::harness {

// A call description that breaks the format: one line naming the key path and what is wrong
// ("key 'input.strides[0]': expected an integer, got number 3.2e+42"); echoed text escaped.
class GemmCallError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Tensors the description creates itself (scales, bias, scale_result, out) hold at most this
// many elements; the operands are views of the recorded storages.
inline constexpr std::int64_t kMaxCallTensorElements = std::int64_t{1} << 28;
// JSON nesting deeper than this is refused (a description nests 3 levels).
inline constexpr int kMaxCallJsonDepth = 16;

// The arguments of one recorded call. `call.out` is left null: point it at `out` when
// `has_out` (the pointer would not survive a copy of this struct).
struct GemmCallArgs {
  ScaledMmCall call;
  Tensor out;
  bool has_out = false;
};

// Parses a call description. `input_storage` and `mat2_storage` are the recorded operand
// storages that "input" and "mat2" view (shared, never written by scaled_mm). Throws
// GemmCallError for any bytes that are not a valid description; never another exception
// (std::bad_alloc aside).
GemmCallArgs parse_gemm_call(std::string_view call_json,
                             std::shared_ptr<std::vector<std::uint8_t>> input_storage,
                             std::shared_ptr<std::vector<std::uint8_t>> mat2_storage);

// The call of one recorded output, into `a`: the description parsed again (a fresh out=
// tensor), the operands viewing the recording's storages in place (`c` must outlive `a`), and
// the output's dtype, accumulation and split with `backend`. a.call.out points at a.out when
// the call has one. Throws what parse_gemm_call and parse_splitk throw.
void prepare_output_call(const recordings::GemmCall& c, const recordings::GemmCallOutput& o,
                         const std::string& backend, GemmCallArgs& a);

// Checks every call description of a batch (without copying the storages); throws
// GemmCallError "<file>: gemm_call '<id>': key '...': ..." for the first bad one. For a
// reader that wants a malformed description to make the whole file unreadable.
void check_gemm_calls(const recordings::GemmCallBatch& batch, const std::string& file);

} // namespace mmaemu::harness
