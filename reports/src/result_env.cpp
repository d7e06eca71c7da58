// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/result_env.hpp"

#include <unistd.h>

extern char** environ;

namespace mmaemu::reports {

bool changes_results(const std::string& name) {
  if (name == "CUDA_VISIBLE_DEVICES")
    return true;
  if (name.rfind("MMAEMU_", 0) != 0)
    return false;
  // Where logs go and who signs them do not change what was computed.
  return name != "MMAEMU_LOG_DIR" && name != "MMAEMU_SIGNING_KEY";
}

nlohmann::json result_environment() {
  nlohmann::json j = nlohmann::json::object();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos)
      continue;
    const std::string name = kv.substr(0, eq);
    if (changes_results(name))
      j[name] = kv.substr(eq + 1);
  }
  return j;
}

} // namespace mmaemu::reports
