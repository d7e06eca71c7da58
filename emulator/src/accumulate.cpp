// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/accumulate.hpp"

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

// Rows of K codes copied out of any layout, with the non-finite codes replaced by +0.
struct Rows {
  std::vector<std::uint8_t> codes;    // sanitised [rows][K]
  std::vector<std::uint8_t> original; // as given, only when some code is not finite
  std::vector<bool> special;          // per row: holds a NaN or Inf code
  bool any_special = false;
};

Rows gather(const Tensor& t, std::int64_t rows, std::int64_t K) {
  Rows r;
  r.codes.resize(static_cast<std::size_t>(rows * K));
  r.special.assign(static_cast<std::size_t>(rows), false);
  const auto& table = model::fp8_operand_table(t.dtype());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t k = 0; k < K; ++k) {
      const auto code = static_cast<std::uint8_t>(t.bits_at(i, k));
      const bool finite = table[code].cls <= static_cast<std::uint8_t>(ValueClass::finite);
      r.codes[static_cast<std::size_t>(i * K + k)] = finite ? code : 0u;
      if (!finite) {
        r.special[static_cast<std::size_t>(i)] = true;
        r.any_special = true;
      }
    }
  }
  if (r.any_special) {
    r.original.resize(r.codes.size());
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t k = 0; k < K; ++k) {
        r.original[static_cast<std::size_t>(i * K + k)] =
            static_cast<std::uint8_t>(t.bits_at(i, k));
      }
    }
  }
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
  const SplitDecision d = resolve_splitk(q, profile, opt.splitk);
  if (decision)
    *decision = d;
  if (!use_fast_accum && !preset.slow_chunk) {
    throw UnsupportedFeatureError("use_fast_accum=False: preset '" + preset.name +
                                  "' has no characterised slow accumulation (slow_chunk none)");
  }

  Tensor out = Tensor::zeros(Format::fp32, {M, N});
  if (M == 0 || N == 0 || K == 0)
    return out;

  const Rows ra = gather(a, M, K);
  const Rows rb = gather(b, N, K);
  model::GemmOperands op;
  op.a = ra.codes.data();
  op.lda = static_cast<std::size_t>(K);
  op.b = rb.codes.data();
  op.ldb = static_cast<std::size_t>(K);
  op.M = static_cast<std::size_t>(M);
  op.N = static_cast<std::size_t>(N);
  op.K = static_cast<std::size_t>(K);
  op.fmt = {a.dtype(), b.dtype()};

  const model::PlanDecisions& dec = model::decisions();
  const std::size_t MN = op.M * op.N;
  const auto parts = dec.split_layout(op.K, d.S, preset);
  // S partial [M, N] results are kept: S * M * N values within the storage limit.
  std::int64_t partial_elems = 0;
  if (__builtin_mul_overflow(static_cast<std::int64_t>(parts.size()), M * N, &partial_elems) ||
      partial_elems > kMaxTensorElements) {
    throw ValueError("accumulate: split-K S = " + std::to_string(parts.size()) +
                     " with M*N = " + std::to_string(M * N) + " needs more than " +
                     std::to_string(kMaxTensorElements) +
                     " partial values (the emulator's limit, 2^40)");
  }
  std::vector<std::uint32_t> partials(parts.size() * MN, 0u);
  std::vector<std::uint32_t> chunk(MN);
  auto chain = [&](std::size_t k0, std::size_t k1, std::uint32_t* dst) {
    if (backend.chain)
      backend.chain(op, k0, k1, dst, op.N);
    else
      model::chain_gemm(op, k0, k1, preset, dst, op.N, opt.threads);
  };
  for (std::size_t s = 0; s < parts.size(); ++s) {
    std::uint32_t* part = partials.data() + s * MN;
    if (parts[s].first >= parts[s].second)
      continue; // an empty part is +0
    if (use_fast_accum) {
      chain(parts[s].first, parts[s].second, part);
    } else {
      for (const auto& c : dec.slow_chunks(parts[s], *preset.slow_chunk)) {
        chain(c.first, c.second, chunk.data());
        for (std::size_t i = 0; i < MN; ++i)
          part[i] = dec.promote(part[i], chunk[i]);
      }
    }
  }
  const bool prescale = dec.alpha_before_reduction && opt.scales_before_reduction.has_value();
  if (prescale) {
    const auto [sa, sb] = *opt.scales_before_reduction;
    for (auto& v : partials)
      v = dec.scale(v, sa, sb);
  }
  // The result is a contiguous fp32 tensor: write its little-endian storage directly.
  std::uint8_t* dst = out.storage()->data();
  auto put = [dst](std::size_t i, std::uint32_t v) {
    for (int k = 0; k < 4; ++k)
      dst[4 * i + k] = static_cast<std::uint8_t>(v >> (8 * k));
  };
  if (parts.size() == 1) {
    for (std::size_t i = 0; i < MN; ++i)
      put(i, partials[i]);
  } else {
    std::vector<std::uint32_t> gathered(parts.size());
    for (std::size_t i = 0; i < MN; ++i) {
      for (std::size_t s = 0; s < parts.size(); ++s)
        gathered[s] = partials[s * MN + i];
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
        const std::uint8_t* pa = (ra.any_special ? ra.original : ra.codes).data() + m * K;
        const std::uint8_t* pb = (rb.any_special ? rb.original : rb.codes).data() + n * K;
        std::uint32_t v =
            model::dot(std::span(pa, static_cast<std::size_t>(K)),
                       std::span(pb, static_cast<std::size_t>(K)), 0u, preset, op.fmt);
        if (prescale)
          v = dec.scale(v, opt.scales_before_reduction->first, opt.scales_before_reduction->second);
        out.set_bits_at(m, n, v);
      }
    }
  }
  return out;
}

} // namespace mmaemu
