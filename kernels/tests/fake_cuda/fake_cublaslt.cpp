// SPDX-License-Identifier: BSD-2-Clause
// libmmaemu_fake_cublaslt.so: the cuBLASLt entry points mmaemu's split-K live query uses, with
// cuBLASLt's C ABI and symbol names, for tests on machines without a GPU. It answers the
// heuristic with what the test asks for and records the descriptor it was given.
// Built a second time with MMAEMU_FAKE_CUBLASLT_NO_HEURISTIC (libmmaemu_fake_cublaslt_partial)
// lacking cublasLtMatmulAlgoGetHeuristic: a library with a missing entry point.
//
// Environment (read at each call):
//   MMAEMU_FAKE_CUBLASLT_VERSION   cublasLtGetVersion (default 130100: "13.1.0")
//   MMAEMU_FAKE_CUBLASLT_ANSWER    "ALGO_ID,TILE_ID,STAGES_ID,SPLITK_NUM,REDUCTION_SCHEME" of the
//                                  returned algorithm (default "66,21,36,1,0")
//   MMAEMU_FAKE_CUBLASLT_RESULTS   how many results the heuristic returns (default 1)
//   MMAEMU_FAKE_CUBLASLT_HEURISTIC_STATUS  the heuristic's cublasStatus_t (default 0)
//   MMAEMU_FAKE_CUBLASLT_CREATE_STATUS     cublasLtCreate's cublasStatus_t (default 0)
// What it saw, for tests: mmaemu_fake_cublaslt_value(key) (long long), keys listed at the end.

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mmaemu/kernels/cublaslt_api.hpp"

using namespace mmaemu::kernels::cublaslt;

// The opaque handle types of cublaslt_api.hpp, defined here.
namespace mmaemu::kernels::cublaslt {
struct Context {
  int id = 0;
};
struct MatmulDescObject {
  int compute = -1, scale_type = -1;
  std::map<int, std::vector<unsigned char>> attrs;
};
struct MatrixLayoutObject {
  int type = -1;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
};
struct PreferenceObject {
  std::map<int, std::vector<unsigned char>> attrs;
};
} // namespace mmaemu::kernels::cublaslt

namespace mmaemu::kernels::driver {
struct CUctx_st; // the fake driver's context type, by its one name
} // namespace mmaemu::kernels::driver

namespace {

constexpr Status kInvalidValue = 7;
constexpr Status kNotInitialized = 1;

struct Seen {
  std::mutex mu;
  std::map<std::string, long long> values;
  int live_objects = 0;
};

Seen& seen() {
  static Seen* s = new Seen;
  return *s;
}

void put(const std::string& key, long long v) {
  Seen& s = seen();
  std::lock_guard lock(s.mu);
  s.values[key] = v;
}

void bump(const std::string& key, long long by = 1) {
  Seen& s = seen();
  std::lock_guard lock(s.mu);
  s.values[key] += by;
}

long long env_ll(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0') ? x : fallback;
}

// (Unused in the build without the heuristic.) The configured answer: ALGO_ID, TILE_ID, STAGES_ID,
// SPLITK_NUM, REDUCTION_SCHEME.
[[maybe_unused]] std::vector<long long> answer() {
  std::vector<long long> out{66, 21, 36, 1, 0};
  const char* v = std::getenv("MMAEMU_FAKE_CUBLASLT_ANSWER");
  if (!v)
    return out;
  std::vector<long long> parsed;
  const std::string text(v);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    parsed.push_back(std::strtoll(item.c_str(), nullptr, 10));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return parsed.size() == 5 ? parsed : out;
}

[[maybe_unused]] long long bytes_value(const std::vector<unsigned char>& b) {
  long long v = 0;
  std::memcpy(&v, b.data(), b.size() < sizeof v ? b.size() : sizeof v);
  return v;
}

// Whether the CUDA driver the test loaded (MMAEMU_LIBCUDA_PATH, already mapped) has a current
// context on this thread: 1 yes, 0 no, -1 no driver to ask.
long long driver_context_current() {
  const char* path = std::getenv("MMAEMU_LIBCUDA_PATH");
  if (!path)
    return -1;
  void* h = ::dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return -1;
  // The fake driver's own signature: a call through another function type is undefined
  // behaviour (UBSan's -fsanitize=function stops it).
  // (CUresult is int and CUcontext is CUctx_st*, kernels/include/mmaemu/kernels/driver_api.hpp.)
  using GetCurrent = int (*)(mmaemu::kernels::driver::CUctx_st**);
  auto get = reinterpret_cast<GetCurrent>(::dlsym(h, "cuCtxGetCurrent"));
  mmaemu::kernels::driver::CUctx_st* ctx = nullptr;
  const long long r = get && get(&ctx) == 0 ? (ctx ? 1 : 0) : -1;
  ::dlclose(h); // drops only the reference taken here
  return r;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) std::size_t cublasLtGetVersion() {
  return static_cast<std::size_t>(env_ll("MMAEMU_FAKE_CUBLASLT_VERSION", 130100));
}

__attribute__((visibility("default"))) const char* cublasLtGetStatusName(Status s) {
  switch (s) {
  case 0:
    return "CUBLAS_STATUS_SUCCESS";
  case 1:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case 7:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case 15:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_UNKNOWN";
  }
}

__attribute__((visibility("default"))) Status cublasLtCreate(Handle* h) {
  if (!h)
    return kInvalidValue;
  bump("creates");
  put("create_had_context", driver_context_current());
  const Status s = static_cast<Status>(env_ll("MMAEMU_FAKE_CUBLASLT_CREATE_STATUS", 0));
  if (s != kStatusSuccess)
    return s;
  static Context ctx;
  *h = &ctx;
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status cublasLtDestroy(Handle h) {
  return h ? kStatusSuccess : kNotInitialized;
}

__attribute__((visibility("default"))) Status cublasLtMatmulDescCreate(MatmulDesc* d, int compute,
                                                                       int scale_type) {
  if (!d)
    return kInvalidValue;
  *d = new MatmulDescObject{compute, scale_type, {}};
  std::lock_guard lock(seen().mu);
  ++seen().live_objects;
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status
cublasLtMatmulDescSetAttribute(MatmulDesc d, int attr, const void* buf, std::size_t size) {
  if (!d || !buf || size == 0 || size > 8)
    return kInvalidValue;
  const auto* p = static_cast<const unsigned char*>(buf);
  d->attrs[attr] = std::vector<unsigned char>(p, p + size);
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status cublasLtMatmulDescDestroy(MatmulDesc d) {
  if (!d)
    return kInvalidValue;
  delete d;
  std::lock_guard lock(seen().mu);
  --seen().live_objects;
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status cublasLtMatrixLayoutCreate(MatrixLayout* l, int type,
                                                                         std::uint64_t rows,
                                                                         std::uint64_t cols,
                                                                         std::int64_t ld) {
  if (!l)
    return kInvalidValue;
  *l = new MatrixLayoutObject{type, rows, cols, ld};
  std::lock_guard lock(seen().mu);
  ++seen().live_objects;
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status cublasLtMatrixLayoutDestroy(MatrixLayout l) {
  if (!l)
    return kInvalidValue;
  delete l;
  std::lock_guard lock(seen().mu);
  --seen().live_objects;
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status cublasLtMatmulPreferenceCreate(Preference* p) {
  if (!p)
    return kInvalidValue;
  *p = new PreferenceObject;
  std::lock_guard lock(seen().mu);
  ++seen().live_objects;
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status
cublasLtMatmulPreferenceSetAttribute(Preference p, int attr, const void* buf, std::size_t size) {
  if (!p || !buf || size == 0 || size > 8)
    return kInvalidValue;
  const auto* b = static_cast<const unsigned char*>(buf);
  p->attrs[attr] = std::vector<unsigned char>(b, b + size);
  return kStatusSuccess;
}

__attribute__((visibility("default"))) Status cublasLtMatmulPreferenceDestroy(Preference p) {
  if (!p)
    return kInvalidValue;
  delete p;
  std::lock_guard lock(seen().mu);
  --seen().live_objects;
  return kStatusSuccess;
}

#ifndef MMAEMU_FAKE_CUBLASLT_NO_HEURISTIC
__attribute__((visibility("default"))) Status
cublasLtMatmulAlgoGetHeuristic(Handle h, MatmulDesc desc, MatrixLayout a, MatrixLayout b,
                               MatrixLayout c, MatrixLayout d, Preference pref, int requested,
                               HeuristicResult* results, int* returned) {
  if (!h || !desc || !a || !b || !c || !d || !pref || !results || !returned || requested < 1)
    return kInvalidValue;
  bump("heuristic_calls");
  put("requested", requested);
  put("compute", desc->compute);
  put("scale_type", desc->scale_type);
  for (const auto& [attr, key] :
       std::map<int, std::string>{{kDescTransA, "transa"},
                                  {kDescTransB, "transb"},
                                  {kDescFastAccum, "fast_accum"},
                                  {kDescAScalePointer, "a_scale_pointer"},
                                  {kDescBScalePointer, "b_scale_pointer"},
                                  {kDescDScalePointer, "d_scale_pointer"}}) {
    auto it = desc->attrs.find(attr);
    put(key + "_set", it != desc->attrs.end() ? 1 : 0);
    put(key + "_size", it != desc->attrs.end() ? static_cast<long long>(it->second.size()) : 0);
    put(key, it != desc->attrs.end() ? bytes_value(it->second) : 0);
  }
  put("attrs_set", static_cast<long long>(desc->attrs.size()));
  int i = 0;
  for (MatrixLayout l : {a, b, c, d}) {
    const std::string k = "layout" + std::to_string(i++) + "_";
    put(k + "type", l->type);
    put(k + "rows", static_cast<long long>(l->rows));
    put(k + "cols", static_cast<long long>(l->cols));
    put(k + "ld", l->ld);
  }
  auto ws = pref->attrs.find(kPrefMaxWorkspaceBytes);
  put("workspace_size", ws != pref->attrs.end() ? static_cast<long long>(ws->second.size()) : 0);
  put("workspace", ws != pref->attrs.end() ? bytes_value(ws->second) : -1);
  const Status s = static_cast<Status>(env_ll("MMAEMU_FAKE_CUBLASLT_HEURISTIC_STATUS", 0));
  if (s != kStatusSuccess)
    return s;
  const long long n = env_ll("MMAEMU_FAKE_CUBLASLT_RESULTS", 1);
  *returned = static_cast<int>(n < 0 ? 0 : (n > requested ? requested : n));
  for (int r = 0; r < *returned; ++r) {
    HeuristicResult res{};
    const std::vector<long long> ans = answer();
    for (int k = 0; k < 5; ++k)
      res.algo.data[k] = static_cast<std::uint64_t>(ans[static_cast<std::size_t>(k)]);
    res.state = kStatusSuccess;
    res.waves_count = 0.75f;
    results[r] = res;
  }
  return kStatusSuccess;
}
#endif

// The configuration attributes live in the first five words of the algorithm, in the order of
// MMAEMU_FAKE_CUBLASLT_ANSWER; each is written as 4 bytes (int32 / uint32, as cuBLASLt does).
__attribute__((visibility("default"))) Status
cublasLtMatmulAlgoConfigGetAttribute(const Algo* algo, int attr, void* buf, std::size_t size,
                                     std::size_t* written) {
  if (!algo || !written)
    return kInvalidValue;
  int word = -1;
  switch (attr) {
  case kConfigId:
    word = 0;
    break;
  case kConfigTileId:
    word = 1;
    break;
  case kConfigStagesId:
    word = 2;
    break;
  case kConfigSplitkNum:
    word = 3;
    break;
  case kConfigReductionScheme:
    word = 4;
    break;
  default:
    return kInvalidValue;
  }
  *written = 4;
  if (!buf)
    return kStatusSuccess; // a size query
  if (size < 4)
    return kInvalidValue;
  std::memset(buf, 0xAB, size); // bytes beyond what is written are garbage
  const auto v = static_cast<std::uint32_t>(algo->data[word]);
  std::memcpy(buf, &v, 4);
  return kStatusSuccess;
}

// For tests: what the last heuristic call was given, and counters. Keys: creates,
// create_had_context, heuristic_calls, requested, compute, scale_type, attrs_set, transa,
// transb, fast_accum, a_scale_pointer, b_scale_pointer, d_scale_pointer (each also with _set
// and _size), layoutN_type / _rows / _cols / _ld for N = 0 (A) .. 3 (D), workspace,
// workspace_size, live_objects. An unknown or unseen key is -999.
__attribute__((visibility("default"))) long long mmaemu_fake_cublaslt_value(const char* key) {
  Seen& s = seen();
  std::lock_guard lock(s.mu);
  if (std::string(key) == "live_objects")
    return s.live_objects;
  auto it = s.values.find(key);
  return it == s.values.end() ? -999 : it->second;
}

} // extern "C"
