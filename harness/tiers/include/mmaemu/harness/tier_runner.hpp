// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The one tier runner: checks a tier's prerequisites (environment, device, data, build tree),
// runs it by kind, and returns its result. Writing the log is the caller's (tier_log.hpp).

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/harness/tier_devices.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/harness/tier_result.hpp"
#include "mmaemu/harness/tier_spec.hpp"

namespace mmaemu::harness {

// --shard k/N: this run takes cases k-1, k-1+N, k-1+2N, ... (k counts from 1).
struct Shard {
  std::size_t index = 1, count = 1;
  bool active() const { return count > 1; }
  bool selects(std::size_t i) const { return i % count == index - 1; }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// Parses "k/N" with 1 <= k <= N; throws ValueError naming --shard and the value.
Shard parse_shard(const std::string& text);

// Progress of a long tier: a bar that redraws one line on a terminal, plain lines otherwise.
class Progress {
public:
  virtual ~Progress() = default;
  virtual void begin(std::size_t total, const std::string& what) = 0;
  virtual void step(std::size_t done, const std::string& label) = 0;
  virtual void end() = 0;
};

// A bar when `tty`, else one line per step; both on `out`.
std::unique_ptr<Progress> make_progress(bool tty, std::FILE* out, const std::string& tier);

struct RunOptions {
  Layout layout;
  Shard shard;
  std::filesystem::path out_dir; // artefacts (T2 replay.json, T7 work); empty: tier's choice
  std::optional<std::filesystem::path> coverage_dir; // T0: run gcovr into this folder
  std::optional<std::filesystem::path> compare;      // T2: a previous replay.json
  unsigned jobs = 0;                                 // ctest -j; 0: hardware threads
  bool verbose = false;
  Progress* progress = nullptr;
  std::FILE* text = stdout; // where tiers print their own lines
  // T2 test hook: called between the two snapshots of the truth.
  std::function<void()> between_snapshots;
  CudaProbe cuda; // filled by run_tier if `cuda_probed` is false
  bool cuda_probed = false;
  // Mutants kind (T4, `mmaemu mutants run`): which mutants and how.
  struct Mutants {
    std::string tier;            // cpu or gpu; empty: the tier file's (default cpu)
    std::string only;            // regex on the mutant id; empty: all
    std::string mode = "schema"; // schema or rewrite
    double mutant_timeout_s = 600;
    bool keep_workspace = false;
    std::filesystem::path catalogue; // empty: the tier file's, in the source tree
  } mutants;
};

// The one-line reason why `tier` cannot run here, if it cannot: a missing environment
// variable, device, build tree, file or command, each named.
std::optional<std::string> missing_prerequisite(const TierSpec& tier, const RunOptions& opt);

// Runs the tier. Missing prerequisites give UNSUPPORTED with the reason; nothing that did not
// run is reported as PASS. Throws only for bad arguments (ValueError).
TierResult run_tier(const TierSpec& tier, RunOptions opt);

} // namespace mmaemu::harness
