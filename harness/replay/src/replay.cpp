// SPDX-License-Identifier: BSD-2-Clause
// The replay engine: one pass over each recording (read once, hashed while read, each gemm_call
// description parsed once), the mma sets, the one loop over files. The GEMM-level sets are in
// replay_gemm.cpp; both book their results through set_booking.hpp.
#include "mmaemu/harness/replay.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/dot_codes.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/exact.hpp"
#include "mmaemu/emulator/preset.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "set_booking.hpp"

namespace mmaemu::harness {

namespace {

// "0x%08x" of a binary32 pattern, for the message of a case whose two computations disagree.
std::string model_hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// The message of a file that could not be read, on one line and naming the file.
// One line naming the file, escaped once: the readers' messages name the file escaped
// (support::printable) already, so the name is looked for, and added, in that form, and
// whoever prints the line must not escape it again.
std::string unreadable_message(const std::string& file, const std::string& what) {
  const std::string name = support::printable(file, 256);
  std::string m = what.find(name) == std::string::npos ? name + ": " + what : what;
  for (char& ch : m) {
    if (ch == '\n' || ch == '\r')
      ch = ' ';
  }
  return m;
}

// The chains of an mma batch on a CUDA kernel (kernel ABI v1: chains from +0 over finite
// codes). Cases whose accumulator input c is not +0, or whose codes are not finite, cannot
// be expressed in that ABI: UNSUPPORTED, never computed elsewhere. The others run in groups
// of up to kGroup cases as a [g][K] x [g][K] GEMM whose diagonal holds their chains.
// `sel` are the selected case indices; `actual` and `why_not` are indexed like `sel`.
void run_mma_on_kernel(const recordings::MmaBatch& batch, const std::vector<std::size_t>& sel,
                       const ChainFn& chain, std::vector<std::uint32_t>& actual,
                       std::vector<std::string>& why_not) {
  constexpr std::size_t kGroup = 128;
  const std::size_t K = batch.K;
  const auto& ta = model::fp8_operand_table(batch.fmt_a);
  const auto& tb = model::fp8_operand_table(batch.fmt_b);
  std::vector<std::size_t> runnable; // positions in sel
  for (std::size_t j = 0; j < sel.size(); ++j) {
    const std::size_t i = sel[j];
    bool finite = true;
    for (std::size_t k = 0; k < K && finite; ++k) {
      finite = ta[batch.a[i * K + k]].cls <= static_cast<std::uint8_t>(ValueClass::finite) &&
               tb[batch.b[i * K + k]].cls <= static_cast<std::uint8_t>(ValueClass::finite);
    }
    if (batch.c[i] != 0u)
      why_not[j] = "the kernel ABI computes chains from +0; this case's accumulator input c is " +
                   decompose_bits(batch.c[i], Format::fp32);
    else if (!finite)
      why_not[j] = "a NaN or Inf code: the kernels take finite codes (the shared plan code "
                   "applies the non-finite rule)";
    else
      runnable.push_back(j);
  }
  std::vector<std::uint8_t> a, b;
  std::vector<std::uint32_t> out;
  for (std::size_t g0 = 0; g0 < runnable.size(); g0 += kGroup) {
    const std::size_t g = std::min(kGroup, runnable.size() - g0);
    a.assign(g * K, 0);
    b.assign(g * K, 0);
    for (std::size_t j = 0; j < g; ++j) {
      const std::size_t i = sel[runnable[g0 + j]];
      std::copy_n(batch.a.begin() + static_cast<std::ptrdiff_t>(i * K), K,
                  a.begin() + static_cast<std::ptrdiff_t>(j * K));
      std::copy_n(batch.b.begin() + static_cast<std::ptrdiff_t>(i * K), K,
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

// The chains of the selected cases of a batch of fp16, bf16 or tf32 operands
// (model::dot_codes), in place. With an fp16 accumulator c and expect hold binary32 patterns
// of fp16 values: c is narrowed to its fp16 code (exact: check_batch) and the fp16 result
// widened back for the comparison.
void replay_wide_batch(const recordings::MmaBatch& batch, const std::vector<std::size_t>& sel,
                       const Preset& preset, std::vector<std::uint32_t>& actual) {
  const model::FormatPair fmt{batch.fmt_a, batch.fmt_b};
  const std::size_t K = batch.K;
  for (std::size_t j = 0; j < sel.size(); ++j) {
    const std::size_t i = sel[j];
    std::uint32_t c = batch.c[i];
    if (batch.acc != Format::fp32)
      c = encode_binary32_bits(batch.acc, c, Overflow::infinity);
    model::dot_codes_rows(batch.a_wide.data() + i * K, batch.b_wide.data() + i * K, &c, 1, K,
                          preset, fmt, batch.acc, &actual[j]);
    if (batch.acc != Format::fp32)
      actual[j] =
          encode_exact_bits(Format::fp32, decode_bits(batch.acc, actual[j]), Overflow::infinity);
  }
}

} // namespace

outcome::Tally SetResult::tally() const {
  outcome::Tally t;
  t.add(Outcome::pass, passed);
  t.add(Outcome::fail, failed);
  t.add(Outcome::error, errors);
  t.add(Outcome::unsupported, unsupported);
  t.add(Outcome::xfail, xfailed);
  t.add(Outcome::xpass, xpassed);
  return t;
}

outcome::Tally ReplayResult::tally() const {
  outcome::Tally t;
  t.add(Outcome::pass, passed);
  t.add(Outcome::fail, failed);
  t.add(Outcome::error, errors + unreadable.size());
  t.add(Outcome::unsupported, unsupported);
  t.add(Outcome::xfail, xfailed);
  t.add(Outcome::xpass, xpassed);
  return t;
}

std::string resolve_backend(const std::string& requested) {
  // Without a preset the selector only checks the name and that a device is visible.
  return choose_backend({requested, nullptr, {}}).name;
}

namespace detail {

SetResult replay_mma(const recordings::MmaBatch& batch, const std::string& file,
                     const ReplayOptions& opt, const std::string& file_not_hardware) {
  SetBooking book(batch.name, "mma", batch.preset, batch.attrs, file, batch.size());
  const std::vector<std::size_t> sel = selected(batch.size(), opt.filter);
  if (const std::string why = book.not_run_reason(opt, file_not_hardware); !why.empty()) {
    for (std::size_t i : sel)
      book.unit_not_run(batch.ids[i], {}, why);
    return book.finish();
  }
  SetResult& r = book.result();
  // The whole set runs at once: a refusal (an unknown preset, a format that is not FP8)
  // refuses every case alike.
  std::vector<std::uint32_t> actual(sel.size(), 0u);
  std::vector<std::uint32_t> model_bits;        // the block-FMA model's, beside the reference's
  std::vector<std::string> why_not(sel.size()); // per case: why the backend cannot run it
  bool refused = false;
  std::string refused_class, refused_message;
  try {
    const Preset& preset = get_preset(batch.preset);
    const ChainBackend be = choose_backend({opt.backend, &preset, {batch.fmt_a, batch.fmt_b}});
    r.backend = be.name;
    if (batch.wide()) {
      // fp16, bf16 and tf32 operands: the reference model (no kernel takes them).
      replay_wide_batch(batch, sel, preset, actual);
    } else if (be.chain) {
      run_mma_on_kernel(batch, sel, be.chain, actual, why_not);
    } else {
      // The reference: the code users run, and the block-FMA model (ReplayOptions::model_rows).
      const model::FormatPair fmt{batch.fmt_a, batch.fmt_b};
      const auto model_rows = [&](const std::uint8_t* a, const std::uint8_t* b,
                                  const std::uint32_t* c, std::size_t rows, std::uint32_t* out) {
        if (opt.model_rows)
          opt.model_rows(a, b, c, rows, batch.K, preset, fmt, out);
        else
          model::dot_rows(a, b, c, rows, batch.K, preset, fmt, out, model::ChainPath::model);
      };
      model_bits.assign(sel.size(), 0u);
      if (opt.filter.all()) {
        model::dot_rows(batch.a.data(), batch.b.data(), batch.c.data(), batch.size(), batch.K,
                        preset, fmt, actual.data());
        model_rows(batch.a.data(), batch.b.data(), batch.c.data(), batch.size(), model_bits.data());
      } else {
        // The selected rows in place, one chain each: no copy of the batch.
        for (std::size_t j = 0; j < sel.size(); ++j) {
          const std::size_t i = sel[j];
          const std::uint8_t* a = batch.a.data() + i * batch.K;
          const std::uint8_t* b = batch.b.data() + i * batch.K;
          model::dot_rows(a, b, &batch.c[i], 1, batch.K, preset, fmt, &actual[j]);
          model_rows(a, b, &batch.c[i], 1, &model_bits[j]);
        }
      }
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
  // The set is one call: a refusal of it is one event, judged at the set's first case (in the
  // shard that holds it), so that the shards of a run book what the whole run books.
  const std::string first_case = batch.size() > 0 ? batch.ids[0] : std::string();
  for (std::size_t j = 0; j < sel.size(); ++j) {
    const std::size_t i = sel[j];
    book.unit(batch.ids[i]);
    CaseResult c;
    c.id = batch.ids[i];
    c.expected = batch.expect[i];
    if (!r.expect_error.empty()) {
      // The recorded bits mean nothing here: the hardware refused the call.
      if (refused && i > 0) {
        c.outcome = Outcome::unsupported;
        c.message = same_call_message(first_case);
      } else if (refused && refused_class == r.expect_error) {
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
    } else if (!why_not[j].empty()) {
      c.outcome = Outcome::unsupported;
      c.message = (r.backend.empty() ? "" : r.backend + ": ") + why_not[j];
    } else {
      c.actual = actual[j];
      c.why = compare_bits(c.expected, c.actual, Format::fp32, NanPolicy::bits);
      if (!model_bits.empty() &&
          compare_bits(model_bits[j], c.actual, Format::fp32, NanPolicy::bits) != Mismatch::none) {
        // The fast path and the model disagree: whichever matches the recording, the other
        // does not, and the case fails with the model's mismatch where the fast path matched.
        if (c.why == Mismatch::none) {
          c.actual = model_bits[j];
          c.why = compare_bits(c.expected, c.actual, Format::fp32, NanPolicy::bits);
        }
        c.message = "the reference's fast path gives " + model_hex32(actual[j]) +
                    ", its block-FMA model " + model_hex32(model_bits[j]);
      }
      c.outcome = c.why == Mismatch::none ? Outcome::pass : Outcome::fail;
    }
    book.add(std::move(c));
  }
  return book.finish();
}

} // namespace detail

SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file,
                       const ReplayOptions& opt) {
  return detail::replay_mma(batch, file, opt, "");
}

SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file,
                       const std::string& backend) {
  ReplayOptions opt;
  opt.backend = backend;
  return replay_batch(batch, file, opt);
}

SetResult replay_gemm_set(const recordings::GemmBatch& batch, const std::string& file,
                          const std::string& backend) {
  ReplayOptions opt;
  opt.backend = backend;
  return replay_gemm_set(batch, file, opt);
}

SetResult replay_gemm_call_set(const recordings::GemmCallBatch& batch, const std::string& file,
                               const std::string& backend) {
  ReplayOptions opt;
  opt.backend = backend;
  return replay_gemm_call_set(batch, nullptr, file, opt);
}

ReplayRecording
read_recording_for_replay(const std::filesystem::path& path,
                          const std::function<std::string(const std::string&)>& check_sha256) {
  ReplayRecording out;
  FileInfo& info = out.info;
  info.file = path.string();
  try {
    // The one read of the file: its digest is computed while the bytes come in.
    support::HashedFile f;
    try {
      f = support::read_input_file_hashed(path, support::kMaxRecordingBytes, "recording");
    } catch (const support::FileError& e) {
      throw recordings::RecordingError(e.what());
    }
    info.sha256 = f.sha256;
    info.bytes = f.bytes.size();
    if (check_sha256) {
      if (std::string refused = check_sha256(info.sha256); !refused.empty()) {
        info.error = std::move(refused);
        return out;
      }
    }
    out.rec = recordings::read_recording_image(f.bytes, info.file);
    f = {}; // the decoded recording is all that is needed now
    for (const auto& batch : out.rec.gemm_call)
      out.calls.push_back(parse_gemm_calls(batch, info.file, info.bytes));
  } catch (const std::exception& e) {
    info.error = unreadable_message(info.file, e.what());
    out.rec = {};
    out.calls.clear();
    return out;
  }
  info.cases = out.rec.case_count();
  if (const auto it = out.rec.attrs.find("computed_by"); it != out.rec.attrs.end()) {
    info.not_hardware =
        "not a hardware recording: computed_by '" + support::printable(it->second, 200) + "'";
  }
  return out;
}

std::vector<SetResult> replay_recording(const ReplayRecording& rr, const ReplayOptions& opt,
                                        const std::function<void(const SetResult&)>& on_set) {
  std::vector<SetResult> sets;
  const std::string& file = rr.info.file;
  auto done = [&](SetResult s) {
    if (on_set)
      on_set(s);
    sets.push_back(std::move(s));
  };
  for (const auto& batch : rr.rec.mma)
    done(detail::replay_mma(batch, file, opt, rr.info.not_hardware));
  for (const auto& batch : rr.rec.gemm)
    done(detail::replay_gemm(batch, file, opt, rr.info.not_hardware));
  for (std::size_t b = 0; b < rr.rec.gemm_call.size(); ++b) {
    const auto* calls = b < rr.calls.size() ? &rr.calls[b] : nullptr;
    done(detail::replay_gemm_call(rr.rec.gemm_call[b], calls, file, opt, rr.info.not_hardware));
  }
  return sets;
}

void replay_each_file(const std::vector<std::filesystem::path>& files, const ReplayOptions& opt,
                      const std::function<void(const SetResult&)>& on_set,
                      const std::function<void(FileInfo&, std::vector<SetResult>&)>& on_file) {
  for (const auto& f : files) {
    // One file at a time: a bad file is reported and the others are still replayed.
    ReplayRecording rr = read_recording_for_replay(f, opt.check_sha256);
    std::vector<SetResult> sets;
    if (rr.info.error.empty())
      sets = replay_recording(rr, opt, on_set);
    rr.rec = {};
    if (on_file)
      on_file(rr.info, sets);
  }
}

ReplayResult replay_files(const std::vector<std::filesystem::path>& files,
                          const std::function<void(const SetResult&)>& on_set,
                          const std::function<void(const UnreadableFile&)>& on_unreadable,
                          const ReplayOptions& opt) {
  ReplayResult out;
  replay_each_file(files, opt, on_set, [&](FileInfo& info, std::vector<SetResult>& sets) {
    if (!info.error.empty()) {
      UnreadableFile u{info.file, info.error};
      if (on_unreadable)
        on_unreadable(u);
      out.unreadable.push_back(std::move(u));
    }
    for (auto& s : sets) {
      out.passed += s.passed;
      out.failed += s.failed;
      out.errors += s.errors;
      out.unsupported += s.unsupported;
      out.xfailed += s.xfailed;
      out.xpassed += s.xpassed;
      out.sets.push_back(std::move(s));
    }
    out.files.push_back(info);
  });
  return out;
}

} // namespace mmaemu::harness
