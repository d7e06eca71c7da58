// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The data files of emulator/data/, compiled into the library (generated at configure time).

#include <string>
#include <utility>
#include <vector>

namespace mmaemu::data {

const char* profiles_json();
// (table id, JSON text) for every emulator/data/splitk/<id>.json.
const std::vector<std::pair<std::string, std::string>>& splitk_tables_json();
// emulator/data/evidence.json and evidence_t4.json ("" when that file does not exist).
const char* evidence_json();
const char* evidence_t4_json();

} // namespace mmaemu::data
