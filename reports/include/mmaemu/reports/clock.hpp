// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Dates and timestamps of validation logs, always UTC so that a log's folder does not depend
// on the machine's time zone.

#include <chrono>
#include <string>

namespace mmaemu::reports {

// "YYYY-MM-DD" of `t` in UTC.
std::string utc_date(std::chrono::system_clock::time_point t = std::chrono::system_clock::now());

// "YYYY-MM-DDTHH:MM:SSZ" of `t`.
std::string
utc_timestamp(std::chrono::system_clock::time_point t = std::chrono::system_clock::now());

// Whether `date` is a valid "YYYY-MM-DD" (month 1..12, day 1..31).
bool is_date(const std::string& date);

} // namespace mmaemu::reports
