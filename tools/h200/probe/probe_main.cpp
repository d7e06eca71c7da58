// SPDX-License-Identifier: BSD-2-Clause
// splitk_probe: asks cuBLASLt which algorithm (split-K count, reduction scheme, tile, stages)
// its heuristic picks for each call of a query list, as torch._scaled_mm sets the call up.
//
//   splitk_probe --queries FILE --json OUT [--workspace BYTES] [--lib libcublasLt.so.N]
//
// FILE: lines "M N K a b out fast scale_result" (tools/h200/record.py --emit-probe-queries).
// Exit 0: every query answered; 1: some query failed (named in the JSON); 2: bad arguments or
// input; 4: nothing could be tested (no CUDA driver, no cuBLASLt, no device).

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "splitk_probe.hpp"

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr,
               "splitk_probe: %s\nusage: splitk_probe --queries FILE --json OUT "
               "[--workspace BYTES] [--lib NAME]\n",
               why.c_str());
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  using namespace mmaemu::h200;
  std::string queries_path, json_path, lib;
  std::uint64_t workspace = 33554432; // the h200 profile's (torch's default on sm_90)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage("option '" + arg + "' needs a value");
    const std::string val = argv[++i];
    if (arg == "--queries")
      queries_path = val;
    else if (arg == "--json")
      json_path = val;
    else if (arg == "--lib")
      lib = val;
    else if (arg == "--workspace") {
      char* end = nullptr;
      workspace = std::strtoull(val.c_str(), &end, 10);
      if (val.empty() || *end != '\0')
        return usage("--workspace '" + val + "' is not a decimal byte count");
    } else {
      return usage("unknown option '" + arg + "'");
    }
  }
  if (queries_path.empty() || json_path.empty())
    return usage("--queries and --json are required");
  std::ifstream in(queries_path);
  if (!in)
    return usage("cannot read '" + queries_path + "'");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<ProbeQuery> queries;
  try {
    queries = parse_queries(text.str(), workspace);
  } catch (const std::exception& e) {
    return usage(queries_path + ": " + e.what());
  }
  LtApi api;
  if (auto why = load_lt_api(api, lib)) {
    std::fprintf(stderr, "splitk_probe: nothing could be tested: %s\n", why->what.c_str());
    return 4;
  }
  LtHandle handle = nullptr;
  const mmaemu::kernels::cublaslt::Status s = api.create(&handle);
  if (s != mmaemu::kernels::cublaslt::kStatusSuccess) {
    std::fprintf(stderr,
                 "splitk_probe: nothing could be tested: cublasLtCreate returned cublasStatus "
                 "%d (no usable CUDA device?)\n",
                 static_cast<int>(s));
    return 4;
  }
  std::vector<ProbeAnswer> answers;
  int failed = 0;
  for (const auto& q : queries) {
    answers.push_back(probe_one(api, handle, q));
    failed += answers.back().ok ? 0 : 1;
  }
  api.destroy(handle);
  const std::string out =
      answers_json(answers, lib.empty() ? "libcublasLt (default)" : lib, api.get_version());
  std::ofstream o(json_path + ".tmp");
  o << out;
  o.close();
  if (!o || std::rename((json_path + ".tmp").c_str(), json_path.c_str()) != 0) {
    std::fprintf(stderr, "splitk_probe: cannot write '%s'\n", json_path.c_str());
    return 2;
  }
  std::printf("splitk_probe: %zu queries, %d failed, cuBLASLt %zu\n", answers.size(), failed,
              api.get_version());
  return failed ? 1 : 0;
}
