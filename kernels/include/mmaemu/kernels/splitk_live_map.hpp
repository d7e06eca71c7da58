// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// From cuBLASLt's heuristic answer to a split decision, as data (kernels/data/
// splitk_live_map.json): a row maps an answer only where a measurement covers that algorithm
// on that platform, and names its evidence id; any other answer declines with a reason that
// names the algorithm. Pure: no CUDA, no I/O.

#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"

namespace mmaemu::kernels {

// What the live query read, and where.
struct LiveAnswer {
  std::string device_name; // "NVIDIA H200"
  int cc = 0;              // major * 10 + minor
  int sm_count = 0;
  std::string cublaslt_version; // "13.1.0" (cublasLtGetVersion)
  std::string library;          // the path dlopen accepted
  int algo_id = -1;
  int tile_id = 0;
  int stages_id = 0;
  int splitk_num = 0;
  std::string reduction_scheme; // none, inplace, compute_type, output_type, unknown(N)
};

struct LiveMapRow {
  std::string id;
  std::string evidence; // an evidence id (docs/semantics.md)
  int cc = 0;           // "capability" "9.0" -> 90
  int cublaslt_major = 0;
  int algo_id = 0;
  int stages_id = 0;
  bool split = false; // "splitk": "1" (false) or ">1" (true)
  std::vector<std::string> reduction_schemes;
  std::vector<Format> a, b;
  std::vector<bool> use_fast_accum;
  std::string scheme; // the decision's scheme: "none" (S = 1) or a split scheme
  std::string why;
};

// A (GPU, cuBLASLt) pair whose GEMM recordings are committed: its live decisions are verified.
struct RecordedPair {
  std::string gpu_name;
  std::string cublaslt_version;
  std::string recordings;
};

struct LiveMap {
  std::vector<LiveMapRow> rows;
  std::vector<RecordedPair> recorded_pairs;
};

// Parses the format mmaemu-splitk-live-map/1; ValueError naming the field on malformed data.
LiveMap parse_live_map_json(const std::string& json_text);

// kernels/data/splitk_live_map.json, compiled in.
const LiveMap& shipped_live_map();

// "ALGO_ID 66, TILE_ID 21, STAGES_ID 36, SPLITK_NUM 4, reduction compute_type".
std::string algorithm_text(const LiveAnswer& a);

// The decision for `answer` to call `q` on profile `p`, or nothing with `why` naming the
// algorithm and what no row covers. The decision's note names the answer, the row and its
// evidence; `evidence` is the row's evidence id; verified only for a recorded pair.
std::optional<SplitDecision> decision_from_answer(const LiveAnswer& answer, const SplitKQuery& q,
                                                  const Profile& p, const LiveMap& map,
                                                  std::string& why);

} // namespace mmaemu::kernels
