// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/cublaslt_api.hpp"

#include <dlfcn.h>

namespace mmaemu::kernels::cublaslt {

namespace {

template <class Fn> void resolve(void* lib, const char* symbol, Fn& out, std::string* missing) {
  out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  if (!out && missing)
    *missing += (missing->empty() ? "" : ", ") + std::string(symbol);
}

} // namespace

std::string resolve_symbols(void* lib, Api& api) {
  std::string missing;
  resolve(lib, "cublasLtGetVersion", api.get_version, &missing);
  resolve(lib, "cublasLtCreate", api.create, &missing);
  resolve(lib, "cublasLtDestroy", api.destroy, &missing);
  resolve(lib, "cublasLtMatmulDescCreate", api.desc_create, &missing);
  resolve(lib, "cublasLtMatmulDescSetAttribute", api.desc_set, &missing);
  resolve(lib, "cublasLtMatmulDescDestroy", api.desc_destroy, &missing);
  resolve(lib, "cublasLtMatrixLayoutCreate", api.layout_create, &missing);
  resolve(lib, "cublasLtMatrixLayoutDestroy", api.layout_destroy, &missing);
  resolve(lib, "cublasLtMatmulPreferenceCreate", api.pref_create, &missing);
  resolve(lib, "cublasLtMatmulPreferenceSetAttribute", api.pref_set, &missing);
  resolve(lib, "cublasLtMatmulPreferenceDestroy", api.pref_destroy, &missing);
  resolve(lib, "cublasLtMatmulAlgoGetHeuristic", api.heuristic, &missing);
  resolve(lib, "cublasLtMatmulAlgoConfigGetAttribute", api.algo_config_get, &missing);
  resolve(lib, "cublasLtGetStatusName", api.status_name, nullptr); // optional
  return missing;
}

std::optional<int> data_type_of(std::string_view dtype) {
  if (dtype == "e4m3")
    return kTypeR8FE4M3;
  if (dtype == "e5m2")
    return kTypeR8FE5M2;
  if (dtype == "bf16")
    return kTypeR16BF;
  if (dtype == "fp16")
    return kTypeR16F;
  if (dtype == "fp32")
    return kTypeR32F;
  return std::nullopt;
}

std::string reduction_scheme_name(unsigned scheme) {
  switch (scheme) {
  case kReductionNone:
    return "none";
  case kReductionInplace:
    return "inplace";
  case kReductionComputeType:
    return "compute_type";
  case kReductionOutputType:
    return "output_type";
  default:
    return "unknown(" + std::to_string(scheme) + ")";
  }
}

std::string status_text(const Api& api, std::string_view step, Status s) {
  const char* name = api.status_name ? api.status_name(s) : nullptr;
  std::string text = std::string(step) + " returned ";
  if (name && *name)
    text += std::string(name).substr(0, 64) + " (" + std::to_string(s) + ")";
  else
    text += "cublasStatus " + std::to_string(s);
  return text;
}

std::string version_text(std::size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string((version / 100) % 100) + "." +
         std::to_string(version % 100);
}

HeuristicAnswer ask_heuristic(const Api& api, Handle handle, const HeuristicQuery& q) {
  HeuristicAnswer r;
  if (q.M < 1 || q.N < 1 || q.K < 1) {
    r.error = "M, N and K must be positive (M=" + std::to_string(q.M) +
              ", N=" + std::to_string(q.N) + ", K=" + std::to_string(q.K) + ")";
    return r;
  }
  const bool fp8_out = q.out_type == kTypeR8FE4M3 || q.out_type == kTypeR8FE5M2;
  const int c_type = fp8_out ? kTypeR16F : q.out_type;
  MatmulDesc desc = nullptr;
  MatrixLayout la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  Preference pref = nullptr;
  auto step = [&](const char* what, Status s) {
    if (s != kStatusSuccess && r.error.empty())
      r.error = status_text(api, what, s);
    return s == kStatusSuccess;
  };
  const auto m = static_cast<std::uint64_t>(q.N), n = static_cast<std::uint64_t>(q.M),
             k = static_cast<std::uint64_t>(q.K);
  // torch: A = mat2 (column-major K x N, read transposed, ld K), B = mat1 (row-major M x K,
  // ld K); D is m x n column-major, i.e. the row-major M x N output.
  const int opa = kOpT, opb = kOpN;
  const std::int8_t fast = q.fast_accum ? 1 : 0;
  alignas(256) static const float placeholder[64] = {};
  const void* scale_ptr = placeholder;
  bool ok = step("cublasLtMatmulDescCreate", api.desc_create(&desc, kCompute32F, kTypeR32F));
  ok = ok && step("TRANSA", api.desc_set(desc, kDescTransA, &opa, sizeof opa));
  ok = ok && step("TRANSB", api.desc_set(desc, kDescTransB, &opb, sizeof opb));
  ok = ok && step("A_SCALE_POINTER",
                  api.desc_set(desc, kDescAScalePointer, &scale_ptr, sizeof scale_ptr));
  ok = ok && step("B_SCALE_POINTER",
                  api.desc_set(desc, kDescBScalePointer, &scale_ptr, sizeof scale_ptr));
  if (q.scale_result) {
    ok = ok && step("D_SCALE_POINTER",
                    api.desc_set(desc, kDescDScalePointer, &scale_ptr, sizeof scale_ptr));
  }
  ok = ok && step("FAST_ACCUM", api.desc_set(desc, kDescFastAccum, &fast, sizeof fast));
  // cuBLAS A is mat2 (b_type), B is mat1 (a_type).
  ok = ok && step("layout A", api.layout_create(&la, q.b_type, k, m, static_cast<std::int64_t>(k)));
  ok = ok && step("layout B", api.layout_create(&lb, q.a_type, k, n, static_cast<std::int64_t>(k)));
  ok = ok && step("layout C", api.layout_create(&lc, c_type, m, n, static_cast<std::int64_t>(m)));
  ok = ok &&
       step("layout D", api.layout_create(&ld, q.out_type, m, n, static_cast<std::int64_t>(m)));
  ok = ok && step("cublasLtMatmulPreferenceCreate", api.pref_create(&pref));
  const std::uint64_t ws = q.workspace;
  ok =
      ok && step("MAX_WORKSPACE_BYTES", api.pref_set(pref, kPrefMaxWorkspaceBytes, &ws, sizeof ws));
  HeuristicResult result{};
  int returned = 0;
  ok = ok && step("cublasLtMatmulAlgoGetHeuristic",
                  api.heuristic(handle, desc, la, lb, lc, ld, pref, 1, &result, &returned));
  if (ok && returned < 1) {
    r.error = "cublasLtMatmulAlgoGetHeuristic returned no algorithm (0 results)";
    ok = false;
  }
  if (ok && result.state != kStatusSuccess) {
    r.error = status_text(api, "the heuristic's result", result.state);
    ok = false;
  }
  if (ok) {
    auto get = [&](const char* what, int attr, std::uint64_t& out) {
      std::uint64_t buf = 0;
      std::size_t written = 0;
      if (!step(what, api.algo_config_get(&result.algo, attr, &buf, sizeof buf, &written)))
        return false;
      if (written == 0 || written > sizeof buf) {
        r.error = std::string(what) + ": " + std::to_string(written) + " bytes written";
        return false;
      }
      // Little-endian: the low `written` bytes hold the value (int32 or uint32 attributes).
      out = written >= 8 ? buf : (buf & ((std::uint64_t{1} << (8 * written)) - 1));
      return true;
    };
    std::uint64_t id = 0, sk = 0, red = 0, tile = 0, stages = 0;
    ok = get("ALGO_CONFIG_ID", kConfigId, id) && get("SPLITK_NUM", kConfigSplitkNum, sk) &&
         get("REDUCTION_SCHEME", kConfigReductionScheme, red) &&
         get("TILE_ID", kConfigTileId, tile) && get("STAGES_ID", kConfigStagesId, stages);
    if (ok) {
      r.algo_id = static_cast<int>(static_cast<std::int32_t>(id));
      r.splitk_num = static_cast<int>(static_cast<std::int32_t>(sk));
      r.reduction_scheme = static_cast<unsigned>(red);
      r.tile_id = static_cast<unsigned>(tile);
      r.stages_id = static_cast<unsigned>(stages);
      r.waves = result.waves_count;
      r.ok = true;
    }
  }
  if (pref)
    api.pref_destroy(pref);
  for (MatrixLayout l : {la, lb, lc, ld}) {
    if (l)
      api.layout_destroy(l);
  }
  if (desc)
    api.desc_destroy(desc);
  return r;
}

} // namespace mmaemu::kernels::cublaslt
