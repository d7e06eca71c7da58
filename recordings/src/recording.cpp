// SPDX-License-Identifier: BSD-2-Clause
// The recording model's own rules: the case count of a recording and the consistency of a batch
// (check_batch), which the writer (recording_write.cpp), the reader (recording_read.cpp) and the
// wire decoder (recording_wire.cpp) all apply. This file calls nothing else of the library, so
// that calls go one way: recording_read.cpp -> recording_wire.cpp -> recording.cpp.

#include "mmaemu/recordings/recording.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/support/text.hpp"
#include "recording_layout.hpp"

namespace mmaemu::recordings {

using detail::checked_mul;
using detail::hex32;
using support::printable;

std::size_t Recording::case_count() const {
  std::size_t n = 0;
  for (const auto& b : mma)
    n += b.size();
  for (const auto& g : gemm)
    n += g.cases.size();
  for (const auto& g : gemm_call) {
    for (const auto& c : g.calls)
      n += c.outputs.size();
  }
  return n;
}

void check_batch(const MmaBatch& b, const std::string& where) {
  const std::size_t n = b.ids.size();
  if (b.name.empty() || b.name.find('/') != std::string::npos) {
    throw RecordingError(where + ": batch name '" + printable(b.name) +
                         "' must be non-empty without '/'");
  }
  std::uint64_t nk = 0;
  const bool sizes =
      checked_mul(n, b.K, nk) && b.c.size() == n && b.expect.size() == n &&
      (b.wide() ? b.a_wide.size() == nk && b.b_wide.size() == nk && b.a.empty() && b.b.empty()
                : b.a.size() == nk && b.b.size() == nk && b.a_wide.empty() && b.b_wide.empty());
  if (!sizes) {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has inconsistent sizes");
  }
  // Operands are FP8 codes (any pair), or one of fp16, bf16, tf32 for both.
  const bool formats_ok =
      (is_fp8(b.fmt_a) && is_fp8(b.fmt_b)) || (is_hmma_input(b.fmt_a) && b.fmt_a == b.fmt_b);
  if (!formats_ok) {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has operand formats " +
                         format_name(b.fmt_a) + " x " + format_name(b.fmt_b) +
                         " (expected FP8, or fp16, bf16 or tf32 for both)");
  }
  if (b.acc != Format::fp32 && !(b.acc == Format::fp16 && b.fmt_a == Format::fp16)) {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has accumulator " +
                         format_name(b.acc) + " (expected fp32, or fp16 for fp16 operands)");
  }
  if (b.acc == Format::fp16) {
    // c and expect are binary32 patterns of fp16 values (any NaN is taken).
    for (const auto* v : {&b.c, &b.expect}) {
      for (std::uint32_t bits : *v) {
        const Exact x = decode_bits(Format::fp32, bits);
        if (x.cls == ValueClass::nan)
          continue;
        const std::uint32_t h = encode_exact_bits(Format::fp16, x, Overflow::infinity);
        if (encode_exact_bits(Format::fp32, decode_bits(Format::fp16, h), Overflow::infinity) !=
            bits) {
          throw RecordingError(where + ": batch '" + printable(b.name) +
                               "' has an fp16 accumulator but holds " + hex32(bits) +
                               ", not an fp16 value");
        }
      }
    }
  }
  if (b.wide()) {
    // Codes beyond the format's width would be silently masked by the model.
    const std::uint32_t mask = spec(b.fmt_a).code_mask();
    for (const auto* v : {&b.a_wide, &b.b_wide}) {
      for (std::uint32_t code : *v) {
        if ((code & ~mask) != 0) {
          throw RecordingError(where + ": batch '" + printable(b.name) + "' holds code " +
                               std::to_string(code) + ", wider than a " + format_name(b.fmt_a) +
                               " code");
        }
      }
    }
  }
  if (b.c_policy != "from_file" && b.c_policy != "zero") {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has c_policy '" +
                         printable(b.c_policy) + "' (expected from_file or zero)");
  }
  // IDs name cases in logs and reports: "<set>/<rest>", printable ASCII without spaces.
  const std::string prefix = b.name + "/";
  std::set<std::string> seen;
  for (const auto& id : b.ids) {
    const bool printable_id = std::all_of(id.begin(), id.end(), [](char ch) {
      return static_cast<unsigned char>(ch) > 0x20 && static_cast<unsigned char>(ch) < 0x7F;
    });
    if (id.size() <= prefix.size() || id.compare(0, prefix.size(), prefix) != 0 || !printable_id) {
      throw RecordingError(where + ": batch '" + printable(b.name) + "': case id '" +
                           printable(id) + "' is not '" + printable(b.name) +
                           "/...' in printable ASCII without spaces");
    }
    if (!seen.insert(id).second) {
      throw RecordingError(where + ": duplicate case id '" + printable(id) + "'");
    }
  }
}

} // namespace mmaemu::recordings
