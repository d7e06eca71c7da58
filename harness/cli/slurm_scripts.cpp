// SPDX-License-Identifier: BSD-2-Clause
#include "slurm_scripts.hpp"

#include <cctype>

namespace mmaemu::cli {

namespace {

std::string header(const SlurmPlan& p, const std::string& job_name, const std::string& output,
                   unsigned minutes, const std::string& partition) {
  std::string s = "#!/bin/bash\n";
  auto opt = [&](const std::string& o) { s += "#SBATCH " + o + "\n"; };
  opt("--job-name=" + job_name);
  opt("--output=" + output);
  opt("--time=" + std::to_string(minutes));
  if (!partition.empty())
    opt("--partition=" + partition);
  if (!p.account.empty())
    opt("--account=" + p.account);
  if (!p.qos.empty())
    opt("--qos=" + p.qos);
  return s;
}

std::string exports(const SlurmPlan& p) {
  std::string s;
  if (!p.signing_key.empty())
    s += "export MMAEMU_SIGNING_KEY=" + sh_quote(p.signing_key.string()) + "\n";
  for (const auto& [k, v] : p.env)
    s += "export " + k + "=" + sh_quote(v) + "\n";
  return s;
}

std::string made_by(const SlurmPlan& p) {
  return "# Written by: " + p.made_by + "\n";
}

} // namespace

std::string sh_quote(const std::string& s) {
  bool plain = !s.empty();
  for (unsigned char c : s) {
    plain = plain && (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' ||
                      c == ':' || c == ',' || c == '=' || c == '@');
  }
  if (plain)
    return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string slurm_shard_script(const SlurmPlan& p) {
  const std::string run = p.run_dir.string();
  std::string s = header(p, "mmaemu-" + p.tier, run + "/slurm/" + p.log_name + "-%A_%a.out",
                         p.time_minutes, p.partition);
  s += "#SBATCH --array=0-" + std::to_string(p.shards - 1) + "\n";
  s += "#SBATCH --cpus-per-task=" + std::to_string(p.cpus_per_task) + "\n";
  if (p.gpus)
    s += "#SBATCH --gres=" + p.gres_type + ":" + std::to_string(p.gpus) + "\n";
  if (!p.mem.empty())
    s += "#SBATCH --mem=" + p.mem + "\n";
  for (const auto& e : p.sbatch_extra)
    s += "#SBATCH " + e + "\n";
  s += made_by(p);
  s += "# One array task per shard: task t runs shard t+1 of " + std::to_string(p.shards) +
       " and writes its validation log into\n"
       "# " +
       run +
       "/logs/<date>/. The array task id is the only thing the engine supplies: any engine\n"
       "# that runs this script with SLURM_ARRAY_TASK_ID=t (0 <= t < N) runs the same shard.\n"
       "set -u\n";
  s += ": \"${SLURM_ARRAY_TASK_ID:?this script is one task of a job array: SLURM_ARRAY_TASK_ID "
       "(0.." +
       std::to_string(p.shards - 1) + ") is not set}\"\n";
  s += "run=" + sh_quote(run) + "\n";
  s += "n=" + std::to_string(p.shards) + "\n";
  s += "k=$((SLURM_ARRAY_TASK_ID + 1))\n";
  s += "if [ \"$k\" -lt 1 ] || [ \"$k\" -gt \"$n\" ]; then\n"
       "  echo \"SLURM_ARRAY_TASK_ID=$SLURM_ARRAY_TASK_ID is not a task of this array "
       "(0..$((n - 1)))\" >&2\n"
       "  exit 2\n"
       "fi\n";
  s += "jobs=${SLURM_CPUS_PER_TASK:-" + std::to_string(p.cpus_per_task) + "}\n";
  s += exports(p);
  s += "mkdir -p \"$run/logs\" \"$run/tasks\"\n";
  s += "task=\"$run/tasks/shard$k.txt\"\n";
  // A line at the start and one at the end: a task stopped midway (cancelled, timed out, its
  // node lost) leaves a start without an end, which the merge job reports.
  s += "printf 'start shard %s/%s: job %s (array task %s_%s), attempt %s, host %s, %s\\n' \\\n"
       "  \"$k\" \"$n\" \"${SLURM_JOB_ID:-?}\" \"${SLURM_ARRAY_JOB_ID:-?}\" "
       "\"$SLURM_ARRAY_TASK_ID\" \\\n"
       "  \"${SLURM_RESTART_COUNT:-0}\" \"$(hostname)\" \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" "
       ">>\"$task\"\n";
  s += sh_quote(p.mmaemu.string());
  for (const auto& a : p.shard_args) {
    if (a == "{shard}")
      s += " \"$k/$n\"";
    else if (a == "{jobs}")
      s += " \"$jobs\"";
    else
      s += " " + sh_quote(a);
  }
  s += "\nrc=$?\n";
  s += "printf 'end shard %s/%s: exit %s, %s\\n' \"$k\" \"$n\" \"$rc\" "
       "\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" >>\"$task\"\n";
  s += "exit \"$rc\"\n";
  return s;
}

std::string slurm_merge_script(const SlurmPlan& p) {
  const std::string run = p.run_dir.string();
  std::string s =
      header(p, "mmaemu-" + p.tier + "-merge", run + "/slurm/" + p.log_name + "-merge-%j.out",
             p.merge_time_minutes, p.merge_partition);
  s += "#SBATCH --cpus-per-task=1\n";
  s += made_by(p);
  s += "# Submitted with --dependency=afterany:<array job>: it runs once every task has ended,\n"
       "# however it ended. A shard without a log is named with the engine's word on it and is\n"
       "# UNSUPPORTED in the merged log; the exit status is 0 only when the merged run is PASS.\n"
       "set -u\n";
  s += "run=" + sh_quote(run) + "\n";
  s += "n=" + std::to_string(p.shards) + "\n";
  s += "name=" + sh_quote(p.log_name) + "\n";
  s += "mmaemu=" + sh_quote(p.mmaemu.string()) + "\n";
  s += exports(p);
  s += R"SH(why=()
for k in $(seq 1 "$n"); do
  if compgen -G "$run/logs/*/$name-shard${k}of$n.json" >/dev/null ||
     compgen -G "$run/logs/*/$name-shard${k}of$n-*.json" >/dev/null; then
    continue
  fi
  task="$run/tasks/shard$k.txt"
  if [ ! -s "$task" ]; then
    w="its task never started"
  elif [ "$(tail -n 1 "$task" | cut -c1-4)" = "end " ]; then
    w="its task ended without a log ($(tail -n 1 "$task" | cut -c5-))"
  else
    w="its task was stopped midway ($(tail -n 1 "$task" | cut -c7-))"
  fi
  out=$(ls -t "$run/slurm/$name-"*"_$((k - 1)).out" 2>/dev/null | head -n 1)
  if [ -n "$out" ]; then
    said=$(grep -o 'CANCELLED AT [^*]*' "$out" | tail -n 1 | sed 's/ *$//')
    case "$said" in
      *"DUE TO TIME LIMIT"*) w="timed out: $w; Slurm: $said" ;;
      *"DUE TO"*) w="stopped: $w; Slurm: $said" ;;
      ?*) w="cancelled: $w; Slurm: $said" ;;
    esac
  fi
  echo "shard $k/$n has no log: $w"
  why+=(--why "$k=$w")
done
mkdir -p "$run/merged"
)SH";
  s += "\"$mmaemu\" report merge --shards \"$n\" --name \"$name\" \"$run/logs\" --out "
       "\"$run/merged/$name.json\"";
  if (!p.keys_dir.empty())
    s += " --keys " + sh_quote(p.keys_dir.string());
  s += " \"${why[@]}\"\nrc=$?\n";
  if (!p.keys_dir.empty()) {
    s += "if [ -d \"$run/merged\" ] && compgen -G \"$run/merged/*.json\" >/dev/null; then\n"
         "  \"$mmaemu\" report verify \"$run/merged\" --keys " +
         sh_quote(p.keys_dir.string()) +
         " || rc=1\n"
         "fi\n";
  }
  s += "echo \"merge of $name ($n shards): exit $rc\"\n";
  s += "exit \"$rc\"\n";
  return s;
}

std::string slurm_submit_script(const SlurmPlan& p) {
  const std::string run = p.run_dir.string();
  std::string s = "#!/bin/bash\n";
  s += made_by(p);
  s += "# The job array, then the merge job that waits for all its tasks (afterany).\n"
       "set -euo pipefail\n";
  s += "array=$(sbatch --parsable " + sh_quote(run + "/shard.sbatch") + ")\n";
  s += "array=${array%%;*}\n";
  s += "merge=$(sbatch --parsable --dependency=afterany:\"$array\" " +
       sh_quote(run + "/merge.sbatch") + ")\n";
  s += "merge=${merge%%;*}\n";
  s += "echo \"array job $array (" + std::to_string(p.shards) +
       " tasks), merge job $merge: the merged log will be " + run + "/merged/" + p.log_name +
       ".json\"\n";
  return s;
}

} // namespace mmaemu::cli
