// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The environment variables that can change what a tier computes or which data it reads.

#include <nlohmann/json.hpp>
#include <string>

namespace mmaemu::reports {

// Every MMAEMU_* variable that is set, except those that only say where logs go or which
// key signs them (MMAEMU_LOG_DIR, MMAEMU_SIGNING_KEY), plus CUDA_VISIBLE_DEVICES when set.
// An object name -> value, sorted.
nlohmann::json result_environment();

// Whether `name` is one of the variables result_environment() records.
bool changes_results(const std::string& name);

} // namespace mmaemu::reports
