// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The batch scripts of `mmaemu cluster slurm`: a job array with one task per shard, and the
// merge job that depends on it. Text only: cmd_cluster.cpp decides what goes in (from the tier
// file and the options), writes the files and submits them.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mmaemu::cli {

struct SlurmPlan {
  std::string tier;     // T1
  std::string log_name; // the shard logs' stem: T1, or mutants / mutants_gpu for T4 / T4g
  std::size_t shards = 1;
  std::filesystem::path run_dir; // absolute: logs/, slurm/, tasks/, merged/ and the scripts
  std::filesystem::path mmaemu;  // absolute: the program every task runs
  // The shard's command after the program, each word a literal except the words "{shard}"
  // (k/N) and "{jobs}" (the task's CPUs), which the script fills in.
  std::vector<std::string> shard_args;
  unsigned time_minutes = 10;       // a shard task's --time
  unsigned merge_time_minutes = 10; // the merge job's --time
  unsigned cpus_per_task = 1;
  std::string partition;       // of the shard tasks ("" = the cluster's default)
  std::string merge_partition; // of the merge job
  unsigned gpus = 0;           // per task, through --gres; 0: none
  std::string gres_type = "gpu";
  std::string account, qos, mem;
  std::vector<std::string> sbatch_extra;                // more #SBATCH options, as given
  std::vector<std::pair<std::string, std::string>> env; // exported by both scripts
  std::filesystem::path signing_key;                    // MMAEMU_SIGNING_KEY of both, if set
  std::filesystem::path keys_dir; // the merge verifies shards and merged log against it
  std::string made_by;            // the command line that wrote the scripts
};

// The text of a value as one shell word: single-quoted unless it is plainly safe.
std::string sh_quote(const std::string& s);

// shard.sbatch: #SBATCH --array=0-(N-1); task t runs shard t+1 of N, its log into
// <run>/logs/, its output into <run>/slurm/, and a line at its start and its end into
// <run>/tasks/shard<k>.txt (a task killed midway has no end line).
std::string slurm_shard_script(const SlurmPlan& p);

// merge.sbatch: for each shard without a log, the engine's word (from tasks/ and the task's
// output: never started, cancelled, timed out); then `mmaemu report merge --shards N` into
// <run>/merged/, signed when a key is given, verified against keys_dir when given. Its exit
// status is 0 only when the merged run is PASS.
std::string slurm_merge_script(const SlurmPlan& p);

// submit.sh: the two sbatch calls `--submit` makes, for submitting by hand.
std::string slurm_submit_script(const SlurmPlan& p);

} // namespace mmaemu::cli
