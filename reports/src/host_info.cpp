// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/host_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace mmaemu::reports {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    // x86: "model name"; some arm64 kernels: "Model" or only "CPU part".
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos)
        continue;
      std::string v = line.substr(colon + 1);
      const auto b = v.find_first_not_of(" \t");
      return b == std::string::npos ? "unknown" : v.substr(b);
    }
  }
  return "unknown";
}

} // namespace

std::string short_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0)
    return "unknown";
  std::string h(buf);
  if (const auto dot = h.find('.'); dot != std::string::npos)
    h.resize(dot);
  for (char& c : h) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok)
      c = '_';
  }
  return h.empty() ? "unknown" : h;
}

nlohmann::json host_info() {
  nlohmann::json j;
  j["cpu_model"] = cpu_model();
  j["cores"] = std::thread::hardware_concurrency();
  struct utsname u {};
  if (::uname(&u) == 0) {
    j["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  } else {
    j["os"] = "unknown";
  }
  j["hostname"] = short_hostname();
  return j;
}

} // namespace mmaemu::reports
