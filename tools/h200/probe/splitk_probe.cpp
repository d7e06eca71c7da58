// SPDX-License-Identifier: BSD-2-Clause
#include "splitk_probe.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace mmaemu::h200 {

namespace {

template <class F> bool resolve(void* lib, const char* name, F& fn, std::string& missing) {
  void* p = dlsym(lib, name);
  if (!p) {
    missing += (missing.empty() ? "" : ", ") + std::string(name);
    return false;
  }
  fn = reinterpret_cast<F>(p);
  return true;
}

bool dtype_of(const std::string& name, cudaDataType_t& t) {
  if (name == "e4m3")
    t = CUDA_R_8F_E4M3;
  else if (name == "e5m2")
    t = CUDA_R_8F_E5M2;
  else if (name == "bf16")
    t = CUDA_R_16BF;
  else if (name == "fp16")
    t = CUDA_R_16F;
  else if (name == "fp32")
    t = CUDA_R_32F;
  else
    return false;
  return true;
}

std::string status_text(const char* step, cublasStatus_t s) {
  return std::string(step) + " returned cublasStatus " + std::to_string(static_cast<int>(s));
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

} // namespace

std::optional<Unavailable> load_lt_api(LtApi& api, const std::string& lib) {
  // cuBLASLt loads without a driver; the heuristic needs one and a device.
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
    const char* e = dlerror();
    return Unavailable{"no CUDA driver: libcuda.so.1 cannot be opened (" +
                       std::string(e ? e : "?") + ")"};
  }
  void* h = nullptr;
  std::string tried;
  const std::vector<std::string> names =
      lib.empty()
          ? std::vector<std::string>{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}
          : std::vector<std::string>{lib};
  for (const auto& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h)
      break;
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + n + ": " + (e ? e : "?");
  }
  if (!h)
    return Unavailable{"no cuBLASLt: " + tried};
  std::string missing;
  resolve(h, "cublasLtGetVersion", api.get_version, missing);
  resolve(h, "cublasLtCreate", api.create, missing);
  resolve(h, "cublasLtDestroy", api.destroy, missing);
  resolve(h, "cublasLtMatmulDescCreate", api.desc_create, missing);
  resolve(h, "cublasLtMatmulDescSetAttribute", api.desc_set, missing);
  resolve(h, "cublasLtMatmulDescDestroy", api.desc_destroy, missing);
  resolve(h, "cublasLtMatrixLayoutCreate", api.layout_create, missing);
  resolve(h, "cublasLtMatrixLayoutDestroy", api.layout_destroy, missing);
  resolve(h, "cublasLtMatmulPreferenceCreate", api.pref_create, missing);
  resolve(h, "cublasLtMatmulPreferenceSetAttribute", api.pref_set, missing);
  resolve(h, "cublasLtMatmulPreferenceDestroy", api.pref_destroy, missing);
  resolve(h, "cublasLtMatmulAlgoGetHeuristic", api.heuristic, missing);
  resolve(h, "cublasLtMatmulAlgoConfigGetAttribute", api.algo_config_get, missing);
  if (!missing.empty())
    return Unavailable{"cuBLASLt lacks " + missing};
  return std::nullopt;
}

std::string reduction_scheme_name(unsigned scheme) {
  switch (scheme) {
  case CUBLASLT_REDUCTION_SCHEME_NONE:
    return "none";
  case CUBLASLT_REDUCTION_SCHEME_INPLACE:
    return "inplace";
  case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE:
    return "compute_type";
  case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE:
    return "output_type";
  default:
    return "unknown(" + std::to_string(scheme) + ")";
  }
}

ProbeAnswer probe_one(const LtApi& api, cublasLtHandle_t handle, const ProbeQuery& q) {
  ProbeAnswer r;
  r.q = q;
  cudaDataType_t ta, tb, tout;
  if (!dtype_of(q.a, ta) || !dtype_of(q.b, tb) || !dtype_of(q.out, tout)) {
    r.error = "unknown dtype in " + q.a + " x " + q.b + " -> " + q.out;
    return r;
  }
  const bool fp8_out = q.out == "e4m3" || q.out == "e5m2";
  const cudaDataType_t tc = fp8_out ? CUDA_R_16F : tout;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  auto cleanup = [&] {
    if (pref)
      api.pref_destroy(pref);
    for (auto* l : {la, lb, lc, ld})
      if (l)
        api.layout_destroy(l);
    if (desc)
      api.desc_destroy(desc);
  };
  auto step = [&](const char* what, cublasStatus_t s) {
    if (s != CUBLAS_STATUS_SUCCESS && r.error.empty())
      r.error = status_text(what, s);
    return s == CUBLAS_STATUS_SUCCESS;
  };
  const auto m = static_cast<std::uint64_t>(q.N), n = static_cast<std::uint64_t>(q.M),
             k = static_cast<std::uint64_t>(q.K);
  // torch: A = mat2 (column-major K x N: transposed, ld K), B = mat1 (row-major M x K: ld K).
  const cublasOperation_t opa = CUBLAS_OP_T, opb = CUBLAS_OP_N;
  const std::int8_t fast = q.fast ? 1 : 0;
  alignas(256) static const float placeholder[64] = {};
  const void* scale_ptr = placeholder;
  bool ok =
      step("cublasLtMatmulDescCreate", api.desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  ok = ok && step("TRANSA", api.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  ok = ok && step("TRANSB", api.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  ok = ok && step("A_SCALE_POINTER", api.desc_set(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                  &scale_ptr, sizeof scale_ptr));
  ok = ok && step("B_SCALE_POINTER", api.desc_set(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                  &scale_ptr, sizeof scale_ptr));
  if (q.scale_result) {
    ok = ok && step("D_SCALE_POINTER", api.desc_set(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                                                    &scale_ptr, sizeof scale_ptr));
  }
  ok = ok &&
       step("FAST_ACCUM", api.desc_set(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  // cuBLAS A is mat2 (q.b's dtype), B is mat1 (q.a's).
  ok = ok && step("layout A", api.layout_create(&la, tb, k, m, k));
  ok = ok && step("layout B", api.layout_create(&lb, ta, k, n, k));
  ok = ok && step("layout C", api.layout_create(&lc, tc, m, n, m));
  ok = ok && step("layout D", api.layout_create(&ld, tout, m, n, m));
  ok = ok && step("cublasLtMatmulPreferenceCreate", api.pref_create(&pref));
  const std::uint64_t ws = q.workspace;
  ok = ok && step("MAX_WORKSPACE_BYTES",
                  api.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  ok = ok && step("cublasLtMatmulAlgoGetHeuristic",
                  api.heuristic(handle, desc, la, lb, lc, ld, pref, 1, &result, &returned));
  if (ok && returned < 1) {
    r.error = "cublasLtMatmulAlgoGetHeuristic returned no algorithm";
    ok = false;
  }
  if (ok) {
    auto get = [&](const char* what, cublasLtMatmulAlgoConfigAttributes_t attr,
                   std::uint64_t& out) {
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
    ok = get("ALGO_CONFIG_ID", CUBLASLT_ALGO_CONFIG_ID, id) &&
         get("SPLITK_NUM", CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sk) &&
         get("REDUCTION_SCHEME", CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, red) &&
         get("TILE_ID", CUBLASLT_ALGO_CONFIG_TILE_ID, tile) &&
         get("STAGES_ID", CUBLASLT_ALGO_CONFIG_STAGES_ID, stages);
    if (ok) {
      r.algo_id = static_cast<int>(id);
      r.splitk_num = static_cast<int>(sk);
      r.reduction_scheme = static_cast<unsigned>(red);
      r.tile_id = static_cast<unsigned>(tile);
      r.stages_id = static_cast<unsigned>(stages);
      r.waves = result.wavesCount;
      r.ok = true;
    }
  }
  cleanup();
  return r;
}

std::vector<ProbeQuery> parse_queries(const std::string& text, std::uint64_t workspace) {
  std::vector<ProbeQuery> out;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos)
      line.resize(hash);
    std::istringstream ls(line);
    ProbeQuery q;
    q.workspace = workspace;
    int fast = -1, sr = -1;
    if (!(ls >> q.M)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      throw std::runtime_error("query line " + std::to_string(lineno) + ": expected M");
    }
    std::string rest;
    if (!(ls >> q.N >> q.K >> q.a >> q.b >> q.out >> fast >> sr) || (ls >> rest) ||
        (fast != 0 && fast != 1) || (sr != 0 && sr != 1) || q.M < 1 || q.N < 1 || q.K < 1) {
      throw std::runtime_error("query line " + std::to_string(lineno) +
                               ": expected 'M N K a b out fast(0|1) scale_result(0|1)'");
    }
    cudaDataType_t t;
    for (const auto* d : {&q.a, &q.b, &q.out}) {
      if (!dtype_of(*d, t))
        throw std::runtime_error("query line " + std::to_string(lineno) + ": dtype '" + *d +
                                 "' is not e4m3, e5m2, bf16, fp16 or fp32");
    }
    q.fast = fast == 1;
    q.scale_result = sr == 1;
    out.push_back(q);
  }
  return out;
}

ProbeFields fields_of(const ProbeAnswer& a, std::size_t cublaslt_version) {
  ProbeFields f;
  f.M = a.q.M;
  f.N = a.q.N;
  f.K = a.q.K;
  f.a = a.q.a;
  f.b = a.q.b;
  f.out = a.q.out;
  f.fast = a.q.fast;
  f.scale_result = a.q.scale_result;
  f.ok = a.ok;
  f.splitk_num = a.splitk_num;
  f.reduction_scheme = reduction_scheme_name(a.reduction_scheme);
  f.evidence = "cublasLtMatmulAlgoGetHeuristic (1 result, workspace " +
               std::to_string(a.q.workspace) + " B), cuBLASLt " + std::to_string(cublaslt_version) +
               ": algo " + std::to_string(a.algo_id) + ", tile " + std::to_string(a.tile_id) +
               ", stages " + std::to_string(a.stages_id) + ", split-K " +
               std::to_string(a.splitk_num) + ", reduction " + f.reduction_scheme;
  return f;
}

std::string answers_json(const std::vector<ProbeAnswer>& answers, const std::string& library,
                         std::size_t version) {
  std::ostringstream o;
  o << "{\"format\": \"mmaemu-splitk-probe/1\", \"library\": " << json_string(library)
    << ", \"cublaslt_version\": " << version << ", \"queries\": [";
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const ProbeAnswer& a = answers[i];
    o << (i ? ",\n  " : "\n  ") << "{\"M\": " << a.q.M << ", \"N\": " << a.q.N
      << ", \"K\": " << a.q.K << ", \"a\": " << json_string(a.q.a)
      << ", \"b\": " << json_string(a.q.b) << ", \"out\": " << json_string(a.q.out)
      << ", \"fast\": " << (a.q.fast ? "true" : "false")
      << ", \"scale_result\": " << (a.q.scale_result ? "true" : "false")
      << ", \"workspace\": " << a.q.workspace << ", \"ok\": " << (a.ok ? "true" : "false");
    if (a.ok) {
      o << ", \"algo_id\": " << a.algo_id << ", \"splitk_num\": " << a.splitk_num
        << ", \"reduction_scheme\": " << json_string(reduction_scheme_name(a.reduction_scheme))
        << ", \"tile_id\": " << a.tile_id << ", \"stages_id\": " << a.stages_id
        << ", \"waves\": " << a.waves;
    } else {
      o << ", \"error\": " << json_string(a.error);
    }
    o << "}";
  }
  o << "\n]}\n";
  return o.str();
}

} // namespace mmaemu::h200
