// SPDX-License-Identifier: BSD-2-Clause
#include "splitk_probe.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace mmaemu::h200 {

namespace {

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

} // namespace

std::optional<Unavailable> load_lt_api(LtApi& api, const std::string& lib) {
  // cuBLASLt loads without a driver; the heuristic needs one and a device.
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
    const char* e = dlerror();
    return Unavailable{"no CUDA driver: libcuda.so.1 cannot be opened (" +
                       std::string(e ? e : "?") + ")"};
  }
  void* h = nullptr;
  std::string tried;
  const std::vector<std::string> names =
      lib.empty()
          ? std::vector<std::string>{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}
          : std::vector<std::string>{lib};
  for (const auto& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h)
      break;
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + n + ": " + (e ? e : "?");
  }
  if (!h)
    return Unavailable{"no cuBLASLt: " + tried};
  const std::string missing = kernels::cublaslt::resolve_symbols(h, api);
  if (!missing.empty())
    return Unavailable{"cuBLASLt lacks " + missing};
  return std::nullopt;
}

ProbeAnswer probe_one(const LtApi& api, LtHandle handle, const ProbeQuery& q) {
  ProbeAnswer r;
  r.q = q;
  const auto ta = kernels::cublaslt::data_type_of(q.a), tb = kernels::cublaslt::data_type_of(q.b),
             tout = kernels::cublaslt::data_type_of(q.out);
  if (!ta || !tb || !tout) {
    r.error = "unknown dtype in " + q.a + " x " + q.b + " -> " + q.out;
    return r;
  }
  kernels::cublaslt::HeuristicQuery hq;
  hq.M = q.M;
  hq.N = q.N;
  hq.K = q.K;
  hq.a_type = *ta;
  hq.b_type = *tb;
  hq.out_type = *tout;
  hq.fast_accum = q.fast;
  hq.scale_result = q.scale_result;
  hq.workspace = q.workspace;
  const kernels::cublaslt::HeuristicAnswer a = kernels::cublaslt::ask_heuristic(api, handle, hq);
  r.ok = a.ok;
  r.error = a.error;
  r.algo_id = a.algo_id;
  r.splitk_num = a.splitk_num;
  r.reduction_scheme = a.reduction_scheme;
  r.tile_id = a.tile_id;
  r.stages_id = a.stages_id;
  r.waves = a.waves;
  return r;
}

std::vector<ProbeQuery> parse_queries(const std::string& text, std::uint64_t workspace) {
  std::vector<ProbeQuery> out;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos)
      line.resize(hash);
    std::istringstream ls(line);
    ProbeQuery q;
    q.workspace = workspace;
    int fast = -1, sr = -1;
    if (!(ls >> q.M)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      throw std::runtime_error("query line " + std::to_string(lineno) + ": expected M");
    }
    std::string rest;
    if (!(ls >> q.N >> q.K >> q.a >> q.b >> q.out >> fast >> sr) || (ls >> rest) ||
        (fast != 0 && fast != 1) || (sr != 0 && sr != 1) || q.M < 1 || q.N < 1 || q.K < 1) {
      throw std::runtime_error("query line " + std::to_string(lineno) +
                               ": expected 'M N K a b out fast(0|1) scale_result(0|1)'");
    }
    for (const auto* d : {&q.a, &q.b, &q.out}) {
      if (!kernels::cublaslt::data_type_of(*d))
        throw std::runtime_error("query line " + std::to_string(lineno) + ": dtype '" + *d +
                                 "' is not e4m3, e5m2, bf16, fp16 or fp32");
    }
    q.fast = fast == 1;
    q.scale_result = sr == 1;
    out.push_back(q);
  }
  return out;
}

ProbeFields fields_of(const ProbeAnswer& a, std::size_t cublaslt_version) {
  ProbeFields f;
  f.M = a.q.M;
  f.N = a.q.N;
  f.K = a.q.K;
  f.a = a.q.a;
  f.b = a.q.b;
  f.out = a.q.out;
  f.fast = a.q.fast;
  f.scale_result = a.q.scale_result;
  f.ok = a.ok;
  f.splitk_num = a.splitk_num;
  f.reduction_scheme = reduction_scheme_name(a.reduction_scheme);
  f.evidence = "cublasLtMatmulAlgoGetHeuristic (1 result, workspace " +
               std::to_string(a.q.workspace) + " B), cuBLASLt " + std::to_string(cublaslt_version) +
               ": algo " + std::to_string(a.algo_id) + ", tile " + std::to_string(a.tile_id) +
               ", stages " + std::to_string(a.stages_id) + ", split-K " +
               std::to_string(a.splitk_num) + ", reduction " + f.reduction_scheme;
  return f;
}

std::string answers_json(const std::vector<ProbeAnswer>& answers, const std::string& library,
                         std::size_t version) {
  std::ostringstream o;
  o << "{\"format\": \"mmaemu-splitk-probe/1\", \"library\": " << json_string(library)
    << ", \"cublaslt_version\": " << version << ", \"queries\": [";
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const ProbeAnswer& a = answers[i];
    o << (i ? ",\n  " : "\n  ") << "{\"M\": " << a.q.M << ", \"N\": " << a.q.N
      << ", \"K\": " << a.q.K << ", \"a\": " << json_string(a.q.a)
      << ", \"b\": " << json_string(a.q.b) << ", \"out\": " << json_string(a.q.out)
      << ", \"fast\": " << (a.q.fast ? "true" : "false")
      << ", \"scale_result\": " << (a.q.scale_result ? "true" : "false")
      << ", \"workspace\": " << a.q.workspace << ", \"ok\": " << (a.ok ? "true" : "false");
    if (a.ok) {
      o << ", \"algo_id\": " << a.algo_id << ", \"splitk_num\": " << a.splitk_num
        << ", \"reduction_scheme\": " << json_string(reduction_scheme_name(a.reduction_scheme))
        << ", \"tile_id\": " << a.tile_id << ", \"stages_id\": " << a.stages_id
        << ", \"waves\": " << a.waves;
    } else {
      o << ", \"error\": " << json_string(a.error);
    }
    o << "}";
  }
  o << "\n]}\n";
  return o.str();
}

} // namespace mmaemu::h200
