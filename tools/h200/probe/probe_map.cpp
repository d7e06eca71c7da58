// SPDX-License-Identifier: BSD-2-Clause
#include "probe_map.hpp"

#include "mmaemu/emulator/format.hpp"

namespace mmaemu::h200 {

MappedSplit table_entry_from_probe(const ProbeFields& p) {
  MappedSplit m;
  if (!p.ok) {
    m.why = "the query failed";
    return m;
  }
  if (p.scale_result) {
    m.why = "a scale_result query: the split-K table is not keyed by scale_result";
    return m;
  }
  const auto a = parse_format(p.a), b = parse_format(p.b), out = parse_format(p.out);
  if (!a || !b || !out) {
    m.why = "unknown dtype in " + p.a + " x " + p.b + " -> " + p.out;
    return m;
  }
  if (p.M < 1 || p.N < 1 || p.K < 1 || p.splitk_num < 0) {
    m.why = "sizes or split-K count out of range";
    return m;
  }
  SplitKEntry e;
  e.M = p.M;
  e.N = p.N;
  e.K = p.K;
  e.a = *a;
  e.b = *b;
  e.out = *out;
  e.fast = p.fast;
  e.verified = false;
  e.evidence = p.evidence;
  if (p.splitk_num <= 1) {
    e.S = 1;
    e.scheme = "none";
  } else {
    const bool fp32_partials =
        p.reduction_scheme == "compute_type" ||
        ((p.reduction_scheme == "inplace" || p.reduction_scheme == "output_type") &&
         *out == Format::fp32);
    if (!fp32_partials) {
      m.why = "split-K " + std::to_string(p.splitk_num) + " with reduction '" + p.reduction_scheme +
              "' into " + p.out +
              ": partials in the output type are not modelled by the hopper preset's scheme";
      return m;
    }
    e.S = p.splitk_num;
    e.scheme = "contiguous";
  }
  m.entry = e;
  return m;
}

} // namespace mmaemu::h200
