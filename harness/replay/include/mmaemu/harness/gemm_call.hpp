// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The call description of a "gemm_call" case (docs/recordings.md): JSON naming each tensor's
// dtype, shape, strides, storage offset and values, parsed strictly. Every number must be an
// integer in range (never a float converted), every key known, every layout inside its
// storage (overflow-checked, tensor.hpp), every created tensor within a size limit.

#include <cstdint>
#include <memory>
#include <optional>
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

// An operand of the description: a view of a recorded storage, checked against its size.
struct CallOperand {
  Format dtype = Format::e4m3;
  std::vector<std::int64_t> shape, strides;
  std::int64_t offset = 0;
};

// A tensor the description creates (scale_a, scale_b, bias, scale_result, out), checked but
// not allocated: make() gives a fresh tensor of it each time (a fresh out= for every output).
struct CreatedTensor {
  std::string where; // its key, for messages
  Format dtype = Format::fp32;
  std::vector<std::int64_t> shape;
  bool laid_out = false;             // strides or offset given: a storage of storage_elems
  std::vector<std::int64_t> strides; // when laid_out
  std::int64_t offset = 0;
  std::int64_t storage_elems = 0;
  std::vector<std::uint32_t> bits;   // "bits": one code per element, row-major
  std::optional<std::uint32_t> fill; // "fill"
  // A scale (scale_a, scale_b, scale_result) of other than one element: scaled_mm's rules
  // refuse it from its shape before reading it, so make() gives a meta tensor of its shape
  // and nothing is allocated (a 2^28-element scale would cost 1 GiB); bits are not kept.
  bool shape_only = false;

  Tensor make() const;
  // The bytes make() allocates.
  std::uint64_t bytes() const;
};

// A call description parsed once: the typed call every later step uses (no JSON is read
// again). Everything the format checks has been checked.
struct GemmCallDesc {
  CallOperand input, mat2;
  CreatedTensor scale_a, scale_b;
  std::optional<CreatedTensor> bias, scale_result, out;
  std::string profile;
  bool input_requires_grad = false, mat2_requires_grad = false;
};

// The budget of one call (mmaemu/recordings/budget.hpp): the size of the file it came from
// and the most split-K parts of its outputs.
struct CallBudget {
  std::uint64_t file_bytes = 0;
  std::uint64_t split_parts = 1;
};

// Parses a call description whose operands view storages of `input_bytes` and `mat2_bytes`
// bytes. Throws GemmCallError for any bytes that are not a valid description; never another
// exception (std::bad_alloc aside). Nothing of the call's tensors is allocated. The call's
// cost is checked here, before anything is allocated: M * N * K of its operands' shapes at
// most recordings::kMaxGemmMacs (2^36, as kind gemm), and what it allocates when it runs
// (recordings::gemm_work_bytes of its sizes and created tensors) at most
// recordings::work_budget(budget.file_bytes); else GemmCallError "over budget: ...".
GemmCallDesc parse_gemm_call_desc(std::string_view call_json, std::size_t input_bytes,
                                  std::size_t mat2_bytes, const CallBudget& budget = {});

// The call's arguments from a parsed description: the operands view `input_storage` and
// `mat2_storage` (shared, never written by scaled_mm), the created tensors are fresh.
GemmCallArgs make_call_args(const GemmCallDesc& d,
                            std::shared_ptr<std::vector<std::uint8_t>> input_storage,
                            std::shared_ptr<std::vector<std::uint8_t>> mat2_storage);

// parse_gemm_call_desc (budget: a file as large as the two storages), then make_call_args.
GemmCallArgs parse_gemm_call(std::string_view call_json,
                             std::shared_ptr<std::vector<std::uint8_t>> input_storage,
                             std::shared_ptr<std::vector<std::uint8_t>> mat2_storage);

// The typed call of a recorded call of a file of `file_bytes` bytes (its budget, with the
// split-K parts of its outputs); throws GemmCallError "<file>: gemm_call '<id>': key
// '...': ..." or "...: over budget: ...".
GemmCallDesc parse_recorded_call(const recordings::GemmCall& c, const std::string& file,
                                 std::uint64_t file_bytes = 0);

// Every call of a batch, each parsed once (parse_recorded_call); throws for the first bad one.
// For a reader that wants a malformed description to make the whole file unreadable.
std::vector<GemmCallDesc> parse_gemm_calls(const recordings::GemmCallBatch& batch,
                                           const std::string& file, std::uint64_t file_bytes = 0);

// The call of one recorded output, into `a`, from the call's typed description `d`: a fresh
// out= tensor, the operands viewing the recording's storages in place (`c` must outlive `a`),
// and the output's dtype, accumulation and split with `backend`. a.call.out points at a.out
// when the call has one. Throws what parse_splitk throws.
void prepare_output_call(const recordings::GemmCall& c, const GemmCallDesc& d,
                         const recordings::GemmCallOutput& o, const std::string& backend,
                         GemmCallArgs& a);

// How many descriptions this process has parsed (parse_gemm_call_desc): the tests that check
// that a replay parses each call once count them.
std::uint64_t gemm_call_parse_count();

} // namespace mmaemu::harness
