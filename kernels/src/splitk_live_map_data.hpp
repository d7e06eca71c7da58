// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// kernels/data/splitk_live_map.json, compiled into the library (generated at configure time).

namespace mmaemu::kernels::data {

const char* splitk_live_map_json();

} // namespace mmaemu::kernels::data
