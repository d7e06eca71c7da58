// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/replay.hpp"

#include <chrono>

#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu::harness {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass: return "PASS";
    case Outcome::fail: return "FAIL";
    case Outcome::error: return "ERROR";
    case Outcome::unsupported: return "UNSUPPORTED";
    case Outcome::xfail: return "XFAIL";
  }
  return "?";
}

std::string resolve_backend(const std::string& requested) {
  if (requested == "auto" || requested == "reference") return "reference";
  throw BackendUnavailableError("backend '" + requested +
                                "' is unavailable: this build has only the CPU reference backend "
                                "(use --backend reference)");
}

SetResult replay_batch(const recordings::MmaBatch& batch, const std::string& file) {
  SetResult r;
  r.file = file;
  r.name = batch.name;
  r.preset = batch.preset;
  if (auto it = batch.attrs.find("gpu"); it != batch.attrs.end()) r.gpu = it->second;
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = batch.size();
  r.cases = n;
  r.results.resize(n);
  const Preset* preset = nullptr;
  std::string preset_error;
  try {
    preset = &get_preset(batch.preset);
  } catch (const MmaemuError& e) {
    preset_error = e.what();
  }
  std::vector<std::uint32_t> actual(n, 0u);
  if (preset) {
    model::dot_rows(batch.a.data(), batch.b.data(), batch.c.data(), n, batch.K, *preset,
                    {batch.fmt_a, batch.fmt_b}, actual.data());
  }
  for (std::size_t i = 0; i < n; ++i) {
    CaseResult& c = r.results[i];
    c.id = batch.ids[i];
    c.expected = batch.expect[i];
    if (!preset) {
      c.outcome = Outcome::error;
      c.message = preset_error;
      ++r.errors;
      continue;
    }
    c.actual = actual[i];
    c.why = compare_bits(c.expected, c.actual, Format::fp32, NanPolicy::bits);
    if (c.why == Mismatch::none) {
      c.outcome = Outcome::pass;
      ++r.passed;
    } else {
      c.outcome = Outcome::fail;
      ++r.failed;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

ReplayResult replay_files(const std::vector<std::filesystem::path>& files,
                          const std::function<void(const SetResult&)>& on_set) {
  std::vector<recordings::Recording> recs;
  recs.reserve(files.size());
  for (const auto& f : files) recs.push_back(recordings::read_recording(f));
  ReplayResult out;
  auto add = [&](SetResult s) {
    out.passed += s.passed;
    out.failed += s.failed;
    out.errors += s.errors;
    if (on_set) on_set(s);
    out.sets.push_back(std::move(s));
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string file = files[i].string();
    for (const auto& batch : recs[i].mma) add(replay_batch(batch, file));
    for (const auto& batch : recs[i].gemm) add(replay_gemm_batch(batch, file));
    for (const auto& batch : recs[i].gemm_call) add(replay_gemm_call_batch(batch, file));
  }
  return out;
}

}  // namespace mmaemu::harness
