// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/accumulate.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <span>

#include "mmaemu/emulator/backend.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/dot.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/plan_decisions.hpp"

namespace mmaemu {

namespace {

// The operand as rows of K codes with the non-finite codes replaced by +0. A tensor whose
// rows are contiguous and hold only finite codes is used where it lies; otherwise the rows
// are copied out of its layout.
struct Rows {
  const std::uint8_t* data = nullptr; // row i at data + i * ld
  std::size_t ld = 0;
  std::vector<std::uint8_t> codes;    // the sanitised copy, when one is needed
  std::vector<std::uint8_t> original; // [rows][K] as given, only when some code is not finite
  std::vector<bool> special;          // per row: holds a NaN or Inf code
  bool any_special = false;
};

constexpr auto kFinite = static_cast<std::uint8_t>(ValueClass::finite);

// The FP8 formats' non-finite codes are those whose magnitude bits are at least a threshold
// (e4m3fn: 0x7F, its NaN; e5m2: 0x7C and up, Inf and the NaNs). Derived from the operand table
// and checked against it; 0x80 if the table is not of that shape (then it is looked up).
unsigned nonfinite_threshold(const std::array<model::Fp8Operand, 256>& table) {
  unsigned threshold = 0x80;
  for (unsigned c = 0x7F; c + 1 > 0 && table[c].cls > kFinite; --c)
    threshold = c;
  for (unsigned c = 0; c < 256; ++c) {
    if (((c & 0x7Fu) >= threshold) != (table[c].cls > kFinite))
      return 0x80;
  }
  return threshold;
}

Rows gather(const Tensor& t, std::int64_t rows, std::int64_t K) {
  Rows r;
  r.special.assign(static_cast<std::size_t>(rows), false);
  const auto& table = model::fp8_operand_table(t.dtype());
  // FP8 elements are one byte: element offsets are byte offsets.
  const std::uint8_t* base = t.data() + t.storage_offset();
  const std::int64_t s0 = t.stride(0), s1 = t.stride(1);
  const unsigned threshold = nonfinite_threshold(table);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::uint8_t* row = base + i * s0;
    unsigned bad = 0;
    if (s1 == 1 && threshold < 0x80) { // a comparison the compiler vectorises
      for (std::int64_t k = 0; k < K; ++k)
        bad |= static_cast<unsigned>((row[k] & 0x7Fu) >= threshold);
    } else {
      for (std::int64_t k = 0; k < K; ++k)
        bad |= static_cast<unsigned>(table[row[k * s1]].cls > kFinite);
    }
    if (bad) {
      r.special[static_cast<std::size_t>(i)] = true;
      r.any_special = true;
    }
  }
  if (!r.any_special && (s1 == 1 || K == 1)) {
    r.data = base;
    r.ld = static_cast<std::size_t>(s0);
    return r;
  }
  r.codes.resize(static_cast<std::size_t>(rows * K));
  if (r.any_special)
    r.original.resize(r.codes.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t k = 0; k < K; ++k) {
      const std::uint8_t code = base[i * s0 + k * s1];
      const auto at = static_cast<std::size_t>(i * K + k);
      r.codes[at] = table[code].cls > kFinite ? 0u : code;
      if (r.any_special)
        r.original[at] = code;
    }
  }
  r.data = r.codes.data();
  r.ld = static_cast<std::size_t>(K);
  return r;
}

void check_operand(const Tensor& t, const char* name) {
  if (!t.defined())
    throw ValueError(std::string("accumulate: ") + name + " is undefined");
  if (t.dim() != 2) {
    throw ValueError(std::string("accumulate: ") + name + " must be 2-D, got " + t.describe());
  }
  if (!is_fp8(t.dtype())) {
    throw ValueError(std::string("accumulate: ") + name +
                     " must be float8_e4m3fn or float8_e5m2, got " + t.describe());
  }
  if (t.is_meta()) {
    throw ValueError(std::string("accumulate: ") + name + " " + t.describe() +
                     " is a meta tensor (a shape without storage)");
  }
}

} // namespace

const Profile& profile_of(const AccumulateOptions& opt) {
  if (opt.profile_ptr)
    return *opt.profile_ptr;
  return get_profile_or_default(opt.profile);
}

std::string select_backend(const std::string& requested) {
  return reference_only_backend({requested, nullptr, {}}).name;
}

Tensor accumulate(const Tensor& a, const Tensor& b, bool use_fast_accum,
                  const AccumulateOptions& opt, SplitDecision* decision) {
  check_operand(a, "a");
  check_operand(b, "b");
  if (a.size(1) != b.size(1)) {
    throw ValueError("accumulate: a is [" + std::to_string(a.size(0)) + ", " +
                     std::to_string(a.size(1)) + "] and b is [" + std::to_string(b.size(0)) + ", " +
                     std::to_string(b.size(1)) + "]: both must be rows of the same K");
  }
  const std::int64_t M = a.size(0), N = b.size(0), K = a.size(1);
  check_gemm_size(M, N, K); // before anything of the call's size is allocated
  const Profile& profile = profile_of(opt);
  const Preset& preset = get_preset(profile.preset);
  const ChainBackend backend = choose_backend({opt.backend, &preset, {a.dtype(), b.dtype()}});
  if (opt.backend_used)
    *opt.backend_used = backend.name;

  SplitKQuery q{
      M, N, K, a.dtype(), b.dtype(), opt.out_dtype_for_split, use_fast_accum, opt.layout_std};
  q.scale_result = opt.scale_result_for_split;
  const SplitDecision d = resolve_splitk(q, profile, opt.splitk);
  if (decision)
    *decision = d;
  if (!use_fast_accum && !slow_accumulation_characterised(profile, preset)) {
    throw UnsupportedFeatureError("use_fast_accum=False: preset '" + preset.name +
                                  "' has no characterised slow accumulation (slow_chunk none)");
  }

  Tensor out = Tensor::zeros(Format::fp32, {M, N});
  if (M == 0 || N == 0 || K == 0)
    return out;

  const Rows ra = gather(a, M, K);
  const Rows rb = gather(b, N, K);
  model::GemmOperands op;
  op.a = ra.data;
  op.lda = ra.ld;
  op.b = rb.data;
  op.ldb = rb.ld;
  op.M = static_cast<std::size_t>(M);
  op.N = static_cast<std::size_t>(N);
  op.K = static_cast<std::size_t>(K);
  op.fmt = {a.dtype(), b.dtype()};

  const model::PlanDecisions& dec = model::decisions();
  const std::size_t MN = op.M * op.N;
  const auto parts = dec.split_layout(op.K, d.S, profile.gemm.split_grain);
  // The k block of slow accumulation (none: flat, one chain over each slice).
  const std::optional<int> slow_block = slow_block_of(profile, preset);
  // S partial [M, N] results are kept: S * M * N values within the storage limit.
  std::int64_t partial_elems = 0;
  if (__builtin_mul_overflow(static_cast<std::int64_t>(parts.size()), M * N, &partial_elems) ||
      partial_elems > kMaxTensorElements) {
    throw ValueError("accumulate: split-K S = " + std::to_string(parts.size()) +
                     " with M*N = " + std::to_string(M * N) + " needs more than " +
                     std::to_string(kMaxTensorElements) +
                     " partial values (the emulator's limit, 2^40)");
  }
  // The plan: for each part, its chunks (one for fast accumulation), each a chain from +0.
  model::ChainPlan plan;
  if (!use_fast_accum && slow_block)
    plan.promote = dec.promote;
  for (std::size_t s = 0; s < parts.size(); ++s) {
    std::vector<model::KRange>& chunks = plan.parts.emplace_back();
    if (parts[s].first >= parts[s].second)
      continue; // an empty part is +0
    if (use_fast_accum || !slow_block) {
      chunks.push_back(parts[s]);
    } else {
      for (const auto& c : dec.slow_chunks(parts[s], *slow_block))
        chunks.emplace_back(c.first, c.second);
    }
  }
  // A single part, or the reduced output when chain_gemm_plan reduces the parts itself, is
  // written straight into the result's storage (its bytes are the little-endian fp32 bits; the
  // storage is fresh from operator new, suitably aligned), so a call holds no second M x N
  // buffer. The parts are kept apart only for a backend (which computes chunk by chunk) and
  // when alpha scales each partial before the reduction.
  constexpr bool kDirect = std::endian::native == std::endian::little;
  const bool prescale = dec.alpha_before_reduction && opt.scales_before_reduction.has_value();
  // A profile that merges the partials from the last slice back (no shipped one does) reduces
  // below, where the order is applied: the plan's reduction takes the slices in order.
  const bool reversed_merge = profile.gemm.merge == PartialMerge::reverse && d.scheme != "pairwise";
  const bool reduce_in_plan =
      parts.size() > 1 && kDirect && !backend.chain && !prescale && !reversed_merge;
  if (reduce_in_plan) {
    plan.reduce = dec.reduce;
    plan.scheme = d.scheme;
  }
  const bool direct = kDirect && (parts.size() == 1 || reduce_in_plan);
  std::vector<std::uint32_t> partials(direct ? 0 : parts.size() * MN);
  std::vector<std::uint32_t*> part_out(reduce_in_plan ? 1 : parts.size());
  for (std::size_t s = 0; s < part_out.size(); ++s) {
    part_out[s] = partials.empty() ? reinterpret_cast<std::uint32_t*>(out.mutable_data())
                                   : partials.data() + s * MN;
  }
  if (backend.chain) {
    // A backend computes chunk after chunk; the plan around it is the same.
    std::vector<std::uint32_t> chunk(MN);
    for (std::size_t s = 0; s < parts.size(); ++s) {
      std::fill_n(part_out[s], MN, 0u);
      for (const model::KRange& c : plan.parts[s]) {
        backend.chain(op, c.first, c.second, plan.promote ? chunk.data() : part_out[s], op.N);
        for (std::size_t i = 0; plan.promote && i < MN; ++i)
          part_out[s][i] = plan.promote(part_out[s][i], chunk[i]);
      }
    }
  } else {
    model::chain_gemm_plan(op, plan, preset, part_out.data(), op.N, opt.threads);
  }
  if (prescale) {
    const auto [sa, sb] = *opt.scales_before_reduction;
    for (std::uint32_t* part : part_out) {
      for (std::size_t i = 0; i < MN; ++i)
        part[i] = model::apply_scale(profile.gemm.scale_fold, part[i], sa, sb);
    }
  }
  // The result is a contiguous fp32 tensor: write its little-endian storage directly.
  std::uint8_t* dst = out.mutable_data();
  auto put = [dst](std::size_t i, std::uint32_t v) {
    for (int k = 0; k < 4; ++k)
      dst[4 * i + k] = static_cast<std::uint8_t>(v >> (8 * k));
  };
  if (parts.size() == 1 || reduce_in_plan) {
    if (!partials.empty()) {
      for (std::size_t i = 0; i < MN; ++i)
        put(i, partials[i]);
    }
  } else {
    // The profile's merge order: the partials reach a sequential reduction in slice order
    // (forward) or from the last slice back (reverse); the pairwise tree is its own order.
    std::vector<std::uint32_t> gathered(parts.size());
    for (std::size_t i = 0; i < MN; ++i) {
      for (std::size_t s = 0; s < parts.size(); ++s)
        gathered[reversed_merge ? parts.size() - 1 - s : s] = partials[s * MN + i];
      put(i, dec.reduce(gathered.data(), static_cast<int>(parts.size()), d.scheme));
    }
  }
  // Patch the outputs whose row or column held a NaN or Inf code: the non-finite rule over
  // the whole K (model::dot applies it to the original codes).
  if (ra.any_special || rb.any_special) {
    for (std::int64_t m = 0; m < M; ++m) {
      for (std::int64_t n = 0; n < N; ++n) {
        if (!ra.special[static_cast<std::size_t>(m)] && !rb.special[static_cast<std::size_t>(n)])
          continue;
        const std::uint8_t* pa = ra.any_special ? ra.original.data() + m * K : ra.data + m * ra.ld;
        const std::uint8_t* pb = rb.any_special ? rb.original.data() + n * K : rb.data + n * rb.ld;
        std::uint32_t v =
            model::dot(std::span(pa, static_cast<std::size_t>(K)),
                       std::span(pb, static_cast<std::size_t>(K)), 0u, preset, op.fmt);
        if (prescale) {
          v = model::apply_scale(profile.gemm.scale_fold, v, opt.scales_before_reduction->first,
                                 opt.scales_before_reduction->second);
        }
        out.set_bits_at(m, n, v);
      }
    }
  }
  return out;
}

} // namespace mmaemu
