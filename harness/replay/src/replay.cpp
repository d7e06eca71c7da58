// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/replay.hpp"

#include <algorithm>
#include <chrono>

#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/harness/gemm_call.hpp"

namespace mmaemu::harness {

namespace {

std::string attr_of(const recordings::Attributes& attrs, const char* key) {
  const auto it = attrs.find(key);
  return it == attrs.end() ? std::string() : it->second;
}

// A set's result before its cases: where it came from and the attributes that decide how
// its cases are judged.
SetResult start_set(const std::string& name, const std::string& preset,
                    const recordings::Attributes& attrs, const std::string& file) {
  SetResult s;
  s.file = file;
  s.name = name;
  s.preset = preset;
  s.gpu = attr_of(attrs, "gpu");
  s.scope = attr_of(attrs, "scope");
  s.expect_error = attr_of(attrs, "expect_error");
  return s;
}

bool out_of_scope(const SetResult& s) {
  return s.scope == "out";
}

void tally(SetResult& s, const CaseResult& c) {
  switch (c.outcome) {
  case Outcome::pass:
    ++s.passed;
    break;
  case Outcome::fail:
    ++s.failed;
    break;
  case Outcome::unsupported:
  case Outcome::xfail:
    ++s.unsupported;
    break;
  case Outcome::error:
    ++s.errors;
    break;
  }
}

// Every case of an out-of-scope set: listed as UNSUPPORTED with the set's reason, not run.
void mark_out_of_scope(SetResult& s, const std::vector<std::string>& ids,
                       const recordings::Attributes& attrs) {
  const std::string reason = attr_of(attrs, "scope_reason");
  const std::string message =
      "out of scope (n/a)" + (reason.empty() ? std::string() : ": " + reason);
  s.results.clear();
  s.passed = s.failed = s.errors = s.unsupported = 0;
  for (const auto& id : ids) {
    CaseResult c;
    c.id = id;
    c.outcome = Outcome::unsupported;
    c.message = message;
    tally(s, c);
    s.results.push_back(std::move(c));
  }
  s.cases = ids.size();
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The message of a file that could not be read, on one line and naming the file.
std::string unreadable_message(const std::string& file, const std::string& what) {
  std::string m = what.find(file) == std::string::npos ? file + ": " + what : what;
  for (char& ch : m) {
    if (ch == '\n' || ch == '\r')
      ch = ' ';
  }
  return m;
}

} // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
  case Outcome::pass:
    return "PASS";
  case Outcome::fail:
    return "FAIL";
  case Outcome::error:
    return "ERROR";
  case Outcome::unsupported:
    return "UNSUPPORTED";
  case Outcome::xfail:
    return "XFAIL";
  }
  return "?";
}

std::string resolve_backend(const std::string& requested) {
  // Without a preset the selector only checks the name and that a device is visible.
  return choose_backend({requested, nullptr, {}}).name;
}

namespace {

// The chains of an mma batch on a CUDA kernel (kernel ABI v1: chains from +0 over finite
// codes). Cases whose accumulator input c is not +0, or whose codes are not finite, cannot
// be expressed in that ABI: UNSUPPORTED, never computed elsewhere. The others run in groups
// of up to kGroup cases as a [g][K] x [g][K] GEMM whose diagonal holds their chains.
void run_mma_on_kernel(const recordings::MmaBatch& batch, const ChainFn& chain,
                       std::vector<std::uint32_t>& actual, std::vector<std::string>& why_not) {
  constexpr std::size_t kGroup = 128;
  const std::size_t n = batch.size(), K = batch.K;
  const auto& ta = model::fp8_operand_table(batch.fmt_a);
  const auto& tb = model::fp8_operand_table(batch.fmt_b);
  std::vector<std::size_t> runnable;
  for (std::size_t i = 0; i < n; ++i) {
    bool finite = true;
    for (std::size_t k = 0; k < K && finite; ++k) {
      finite = ta[batch.a[i * K + k]].cls <= static_cast<std::uint8_t>(ValueClass::finite) &&
               tb[batch.b[i * K + k]].cls <= static_cast<std::uint8_t>(ValueClass::finite);
    }
    if (batch.c[i] != 0u)
      why_not[i] = "the kernel ABI computes chains from +0; this case's accumulator input c is " +
                   decompose_bits(batch.c[i], Format::fp32);
    else if (!finite)
      why_not[i] = "a NaN or Inf code: the kernels take finite codes (the shared plan code "
                   "applies the non-finite rule)";
    else
      runnable.push_back(i);
  }
  std::vector<std::uint8_t> a, b;
  std::vector<std::uint32_t> out;
  for (std::size_t g0 = 0; g0 < runnable.size(); g0 += kGroup) {
    const std::size_t g = std::min(kGroup, runnable.size() - g0);
    a.assign(g * K, 0);
    b.assign(g * K, 0);
    for (std::size_t j = 0; j < g; ++j) {
      std::copy_n(batch.a.begin() + static_cast<std::ptrdiff_t>(runnable[g0 + j] * K), K,
                  a.begin() + static_cast<std::ptrdiff_t>(j * K));
      std::copy_n(batch.b.begin() + static_cast<std::ptrdiff_t>(runnable[g0 + j] * K), K,
                  b.begin() + static_cast<std::ptrdiff_t>(j * K));
    }
    model::GemmOperands op;
    op.a = a.data();
    op.lda = K;
    op.b = b.data();
    op.ldb = K;
    op.M = op.N = g;
    op.K = K;
    op.fmt = {batch.fmt_a, batch.fmt_b};
    out.assign(g * g, 0u);
    chain(op, 0, K, out.data(), g);
    for (std::size_t j = 0; j < g; ++j)
      actual[runnable[g0 + j]] = out[j * g + j];
  }
}

// The chains of a batch of fp16, bf16 or tf32 operands (model::dot_codes). With an fp16
// accumulator c and expect hold binary32 patterns of fp16 values: c is narrowed to its fp16
// code (exact: check_batch) and the fp16 result widened back for the comparison.
void replay_wide_batch(const recordings::MmaBatch& batch, const Preset& preset,
                       std::vector<std::uint32_t>& actual) {
  const std::size_t n = batch.size();
  const model::FormatPair fmt{batch.fmt_a, batch.fmt_b};
  if (batch.acc == Format::fp32) {
    model::dot_codes_rows(batch.a_wide.data(), batch.b_wide.data(), batch.c.data(), n, batch.K,
                          preset, fmt, Format::fp32, actual.data());
    return;
  }
  std::vector<std::uint32_t> c16(n);
  for (std::size_t i = 0; i < n; ++i)
    c16[i] = encode_binary32_bits(batch.acc, batch.c[i], Overflow::infinity);
  model::dot_codes_rows(batch.a_wide.data(), batch.b_wide.data(), c16.data(), n, batch.K, preset,
                        fmt, batch.acc, actual.data());
  for (auto& v : actual)
    v = encode_exact_bits(Format::fp32, decode_bits(batch.acc, v), Overflow::infinity);
}

} // namespace

SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file,
                       const std::string& backend) {
  SetResult r = start_set(batch.name, batch.preset, batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  if (out_of_scope(r)) {
    mark_out_of_scope(r, batch.ids, batch.attrs);
    r.seconds = since(t0);
    return r;
  }
  const std::size_t n = batch.size();
  r.cases = n;
  r.results.resize(n);
  // The whole set runs at once: a refusal (an unknown preset, a format that is not FP8)
  // refuses every case alike.
  std::vector<std::uint32_t> actual(n, 0u);
  std::vector<std::string> why_not(n); // per case: why the backend cannot run it
  bool refused = false;
  std::string refused_class, refused_message;
  try {
    const Preset& preset = get_preset(batch.preset);
    const ChainBackend be = choose_backend({backend, &preset, {batch.fmt_a, batch.fmt_b}});
    r.backend = be.name;
    if (batch.wide()) {
      // fp16, bf16 and tf32 operands: the reference model (no kernel takes them).
      replay_wide_batch(batch, preset, actual);
    } else if (be.chain) {
      run_mma_on_kernel(batch, be.chain, actual, why_not);
    } else {
      model::dot_rows(batch.a.data(), batch.b.data(), batch.c.data(), n, batch.K, preset,
                      {batch.fmt_a, batch.fmt_b}, actual.data());
    }
  } catch (const BackendUnavailableError& e) {
    // The requested backend cannot serve this set (another preset, a format pair without a
    // kernel): nothing of it is tested.
    for (auto& w : why_not)
      w = std::string("BackendUnavailableError: ") + e.what();
  } catch (const MmaemuError& e) {
    refused = true;
    refused_class = e.class_name();
    refused_message = refused_class + ": " + e.what();
  } catch (const std::exception& e) {
    refused = true;
    refused_message = e.what();
  }
  for (std::size_t i = 0; i < n; ++i) {
    CaseResult& c = r.results[i];
    c.id = batch.ids[i];
    c.expected = batch.expect[i];
    if (!r.expect_error.empty()) {
      // The recorded bits mean nothing here: the hardware refused the call.
      if (refused && refused_class == r.expect_error) {
        c.outcome = Outcome::pass;
        c.message = "expected error reproduced: " + refused_class;
      } else {
        c.outcome = Outcome::fail;
        c.message = "expected " + r.expect_error + ", got " +
                    (!refused                ? std::string("no error")
                     : refused_class.empty() ? refused_message
                                             : refused_class);
      }
    } else if (refused) {
      c.outcome = Outcome::error;
      c.message = refused_message;
    } else if (!why_not[i].empty()) {
      c.outcome = Outcome::unsupported;
      c.message = (r.backend.empty() ? "" : r.backend + ": ") + why_not[i];
    } else {
      c.actual = actual[i];
      c.why = compare_bits(c.expected, c.actual, Format::fp32, NanPolicy::bits);
      c.outcome = c.why == Mismatch::none ? Outcome::pass : Outcome::fail;
    }
    tally(r, c);
  }
  r.seconds = since(t0);
  return r;
}

SetResult replay_gemm_set(const recordings::GemmBatch& batch, const std::string& file,
                          const std::string& backend) {
  const SetResult head = start_set(batch.name, "gemm", batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  if (out_of_scope(head)) {
    SetResult r = head;
    std::vector<std::string> ids;
    for (const auto& c : batch.cases)
      ids.push_back(c.id);
    mark_out_of_scope(r, ids, batch.attrs);
    r.seconds = since(t0);
    return r;
  }
  SetResult r;
  if (head.expect_error.empty()) {
    r = replay_gemm_batch(batch, file, backend);
  } else {
    recordings::GemmBatch with = batch;
    for (auto& c : with.cases) {
      if (c.expect_error.empty())
        c.expect_error = head.expect_error;
    }
    r = replay_gemm_batch(with, file, backend);
  }
  r.scope = head.scope;
  r.expect_error = head.expect_error;
  return r;
}

SetResult replay_gemm_call_set(const recordings::GemmCallBatch& batch, const std::string& file,
                               const std::string& backend) {
  const SetResult head = start_set(batch.name, "gemm_call", batch.attrs, file);
  const auto t0 = std::chrono::steady_clock::now();
  if (out_of_scope(head)) {
    SetResult r = head;
    std::vector<std::string> ids;
    for (const auto& c : batch.calls) {
      for (const auto& o : c.outputs)
        ids.push_back(c.id + "/" + o.name);
    }
    mark_out_of_scope(r, ids, batch.attrs);
    r.seconds = since(t0);
    return r;
  }
  SetResult r;
  if (head.expect_error.empty()) {
    r = replay_gemm_call_batch(batch, file, backend);
  } else {
    recordings::GemmCallBatch with = batch;
    for (auto& c : with.calls) {
      for (auto& o : c.outputs) {
        if (o.expect_error.empty())
          o.expect_error = head.expect_error;
      }
    }
    r = replay_gemm_call_batch(with, file, backend);
  }
  r.scope = head.scope;
  r.expect_error = head.expect_error;
  return r;
}

recordings::Recording read_recording_for_replay(const std::filesystem::path& path) {
  recordings::Recording rec = recordings::read_recording(path);
  for (const auto& batch : rec.gemm_call)
    check_gemm_calls(batch, path.string());
  return rec;
}

ReplayResult replay_files(const std::vector<std::filesystem::path>& files,
                          const std::function<void(const SetResult&)>& on_set,
                          const std::function<void(const UnreadableFile&)>& on_unreadable,
                          const std::string& backend) {
  ReplayResult out;
  auto add = [&](SetResult s) {
    out.passed += s.passed;
    out.failed += s.failed;
    out.errors += s.errors;
    out.unsupported += s.unsupported;
    if (on_set)
      on_set(s);
    out.sets.push_back(std::move(s));
  };
  for (const auto& f : files) {
    const std::string file = f.string();
    // One file at a time: a bad file is reported and the others are still replayed.
    recordings::Recording rec;
    try {
      rec = read_recording_for_replay(f);
    } catch (const std::exception& e) {
      UnreadableFile u{file, unreadable_message(file, e.what())};
      if (on_unreadable)
        on_unreadable(u);
      out.unreadable.push_back(std::move(u));
      continue;
    }
    for (const auto& batch : rec.mma)
      add(replay_batch(batch, file, backend));
    for (const auto& batch : rec.gemm)
      add(replay_gemm_set(batch, file, backend));
    for (const auto& batch : rec.gemm_call)
      add(replay_gemm_call_set(batch, file, backend));
  }
  return out;
}

} // namespace mmaemu::harness
