// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/backend.hpp"

#include <cstdlib>
#include <mutex>
#include <utility>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu {

namespace {

std::mutex g_mutex;
BackendSelector g_selector; // empty: reference only

bool known_kernel(const std::string& k) {
  return k == "v1" || k == "v4" || k == "v9" || k == "tc3" || k == "h1" || k == "h4";
}

} // namespace

BackendSelector set_backend_selector(BackendSelector selector) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return std::exchange(g_selector, std::move(selector));
}

std::string effective_backend_name(const std::string& requested) {
  if (requested == "auto") {
    if (const char* env = std::getenv("MMAEMU_BACKEND"); env && *env)
      return env;
  }
  return requested;
}

ChainBackend reference_only_backend(const BackendRequest& request) {
  const std::string b = effective_backend_name(request.requested);
  if (b == "auto" || b == "reference") {
    ChainBackend r;
    if (b == "auto")
      r.fallbacks.push_back("cuda: this build has no CUDA backend; the reference model runs");
    return r;
  }
  if (b == "cuda" || b.rfind("cuda:", 0) == 0) {
    const std::string kernel = b.size() > 5 ? b.substr(5) : "";
    if (b != "cuda" && !known_kernel(kernel)) {
      throw ValueError("backend '" + request.requested + "': unknown CUDA kernel '" + kernel +
                       "' (v1, v4, v9, tc3, h1, h4)");
    }
    throw BackendUnavailableError("backend '" + b +
                                  "' is unavailable: this build has no CUDA backend and no "
                                  "CUDA device is visible");
  }
  throw ValueError("backend '" + request.requested +
                   "' is not auto, reference, cuda or cuda:<v1|v4|v9|tc3|h1|h4>");
}

ChainBackend choose_backend(const BackendRequest& request) {
  BackendSelector selector;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    selector = g_selector;
  }
  if (!selector)
    return reference_only_backend(request);
  return selector(request);
}

} // namespace mmaemu
