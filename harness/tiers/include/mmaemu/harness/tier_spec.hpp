// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Tier declarations (tiers/<name>.json, schema mmaemu-tier/1): what a tier runs, when, its
// budget, and the data, devices and environment variables it needs. Data, not code: the
// runner (tier_runner.hpp) reads them.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mmaemu::harness {

inline constexpr const char* kTierSchema = "mmaemu-tier/1";

// A tier file that cannot be read or does not follow the schema: one line that starts with
// the (escaped) file name, then line:column for JSON syntax errors, or the key path and what
// is wrong ("tiers/T9.json: key 'budget.seconds': expected a number, got string").
class TierFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// An environment variable that supplies data the tier needs.
struct EnvNeed {
  std::string name; // e.g. MMAEMU_TRUTH_DIR
  std::string what; // e.g. "the hardware ground truth (unpublished)"
};

// A device the tier needs: a CUDA device, optionally one whose name contains `name`.
struct DeviceNeed {
  std::string kind; // "cuda"
  std::string name; // substring of the device name, "" for any
  std::string why;
};

struct TierSpec {
  std::filesystem::path file;
  std::string file_sha256;
  std::string name, title, purpose, when;
  double budget_seconds = 0;
  std::optional<double> budget_data_mib;
  bool required_for_release = false;
  bool progress = false;           // a long tier: progress bar on a terminal
  std::vector<std::string> labels; // the ctest labels of the tests this tier stands for
  std::string kind;                // ctest, replay, truth, command, package, mutants
  nlohmann::json run;              // the kind's parameters (the "run" object)
  std::vector<EnvNeed> env;
  std::vector<DeviceNeed> devices;
  std::vector<std::string> files;    // paths relative to the source tree that must exist
  std::vector<std::string> commands; // mmaemu subcommands that must exist
  bool needs_build_tree = false;
  bool needs_source_tree = false;
};

// The kinds of run the runner knows.
const std::vector<std::string>& tier_kinds();

// Reads and checks one tier file: a regular file of at most support::kMaxTextBytes (a FIFO
// or a device is refused without blocking), JSON nested at most 32 levels, every key of the
// schema typed and range-checked at every level (the run parameters of each kind included),
// unknown keys refused. The name must equal the file's stem and be safe in file names
// (letters, digits, '_', '-', '.', at most 32 bytes, no ".."). Throws TierFileError only.
TierSpec load_tier_file(const std::filesystem::path& file);

// The same checks on a tier file's bytes; `file` names it in messages and its stem must equal
// the tier's name. Throws TierFileError only (std::bad_alloc aside).
TierSpec parse_tier_text(std::string_view text, const std::filesystem::path& file);

// Every *.json in `dir`, in tier order (T0, T1, T1s, T2, ...). Throws TierFileError (naming
// the first bad file, a *.json that is not a regular file included, or the folder if it is
// missing or holds no tier).
std::vector<TierSpec> load_tiers(const std::filesystem::path& dir);

// The tier called `name`; throws TierFileError listing the known names.
const TierSpec& find_tier(const std::vector<TierSpec>& tiers, const std::string& name);

} // namespace mmaemu::harness
