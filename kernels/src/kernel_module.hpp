// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The module of a kernel (private to the kernels library): the stem of its source file ("v1"
// for v1.cu), which names its fatbin (<module>.fatbin) and its manifest entry. One home for the
// loader (module_loader.cpp) and the fatbin build and check (fatbin_build*.cpp).

#include <string>
#include <string_view>

#include "mmaemu/kernels/kernel_spec.hpp"

namespace mmaemu::kernels::detail {

inline std::string module_of(const KernelSpec& spec) {
  const auto dot = spec.source.rfind('.');
  return std::string(dot == std::string_view::npos ? spec.source : spec.source.substr(0, dot));
}

} // namespace mmaemu::kernels::detail
