// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the gemm_call description parser (harness::parse_gemm_call, what the
// replay of a "gemm_call" recording reads) on arbitrary bytes, then the call itself on tiny
// recorded storages (input 256 bytes, mat2 1024 bytes of FP8 codes, NaN and Inf included).
//
// The whole input is the description's JSON. The output options a recording would add come
// from the input's length: out_dtype (one of five, or the default) and use_fast_accum.
// The call is run only when it is small (M*N*K <= 2^16): a description may validly broadcast
// a tiny storage to a large shape, whose cost is not what this target looks for.
//
// Each description is parsed against a call budget derived from the input's length (a file
// of 0 to 16 MiB, 1 to 4 split-K parts): over-budget descriptions are GemmCallErrors too.
//
// Documented exceptions: GemmCallError from the parser, the mmaemu error classes
// (MmaemuError) from scaled_mm, std::bad_alloc. Anything else escaping, a crash or a sanitizer
// report (an out-of-bounds read of a storage above all) is a finding. So is an error message
// of more than one line, and a result whose shape is not [M, N].

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <vector>

#include "mmaemu/emulator/warnings.hpp"
#include "mmaemu/harness/gemm_call.hpp"

namespace {

std::shared_ptr<std::vector<std::uint8_t>> storage(std::size_t n, std::uint8_t step) {
  auto s = std::make_shared<std::vector<std::uint8_t>>(n);
  for (std::size_t i = 0; i < n; ++i)
    (*s)[i] = static_cast<std::uint8_t>(i * step); // every code, NaN and Inf among them
  return s;
}

bool one_line(std::string_view m) {
  return m.find('\n') == std::string_view::npos && m.size() <= 4096;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = [] {
    mmaemu::set_warning_sink([](const mmaemu::Warning&) {});
    return true;
  }();
  (void)quiet;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mmaemu::harness::GemmCallArgs a;
  try {
    // The budget of a file of 0 to 16 MiB with 1 to 4 split-K parts, from the input's length,
    // so that the budget checks (docs/recordings.md, "Budgets") see different limits.
    const mmaemu::harness::CallBudget budget{(size % 5) << 22, 1 + size % 4};
    const auto in = storage(256, 7), m2 = storage(1024, 13);
    const mmaemu::harness::GemmCallDesc d =
        mmaemu::harness::parse_gemm_call_desc(text, in->size(), m2->size(), budget);
    a = mmaemu::harness::make_call_args(d, in, m2);
  } catch (const mmaemu::harness::GemmCallError& e) {
    if (!one_line(e.what()))
      __builtin_trap();
    return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  mmaemu::ScaledMmCall& c = a.call;
  if (a.has_out)
    c.out = &a.out;
  static const std::optional<mmaemu::Format> outs[] = {std::nullopt,         mmaemu::Format::fp32,
                                                       mmaemu::Format::bf16, mmaemu::Format::fp16,
                                                       mmaemu::Format::e4m3, mmaemu::Format::e5m2};
  c.out_dtype = outs[size % 6];
  c.use_fast_accum = (size / 6) % 2 == 0;
  c.splitk = mmaemu::SplitKRequest::explicit_split(1);
  c.threads = 1;
  const auto dim = [](const mmaemu::Tensor& t, int d) { return t.dim() > d ? t.size(d) : 0; };
  const std::int64_t M = dim(c.input, 0), K = dim(c.input, 1), N = dim(c.mat2, 1);
  std::int64_t mk = 0, mnk = 0, mn = 0;
  if (__builtin_mul_overflow(M, K, &mk) || __builtin_mul_overflow(mk, N, &mnk) || mnk > 65536 ||
      __builtin_mul_overflow(M, N, &mn) || mn > 65536)
    return 0;
  try {
    const mmaemu::Tensor r = mmaemu::scaled_mm(c);
    if (r.dim() != 2 || r.size(0) != M || r.size(1) != N)
      __builtin_trap();
  } catch (const mmaemu::MmaemuError& e) {
    if (!one_line(e.what()))
      __builtin_trap();
  } catch (const std::bad_alloc&) {
  }
  return 0;
}
