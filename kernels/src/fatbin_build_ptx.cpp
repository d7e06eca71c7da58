// SPDX-License-Identifier: BSD-2-Clause
// What the compiler says about a fatbin build: the ptxas -v report of every entry function and
// architecture (registers, spills, shared memory, warnings), and the PTX lines that use
// fma.rz.bf16, which ptxas 12.0-13.3 miscompiles.

#include <regex>

#include "fatbin_build_internal.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::kernels {

using detail::contains_ci;
using detail::split_lines;

PtxasReport parse_ptxas_report(std::string_view output) {
  static const std::regex entry(R"(Compiling entry function '([^']+)' for 'sm_(\d+)[a-z]?')");
  static const std::regex props(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex bars(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  PtxasReport rep;
  PtxasArch* cur = nullptr;
  for (const auto& line : split_lines(output)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      PtxasArch a;
      a.function = m[1];
      a.arch = std::stoi(m[2]);
      rep.archs.push_back(a);
      cur = &rep.archs.back();
      continue;
    }
    if (contains_ci(line, "warning")) {
      if (cur)
        cur->warnings.push_back(line);
      else
        rep.warnings.push_back(line);
      continue;
    }
    if (!cur)
      continue;
    if (std::regex_search(line, m, props)) {
      cur->stack_frame = std::stoll(m[1]);
      cur->spill_stores = std::stoll(m[2]);
      cur->spill_loads = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, regs))
      cur->registers = std::stoi(m[1]);
    if (std::regex_search(line, m, bars))
      cur->barriers = std::stoi(m[1]);
    if (line.find("Used ") != std::string::npos && std::regex_search(line, m, smem))
      cur->smem = std::stoll(m[1]);
    if (line.find("Compile time") != std::string::npos)
      cur = nullptr; // this ptxas run is over; what follows belongs to the next or to nvcc
  }
  return rep;
}

std::vector<std::string> forbidden_ptx_lines(std::string_view ptx) {
  // fma.rz.bf16 is also the prefix of fma.rz.bf16x2; "fma.rz.ftz.bf16" does not exist.
  std::vector<std::string> hits;
  std::size_t n = 0;
  for (const auto& line : split_lines(ptx)) {
    ++n;
    if (line.find("fma.rz.bf16") != std::string::npos) {
      std::string t = line;
      t.erase(0, t.find_first_not_of(" \t"));
      hits.push_back("line " + std::to_string(n) + ": " + support::printable(t, 120));
    }
  }
  return hits;
}

} // namespace mmaemu::kernels
