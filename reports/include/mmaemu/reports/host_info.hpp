// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The machine a tier ran on, as it goes into a validation log.

#include <nlohmann/json.hpp>
#include <string>

namespace mmaemu::reports {

// {"cpu_model": from /proc/cpuinfo ("unknown" if absent), "cores": hardware threads,
//  "os": "<sysname> <release> <machine>" from uname, "hostname": short host name}.
nlohmann::json host_info();

// The host name up to the first '.', with characters outside [A-Za-z0-9_-] replaced by '_'
// (it becomes part of log file names).
std::string short_hostname();

} // namespace mmaemu::reports
