// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/splitk_live_query.hpp"

#include <cctype>
#include <map>
#include <mutex>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/cublaslt_api.hpp"
#include "mmaemu/kernels/cublaslt_library.hpp"
#include "mmaemu/kernels/driver_api.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

namespace {

std::mutex& query_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

// One cuBLASLt handle per device ordinal, created on first use and kept (cuBLASLt's handles
// are never destroyed at exit: the library may already be finalising).
std::map<int, cublaslt::Handle>& handles() {
  static auto* h = new std::map<int, cublaslt::Handle>;
  return *h;
}

// The leading dotted numbers of a version text: "12.8.3.14" -> {12, 8, 3, 14}, "13 (CUDA 13)"
// -> {13}, "unrecorded" -> {}.
std::vector<int> version_numbers(const std::string& text) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    int v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && v < 100000)
      v = v * 10 + (text[i++] - '0');
    out.push_back(v);
    if (i + 1 < text.size() && text[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(text[i + 1])))
      ++i;
    else
      break;
  }
  return out;
}

int capability_of(const std::string& text) {
  const std::vector<int> v = version_numbers(text);
  return v.size() == 2 ? v[0] * 10 + v[1] : -1;
}

std::string device_text(const driver::Device& d) {
  return "device " + std::to_string(d.ordinal) + " is " + d.name + " (sm_" + std::to_string(d.cc) +
         ", " + std::to_string(d.sm_count) + " SMs)";
}

// Restores the calling thread's context when the query is done.
struct CurrentContext {
  const driver::Api& api;
  driver::CUcontext saved = nullptr;
  bool have = false;
  explicit CurrentContext(const driver::Api& a) : api(a) {
    have = api.cuCtxGetCurrent(&saved) == driver::kCudaSuccess;
  }
  ~CurrentContext() {
    if (have)
      api.cuCtxSetCurrent(saved);
  }
};

} // namespace

LiveQueryResult live_splitk_query(const SplitKQuery& q, const Profile& p, const LiveMap& map) {
  LiveQueryResult r;
  if (driver::cuda_disabled()) {
    r.why = "MMAEMU_DISABLE_CUDA=1 (nothing was opened)";
    return r;
  }
  std::string why;
  const driver::Api* dapi = driver::try_api(&why);
  if (!dapi) {
    // No library, a failed cuInit (CUDA_ERROR_NO_DEVICE) or missing entry points.
    r.why = "no CUDA device is visible (" + why + ")";
    return r;
  }
  if (driver::visible_device_count() == 0) {
    r.why = "no CUDA device is visible";
    return r;
  }
  const int want_cc = capability_of(p.capability);
  std::optional<driver::Device> dev;
  std::string seen;
  try {
    for (const driver::Device& d : driver::devices()) {
      if (d.name == p.gpu_name && d.sm_count == p.sm_count && d.cc == want_cc) {
        dev = d;
        break;
      }
      seen += (seen.empty() ? "" : "; ") + device_text(d);
    }
  } catch (const MmaemuError& e) {
    r.why = std::string("the CUDA devices could not be examined: ") + e.what();
    return r;
  }
  if (!dev) {
    r.why = "no visible CUDA device is the profile's GPU (" + p.gpu_name + ", sm_" +
            std::to_string(want_cc) + ", " + std::to_string(p.sm_count) + " SMs): " + seen;
    return r;
  }
  const cublaslt::Library* lib = cublaslt::try_library(&why);
  if (!lib) {
    r.why = why;
    return r;
  }
  const std::vector<int> want = version_numbers(p.cublaslt_version);
  const std::vector<int> have{static_cast<int>(lib->version / 10000),
                              static_cast<int>((lib->version / 100) % 100),
                              static_cast<int>(lib->version % 100)};
  if (want.empty()) {
    r.why = "profile '" + p.name + "' records no cuBLASLt version ('" +
            support::printable(p.cublaslt_version) + "'), so no live answer describes it";
    return r;
  }
  for (std::size_t i = 0; i < want.size() && i < have.size(); ++i) {
    if (want[i] != have[i]) {
      r.why = "cuBLASLt " + lib->version_text + " (" + support::printable(lib->path, 256) +
              ") is not the profile's cuBLASLt " + support::printable(p.cublaslt_version);
      return r;
    }
  }
  cublaslt::HeuristicQuery hq;
  hq.M = q.M;
  hq.N = q.N;
  hq.K = q.K;
  hq.a_type = *cublaslt::data_type_of(format_name(q.a_dtype));
  hq.b_type = *cublaslt::data_type_of(format_name(q.b_dtype));
  hq.out_type = *cublaslt::data_type_of(format_name(q.out_dtype));
  hq.fast_accum = q.use_fast_accum;
  hq.scale_result = q.scale_result;
  hq.workspace = p.workspace_bytes < 0 ? 0 : static_cast<std::uint64_t>(p.workspace_bytes);
  cublaslt::HeuristicAnswer a;
  {
    std::lock_guard lock(query_mutex());
    try {
      CurrentContext restore(*dapi);
      driver::make_current(*dev);
      cublaslt::Handle& h = handles()[dev->ordinal];
      if (!h) {
        const cublaslt::Status s = lib->api.create(&h);
        if (s != cublaslt::kStatusSuccess) {
          h = nullptr;
          r.why = "cuBLASLt " + lib->version_text + ": " +
                  cublaslt::status_text(lib->api, "cublasLtCreate", s) + " on device " +
                  std::to_string(dev->ordinal);
          return r;
        }
      }
      a = cublaslt::ask_heuristic(lib->api, h, hq);
    } catch (const MmaemuError& e) {
      r.why = std::string("device ") + std::to_string(dev->ordinal) +
              " could not be made current: " + e.what();
      return r;
    }
  }
  if (!a.ok) {
    r.why = "cuBLASLt " + lib->version_text + " on " + dev->name + ": " + a.error;
    return r;
  }
  r.asked = true;
  r.answer.device_name = dev->name;
  r.answer.cc = dev->cc;
  r.answer.sm_count = dev->sm_count;
  r.answer.cublaslt_version = lib->version_text;
  r.answer.library = support::printable(lib->path, 256);
  r.answer.algo_id = a.algo_id;
  r.answer.tile_id = static_cast<int>(a.tile_id);
  r.answer.stages_id = static_cast<int>(a.stages_id);
  r.answer.splitk_num = a.splitk_num;
  r.answer.reduction_scheme = cublaslt::reduction_scheme_name(a.reduction_scheme);
  r.decision = decision_from_answer(r.answer, q, p, map, r.why);
  return r;
}

std::optional<SplitDecision> splitk_live_query(const SplitKQuery& q, const Profile& p,
                                               std::string& why) {
  LiveQueryResult r = live_splitk_query(q, p);
  if (!r.decision)
    why = r.why;
  return r.decision;
}

void install_splitk_live_query() {
  set_splitk_live_query(splitk_live_query);
}

} // namespace mmaemu::kernels
