// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What the three parts of the evidence (evidence.cpp: the registry; evidence_t4.cpp: the T4
// extract; evidence_status.cpp: the statuses) share: the source kinds and list helpers.

#include <algorithm>
#include <string>
#include <vector>

#include "mmaemu/emulator/evidence.hpp"

namespace mmaemu::evidence::detail {

inline constexpr const char* kRecording = "hardware_recording";
inline constexpr const char* kMeasurement = "published_measurement";

inline bool has(const std::vector<Mode>& v, Mode m) {
  return std::find(v.begin(), v.end(), m) != v.end();
}

inline std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

inline void add_unique(std::vector<std::string>& v, const std::string& x) {
  if (std::find(v.begin(), v.end(), x) == v.end())
    v.push_back(x);
}

} // namespace mmaemu::evidence::detail
