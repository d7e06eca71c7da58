// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// What the split-K probe read for one call, in plain fields (no CUDA and no mmaemu type), so
// that the probe (splitk_probe.hpp) and the mapping into mmaemu's vocabulary (probe_map.hpp)
// share it without depending on each other.

#include <cstdint>
#include <string>

namespace mmaemu::h200 {

struct ProbeFields {
  std::int64_t M = 0, N = 0, K = 0;
  std::string a, b, out; // mmaemu dtype names
  bool fast = false;
  bool scale_result = false;
  bool ok = false;
  int splitk_num = 0;
  std::string reduction_scheme; // none, inplace, compute_type, output_type
  std::string evidence;         // library, version, algo/tile/stages: where it came from
};

} // namespace mmaemu::h200
