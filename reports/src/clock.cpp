// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/clock.hpp"

#include <ctime>

namespace mmaemu::reports {

namespace {

std::string format_utc(std::chrono::system_clock::time_point t, const char* fmt) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, fmt, &tm);
  return std::string(buf, n);
}

} // namespace

std::string utc_date(std::chrono::system_clock::time_point t) {
  return format_utc(t, "%Y-%m-%d");
}

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  return format_utc(t, "%Y-%m-%dT%H:%M:%SZ");
}

bool is_date(const std::string& d) {
  if (d.size() != 10 || d[4] != '-' || d[7] != '-')
    return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (d[i] < '0' || d[i] > '9')
      return false;
  }
  const int month = std::stoi(d.substr(5, 2));
  const int day = std::stoi(d.substr(8, 2));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

} // namespace mmaemu::reports
