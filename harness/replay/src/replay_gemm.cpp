// SPDX-License-Identifier: BSD-2-Clause
// Replay of GEMM-level recordings: kinds "gemm" (normalised calls) and "gemm_call" (exact
// recorded calls with their layouts, each described once by its typed call).

#include <algorithm>
#include <map>

#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/harness/replay.hpp"
#include "mmaemu/support/text.hpp"
#include "set_booking.hpp"

namespace mmaemu::harness {

namespace {

// Compares every output; fills the case result from the first mismatch.
void compare_outputs(CaseResult& r, const std::vector<std::uint32_t>& expect, const Tensor& actual,
                     Format out) {
  if (static_cast<std::int64_t>(expect.size()) != actual.numel()) {
    r.outcome = Outcome::fail;
    r.why = Mismatch::value;
    r.message = "result has " + std::to_string(actual.numel()) + " elements, the recording " +
                std::to_string(expect.size());
    return;
  }
  std::size_t counts[4] = {0, 0, 0, 0};
  bool first = true;
  for (std::size_t i = 0; i < expect.size(); ++i) {
    const std::uint32_t got = actual.bits_flat(static_cast<std::int64_t>(i));
    const Mismatch m = compare_bits(expect[i], got, out, NanPolicy::bits);
    if (m == Mismatch::none)
      continue;
    ++counts[static_cast<int>(m)];
    if (first) {
      r.expected = expect[i];
      r.actual = got;
      r.why = m;
      r.message = "first mismatch at output " + std::to_string(i);
      first = false;
    }
  }
  if (first) {
    r.outcome = Outcome::pass;
    return;
  }
  r.outcome = Outcome::fail;
  r.message += " (" + std::string(spec(out).torch_name) + "; zero_sign " +
               std::to_string(counts[1]) + ", nan_payload " + std::to_string(counts[2]) +
               ", value " + std::to_string(counts[3]) + ")";
}

// Which case judges each refusal: a refusal is one event per distinct call (what was called,
// without the operand values, which a refusal never depends on) and expected class, judged at
// the first case of the whole set that makes that call, whatever a --shard selects, so that
// the shards of a run book what the whole run books.
class FirstOfCall {
public:
  // Registers the case `id` of `call` (expecting `expect_error`); returns the id of the first
  // case of the set with that call, or empty when this is that first case.
  std::string first(const std::string& call, const std::string& expect_error,
                    const std::string& id) {
    const auto [it, fresh] = first_.try_emplace(call + '\n' + expect_error, id);
    return fresh ? std::string() : it->second;
  }

private:
  std::map<std::string, std::string> first_;
};

// Runs `body`; an expected error class passes, an unexpected one fails, any other exception
// is an ERROR. A case whose call an earlier case of the set made (`first_of_call` names it)
// is UNSUPPORTED when it is refused: the refusal is one event, judged at that first case. A
// result where an error was expected fails on its own.
template <class Body>
void run_case(CaseResult& r, const std::string& expect_error, const std::string& first_of_call,
              Body body) {
  try {
    body();
    if (!expect_error.empty()) {
      r.outcome = Outcome::fail;
      r.message = "expected " + expect_error + ", but the call succeeded";
    }
  } catch (const MmaemuError& e) {
    if (!expect_error.empty() && !first_of_call.empty()) {
      r.outcome = Outcome::unsupported;
      r.message = detail::same_call_message(first_of_call);
    } else if (expect_error == e.class_name()) {
      r.outcome = Outcome::pass;
      r.message.clear();
    } else {
      r.outcome = Outcome::fail;
      r.message = std::string(e.class_name()) + ": " + e.what() +
                  (expect_error.empty() ? "" : " (expected " + expect_error + ")");
    }
  } catch (const std::exception& e) {
    r.outcome = Outcome::error;
    r.message = e.what();
  }
}

// The set's profiles, for the evidence counts of a replay ("" is the default profile).
void note_profile(SetResult& s, const std::string& profile) {
  if (std::find(s.profiles.begin(), s.profiles.end(), profile) == s.profiles.end())
    s.profiles.push_back(profile);
}

// What a gemm case calls, without its operand values.
std::string call_key(const recordings::GemmCase& c) {
  return c.api + '|' + c.profile + '|' + spec(c.fmt_a).torch_name + '|' + spec(c.fmt_b).torch_name +
         '|' + spec(c.out_dtype).torch_name + '|' + (c.fast ? "fast" : "slow") + '|' +
         std::to_string(c.scale_a_bits) + '|' + std::to_string(c.scale_b_bits) + '|' +
         (c.scale_result_bits ? std::to_string(*c.scale_result_bits) : "-") + '|' + c.splitk + '|' +
         std::to_string(c.M) + 'x' + std::to_string(c.N) + 'x' + std::to_string(c.K);
}

// What an output of a recorded call calls: the description (layouts, scales, bias, out=; the
// operand values are in the storages) and the output's own parameters.
std::string call_key(const recordings::GemmCall& c, const recordings::GemmCallOutput& o) {
  return c.call_json + '|' + (o.out_dtype ? spec(*o.out_dtype).torch_name : "default") + '|' +
         (o.fast ? "fast" : "slow") + '|' + o.splitk;
}

} // namespace

namespace detail {

SetResult replay_gemm(const recordings::GemmBatch& batch, const std::string& file,
                      const ReplayOptions& opt, const std::string& file_not_hardware) {
  SetBooking book(batch.name, "gemm", "gemm", batch.attrs, file, batch.cases.size());
  SetResult& s = book.result();
  const std::vector<std::size_t> sel = selected(batch.cases.size(), opt.filter);
  if (const std::string why = book.not_run_reason(opt, file_not_hardware); !why.empty()) {
    for (std::size_t i : sel)
      book.unit_not_run(batch.cases[i].id, {}, why);
    return book.finish();
  }
  // A set's expect_error applies to every case that names none itself.
  auto expected_error = [&](const recordings::GemmCase& c) -> const std::string& {
    return c.expect_error.empty() ? s.expect_error : c.expect_error;
  };
  // The first case of each refused call, over the whole set.
  std::vector<std::string> first_of_call(batch.cases.size());
  FirstOfCall calls;
  for (std::size_t i = 0; i < batch.cases.size(); ++i) {
    const recordings::GemmCase& c = batch.cases[i];
    if (!expected_error(c).empty())
      first_of_call[i] = calls.first(call_key(c), expected_error(c), c.id);
  }
  for (std::size_t i : sel) {
    const recordings::GemmCase& c = batch.cases[i];
    const std::string& expect_error = expected_error(c);
    book.unit(c.id);
    note_profile(s, c.profile);
    CaseResult r;
    r.id = c.id;
    // Sizes beyond the emulator's limits or operands of the wrong length are a broken case
    // (ERROR), never an expected error class that would pass.
    const auto limit = static_cast<std::uint64_t>(kMaxGemmDim);
    if (c.M > limit || c.N > limit || c.K > limit || c.a.size() != c.M * c.K ||
        c.b.size() != c.N * c.K || c.M * c.N > static_cast<std::uint64_t>(kMaxTensorElements)) {
      r.outcome = Outcome::error;
      r.message = "case sizes M = " + std::to_string(c.M) + ", N = " + std::to_string(c.N) +
                  ", K = " + std::to_string(c.K) + " with " + std::to_string(c.a.size()) + " and " +
                  std::to_string(c.b.size()) +
                  " operand codes: over the emulator's limits or inconsistent";
      book.add(std::move(r));
      continue;
    }
    run_case(r, expect_error, first_of_call[i], [&] {
      const auto M = static_cast<std::int64_t>(c.M), N = static_cast<std::int64_t>(c.N),
                 K = static_cast<std::int64_t>(c.K);
      std::vector<std::uint32_t> a(c.a.begin(), c.a.end()), b(c.b.begin(), c.b.end());
      const Tensor ta = Tensor::from_bits(c.fmt_a, {M, K}, a);
      const Tensor tb = Tensor::from_bits(c.fmt_b, {N, K}, b);
      Tensor result;
      if (c.api == "accumulate") {
        AccumulateOptions aopt;
        aopt.profile = c.profile;
        aopt.splitk = parse_splitk(c.splitk);
        aopt.out_dtype_for_split = c.out_dtype;
        aopt.backend = opt.backend;
        aopt.backend_used = &s.backend;
        const Tensor acc = accumulate(ta, tb, c.fast, aopt);
        result = Tensor::zeros(c.out_dtype, {M, N});
        for (std::int64_t j = 0; j < M * N; ++j) {
          result.set_bits_flat(j, epilogue(acc.bits_flat(j), c.scale_a_bits, c.scale_b_bits,
                                           c.scale_result_bits, c.out_dtype, false,
                                           profile_of(aopt).gemm.scale_fold));
        }
      } else {
        ScaledMmCall call;
        call.input = ta;
        call.mat2 = tb.t();
        call.scale_a = Tensor::scalar_f32(c.scale_a_bits);
        call.scale_b = Tensor::scalar_f32(c.scale_b_bits);
        if (c.scale_result_bits)
          call.scale_result = Tensor::scalar_f32(*c.scale_result_bits);
        call.out_dtype = c.out_dtype;
        call.use_fast_accum = c.fast;
        call.profile = c.profile;
        call.splitk = parse_splitk(c.splitk);
        call.backend = opt.backend;
        call.backend_used = &s.backend;
        result = scaled_mm(call);
      }
      if (expect_error.empty())
        compare_outputs(r, c.expect, result, c.out_dtype);
    });
    book.add(std::move(r));
  }
  return book.finish();
}

SetResult replay_gemm_call(const recordings::GemmCallBatch& batch,
                           const std::vector<GemmCallDesc>* calls, const std::string& file,
                           const ReplayOptions& opt, const std::string& file_not_hardware) {
  SetBooking book(batch.name, "gemm_call", "gemm_call", batch.attrs, file, batch.calls.size());
  SetResult& s = book.result();
  const std::vector<std::size_t> sel = selected(batch.calls.size(), opt.filter);
  if (const std::string why = book.not_run_reason(opt, file_not_hardware); !why.empty()) {
    for (std::size_t i : sel) {
      std::vector<std::string> outputs;
      for (const auto& o : batch.calls[i].outputs)
        outputs.push_back(o.name);
      book.unit_not_run(batch.calls[i].id, outputs, why);
    }
    return book.finish();
  }
  auto expected_error = [&](const recordings::GemmCallOutput& o) -> const std::string& {
    return o.expect_error.empty() ? s.expect_error : o.expect_error;
  };
  // The first output of each refused call, over the whole set: [call][output].
  std::vector<std::vector<std::string>> first_of_call(batch.calls.size());
  FirstOfCall distinct;
  for (std::size_t i = 0; i < batch.calls.size(); ++i) {
    const recordings::GemmCall& c = batch.calls[i];
    first_of_call[i].resize(c.outputs.size());
    for (std::size_t j = 0; j < c.outputs.size(); ++j) {
      const auto& o = c.outputs[j];
      if (!expected_error(o).empty())
        first_of_call[i][j] =
            distinct.first(call_key(c, o), expected_error(o), c.id + "/" + o.name);
    }
  }
  for (std::size_t i : sel) {
    const recordings::GemmCall& c = batch.calls[i];
    book.unit(c.id);
    // The typed call: parsed when the file was read, else here, once for all its outputs. A
    // malformed description is an ERROR of each of its outputs, naming the key.
    std::optional<GemmCallDesc> parsed;
    const GemmCallDesc* desc = calls && i < calls->size() ? &(*calls)[i] : nullptr;
    std::string parse_error;
    if (!desc) {
      try {
        parsed = parse_recorded_call(c, file);
        desc = &*parsed;
      } catch (const GemmCallError& e) {
        parse_error = e.what();
      }
    }
    if (desc)
      note_profile(s, desc->profile);
    for (std::size_t j = 0; j < c.outputs.size(); ++j) {
      const recordings::GemmCallOutput& o = c.outputs[j];
      CaseResult r;
      r.id = c.id + "/" + o.name;
      if (!desc) {
        r.outcome = Outcome::error;
        r.message = parse_error;
        book.add(std::move(r));
        continue;
      }
      const std::string& expect_error = expected_error(o);
      run_case(r, expect_error, first_of_call[i][j], [&] {
        GemmCallArgs a;
        prepare_output_call(c, *desc, o, opt.backend, a);
        ScaledMmCall& sc = a.call;
        sc.backend_used = &s.backend;
        const Tensor result = scaled_mm(sc);
        if (expect_error.empty()) {
          if (result.shape() != o.shape) {
            r.outcome = Outcome::fail;
            r.message = "result shape differs from the recording";
            return;
          }
          compare_outputs(r, o.expect, result, result.dtype());
        }
      });
      book.add(std::move(r));
    }
  }
  return book.finish();
}

} // namespace detail

SetResult replay_gemm_set(const recordings::GemmBatch& batch, const std::string& file,
                          const ReplayOptions& opt) {
  return detail::replay_gemm(batch, file, opt, "");
}

SetResult replay_gemm_call_set(const recordings::GemmCallBatch& batch,
                               const std::vector<GemmCallDesc>* calls, const std::string& file,
                               const ReplayOptions& opt) {
  return detail::replay_gemm_call(batch, calls, file, opt, "");
}

} // namespace mmaemu::harness
