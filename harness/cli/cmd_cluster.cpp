// SPDX-License-Identifier: BSD-2-Clause
// mmaemu cluster slurm TIER --shards N --run-dir DIR [--partition P] [--gpu-partition P]
//                     [--merge-partition P] [--gpus G] [--gres-type T] [--cpus-per-task C]
//                     [--mem M] [--time-limit MIN] [--time-factor F] [--merge-time MIN]
//                     [--account A] [--qos Q] [--sbatch-option OPT]... [--env NAME=VALUE]...
//                     [--only REGEX] [--mutant-timeout S] [--signing-key KEY] [--keys DIR]
//                     [--build-dir DIR] [--tiers DIR] [--mmaemu PATH]
//                     [--submit [--hold-merge] [--sbatch PATH]]
// Writes a Slurm job array (one task per shard of the tier) and its merge job into the run
// folder, and with --submit submits both.

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "commands.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/process.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "read_inputs.hpp"
#include "slurm_scripts.hpp"
#include "tier_args.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ClusterArgs {
  std::string tier, run_dir, partition, gpu_partition, merge_partition,
      gres_type = "gpu", mem, account, qos, only, signing_key, keys, build_dir, tiers, mmaemu,
      sbatch = "sbatch";
  JsonOption json;
  std::size_t shards = 0;
  int gpus = -1; // -1: 1 where the tier needs a device, else none
  unsigned cpus_per_task = 1, time_limit = 0, merge_time = 10;
  double time_factor = 2, mutant_timeout = 0;
  std::vector<std::string> sbatch_options, env;
  bool submit = false, hold_merge = false, trust_tiers = false;
};

// The command line, as a shell would take it back.
std::string made_by() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg, out;
  while (std::getline(in, arg, '\0'))
    out += (out.empty() ? "" : " ") + sh_quote(arg);
  return out;
}

// A Slurm name (partition, account, qos, gres type): what sbatch takes without quoting.
void check_name(const std::string& option, const std::string& v) {
  static const std::regex re("[A-Za-z0-9_.,:+-]{1,128}");
  if (!v.empty() && !std::regex_match(v, re))
    throw std::invalid_argument(option + ": '" + shown(v) + "' is not a Slurm name");
}

// The job id `sbatch --parsable` printed ("123" or "123;cluster").
std::string job_id(const support::ProcessResult& r, const std::string& what) {
  if (r.exit_code != 0) {
    throw std::runtime_error("sbatch of the " + what + " failed (exit " +
                             std::to_string(r.exit_code) +
                             "): " + shown(r.error.empty() ? r.output : r.error));
  }
  static const std::regex re(R"(^\s*([0-9]+)(;\S*)?\s*$)");
  std::smatch m;
  if (!std::regex_match(r.output, m, re))
    throw std::runtime_error("sbatch of the " + what + " printed no job id: " + shown(r.output));
  return m[1].str();
}

int run_slurm(const ClusterArgs& a) {
  SlurmPlan p;
  harness::Layout layout;
  const harness::TierSpec* tier = nullptr;
  std::vector<harness::TierSpec> tiers;
  std::string mutant_tier;
  try {
    harness::LayoutOverrides o;
    o.tiers_dir = a.tiers;
    o.build_dir = a.build_dir;
    layout = harness::discover_layout(o);
    a.json.check(joined(files_under(layout.tiers_dir), a.signing_key.empty()
                                                           ? std::vector<fs::path>{}
                                                           : std::vector<fs::path>{a.signing_key}));
    check_tiers_option(a.tiers, layout, a.trust_tiers);
    tiers = harness::load_tiers(layout.tiers_dir);
    tier = &harness::find_tier(tiers, a.tier);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  try {
    if (tier->kind == "package") {
      throw std::invalid_argument(tier->name + " (kind package) builds and installs one package: " +
                                  "it has no shards to spread over a job array");
    }
    if (a.shards < 1 || a.shards > 10000)
      throw std::invalid_argument("--shards: expected 1 to 10000");
    if (a.run_dir.empty())
      throw std::invalid_argument("--run-dir: required");
    for (const auto& [opt, v] : {std::pair{"--partition", a.partition},
                                 {"--gpu-partition", a.gpu_partition},
                                 {"--merge-partition", a.merge_partition},
                                 {"--gres-type", a.gres_type},
                                 {"--account", a.account},
                                 {"--qos", a.qos},
                                 {"--mem", a.mem}}) {
      check_name(opt, v);
    }
    for (const auto& s : a.sbatch_options) {
      if (s.rfind("--", 0) != 0 || s.find('\n') != std::string::npos)
        throw std::invalid_argument("--sbatch-option: '" + shown(s) +
                                    "' is not one long sbatch option (--name=value)");
    }
    static const std::regex env_re("[A-Za-z_][A-Za-z0-9_]*=[^\n]*");
    for (const auto& e : a.env) {
      if (!std::regex_match(e, env_re))
        throw std::invalid_argument("--env: '" + shown(e) + "' is not NAME=VALUE");
      const auto eq = e.find('=');
      p.env.emplace_back(e.substr(0, eq), e.substr(eq + 1));
    }
    const bool mutants = tier->kind == "mutants";
    if (mutants)
      mutant_tier = tier->run.value("mutant_tier", std::string("cpu"));
    const bool mutants_cli = mutants && tier->name == (mutant_tier == "gpu" ? "T4g" : "T4");
    if ((!a.only.empty() || a.mutant_timeout > 0) && !mutants_cli) {
      throw std::invalid_argument("--only and --mutant-timeout are options of the mutation tiers "
                                  "T4 and T4g, not of " +
                                  tier->name);
    }
    if ((tier->needs_build_tree || tier->kind == "ctest" || mutants) && !layout.build_dir) {
      throw std::invalid_argument(tier->name + " runs the tests of a build tree: give --build-dir "
                                               "(this mmaemu is not in one)");
    }
    if (!a.signing_key.empty()) {
      reports::load_private_key(a.signing_key); // refused now, not in every task
      p.signing_key = fs::absolute(a.signing_key);
    }
    if (!a.keys.empty()) {
      std::error_code ec;
      if (!fs::is_directory(a.keys, ec))
        throw std::invalid_argument("--keys: '" + shown(a.keys) + "' is not a folder");
      p.keys_dir = fs::absolute(a.keys);
    }
    p.tier = tier->name;
    p.shards = a.shards;
    p.run_dir = fs::absolute(a.run_dir).lexically_normal();
    p.mmaemu = a.mmaemu.empty() ? layout.exe : fs::absolute(a.mmaemu);
    p.cpus_per_task = std::max(1u, a.cpus_per_task);
    // A shard's time limit: the whole tier's budget times the factor (a shard may find the
    // cluster busy, and a mutant shard may build the schema), unless given.
    p.time_minutes = a.time_limit ? a.time_limit
                                  : static_cast<unsigned>(std::max(
                                        5.0, std::ceil(tier->budget_seconds * a.time_factor / 60)));
    p.merge_time_minutes = std::max(1u, a.merge_time);
    const bool device = !tier->devices.empty();
    p.gpus = a.gpus >= 0 ? static_cast<unsigned>(a.gpus) : (device ? 1u : 0u);
    if (device && p.gpus == 0) {
      throw std::invalid_argument("--gpus 0: " + tier->name + " needs a CUDA device (" +
                                  tier->devices.front().why + ")");
    }
    p.gres_type = a.gres_type;
    p.partition = device && !a.gpu_partition.empty() ? a.gpu_partition : a.partition;
    p.merge_partition = a.merge_partition.empty() ? a.partition : a.merge_partition;
    p.account = a.account;
    p.qos = a.qos;
    p.mem = a.mem;
    p.sbatch_extra = a.sbatch_options;
    p.made_by = made_by();
    const std::string logs = (p.run_dir / "logs").string();
    if (mutants_cli) {
      p.log_name = mutant_tier == "gpu" ? "mutants_gpu" : "mutants";
      p.shard_args = {"mutants", "run",    "--tier", mutant_tier, "--shard",
                      "{shard}", "--jobs", "{jobs}", "--log-dir", logs};
      if (!a.only.empty())
        p.shard_args.insert(p.shard_args.end(), {"--only", a.only});
      if (a.mutant_timeout > 0) {
        char t[32];
        std::snprintf(t, sizeof t, "%g", a.mutant_timeout);
        p.shard_args.insert(p.shard_args.end(), {"--timeout", t});
      }
    } else {
      p.log_name = tier->name;
      p.shard_args = {"tier",   "run",    tier->name,  "--shard", "{shard}",
                      "--jobs", "{jobs}", "--log-dir", logs};
    }
    if (layout.build_dir)
      p.shard_args.insert(p.shard_args.end(),
                          {"--build-dir", fs::absolute(*layout.build_dir).string()});
    p.shard_args.insert(p.shard_args.end(), {"--tiers", fs::absolute(layout.tiers_dir).string()});
    if (a.trust_tiers) // the tasks read the same folder the user trusted here
      p.shard_args.push_back("--trust-tiers");
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }

  std::error_code ec;
  if (fs::exists(p.run_dir / "run.json", ec)) {
    error_line("--run-dir: " + shown(p.run_dir.string()) +
               " already holds a run (run.json): give each run its own folder, so that the "
               "merge sees only its shards");
    return kUsage;
  }
  json run = {{"format", "mmaemu-cluster-run/1"},
              {"engine", "slurm"},
              {"tier", p.tier},
              {"log_name", p.log_name},
              {"shards", p.shards},
              {"created_utc", reports::utc_timestamp()},
              {"made_by", p.made_by},
              {"git", reports::git_state(layout.source_dir)},
              {"time_minutes", p.time_minutes},
              {"merge_time_minutes", p.merge_time_minutes},
              {"cpus_per_task", p.cpus_per_task},
              {"gpus_per_task", p.gpus},
              {"partition", p.partition},
              {"merge_partition", p.merge_partition},
              {"shard_args", p.shard_args},
              {"signed", !p.signing_key.empty()},
              {"merged_log", (p.run_dir / "merged" / (p.log_name + ".json")).string()}};
  try {
    for (const char* sub : {"logs", "slurm", "tasks", "merged"}) {
      fs::create_directories(p.run_dir / sub, ec);
      if (ec)
        throw std::runtime_error("cannot create " + (p.run_dir / sub).string() + ": " +
                                 ec.message());
    }
    // The run folder's files may not replace a key or a tier file the run reads.
    std::vector<fs::path> read = joined(files_under(layout.tiers_dir), standard_inputs());
    if (!a.signing_key.empty())
      read.emplace_back(a.signing_key);
    if (!a.keys.empty())
      read = joined(read, files_under(a.keys));
    support::write_file_atomic(p.run_dir / "shard.sbatch", slurm_shard_script(p), 0755, read);
    support::write_file_atomic(p.run_dir / "merge.sbatch", slurm_merge_script(p), 0755, read);
    support::write_file_atomic(p.run_dir / "submit.sh", slurm_submit_script(p), 0755, read);
    support::write_file_atomic(p.run_dir / "run.json", run.dump(2) + "\n", 0644, read);
  } catch (const std::exception& e) {
    error_line(std::string("--run-dir: ") + e.what());
    return kUsage;
  }
  std::printf("%s: %zu shards as a Slurm job array (%u min, %u CPUs%s per task)%s\n",
              p.tier.c_str(), p.shards, p.time_minutes, p.cpus_per_task,
              p.gpus ? (", " + p.gres_type + ":" + std::to_string(p.gpus)).c_str() : "",
              p.partition.empty() ? "" : (" on partition " + p.partition).c_str());
  std::printf("  %s/shard.sbatch\n  %s/merge.sbatch\n  %s/submit.sh\n", p.run_dir.c_str(),
              p.run_dir.c_str(), p.run_dir.c_str());
  json out = {{"run_dir", p.run_dir.string()},
              {"tier", p.tier},
              {"shards", p.shards},
              {"scripts",
               {(p.run_dir / "shard.sbatch").string(), (p.run_dir / "merge.sbatch").string(),
                (p.run_dir / "submit.sh").string()}},
              {"merged_log", run["merged_log"]},
              {"submitted", false}};
  if (!a.submit) {
    std::printf("submit with: bash %s/submit.sh\n", p.run_dir.c_str());
    try {
      a.json.write(out);
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
    return kOk;
  }
  try {
    support::ProcessOptions po;
    po.timeout_s = 120;
    const std::string array = job_id(
        support::run_process({a.sbatch, "--parsable", (p.run_dir / "shard.sbatch").string()}, po),
        "job array");
    std::vector<std::string> margv = {a.sbatch, "--parsable", "--dependency=afterany:" + array};
    if (a.hold_merge)
      margv.push_back("--hold");
    margv.push_back((p.run_dir / "merge.sbatch").string());
    const std::string merge = job_id(support::run_process(margv, po), "merge job");
    support::write_file_atomic(p.run_dir / "jobs.json",
                               json{{"array_job", array},
                                    {"merge_job", merge},
                                    {"held", a.hold_merge},
                                    {"submitted_utc", reports::utc_timestamp()}}
                                       .dump(2) +
                                   "\n");
    std::printf("submitted: array job %s (%zu tasks), merge job %s%s; merged log: %s\n",
                array.c_str(), p.shards, merge.c_str(),
                a.hold_merge ? (" (held: scontrol release " + merge + ")").c_str() : "",
                run["merged_log"].get<std::string>().c_str());
    out["submitted"] = true;
    out["array_job"] = array;
    out["merge_job"] = merge;
  } catch (const std::exception& e) {
    error_line(e.what());
    return kFailed;
  }
  try {
    a.json.write(out);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_cluster(CLI::App& app, int& exit_code) {
  CLI::App* cl = app.add_subcommand(
      "cluster", "Run a tier's shards on a cluster: Slurm job arrays and their merge job");
  cl->require_subcommand(1);
  auto a = std::make_shared<ClusterArgs>();
  CLI::App* s = cl->add_subcommand(
      "slurm", "Write (and with --submit, submit) a job array of the tier's shards and a merge "
               "job that depends on it");
  s->add_option("tier", a->tier, "Tier name (T1, T2, T3, T4, T4g, T6, ...)")->required();
  s->add_option("--shards", a->shards, "Number of shards: array tasks 0..N-1")->required();
  s->add_option("--run-dir", a->run_dir,
                "The run's folder, shared by every node: scripts, logs/, slurm/, tasks/, "
                "merged/ (one folder per run)")
      ->required();
  s->add_option("--partition", a->partition, "Partition of the tasks (default: the cluster's)");
  s->add_option("--gpu-partition", a->gpu_partition,
                "Partition of the tasks of a tier that needs a device (default: --partition)");
  s->add_option("--merge-partition", a->merge_partition,
                "Partition of the merge job (default: --partition)");
  s->add_option("--gpus", a->gpus,
                "GPUs per task through --gres (default: 1 where the tier needs a device)")
      ->check(CLI::Range(0, 64));
  s->add_option("--gres-type", a->gres_type, "The GPUs' gres name (default gpu)");
  s->add_option("--cpus-per-task", a->cpus_per_task,
                "CPUs per task; the shard runs with as many jobs (default 1)")
      ->check(CLI::Range(1, 4096));
  s->add_option("--mem", a->mem, "Memory per task (sbatch --mem, e.g. 8G)");
  s->add_option("--time-limit", a->time_limit,
                "Minutes a task may run (default: the tier's budget times --time-factor)")
      ->check(CLI::Range(1, 43200));
  s->add_option("--time-factor", a->time_factor,
                "Default time limit as a multiple of the tier's budget (default 2)")
      ->check(CLI::Range(0.1, 100.0));
  s->add_option("--merge-time", a->merge_time, "Minutes the merge job may run (default 10)")
      ->check(CLI::Range(1, 1440));
  s->add_option("--account", a->account, "sbatch --account");
  s->add_option("--qos", a->qos, "sbatch --qos");
  s->add_option("--sbatch-option", a->sbatch_options,
                "Another #SBATCH line of the array script (--name=value), repeatable");
  s->add_option("--env", a->env,
                "NAME=VALUE exported by the tasks and the merge (T2: MMAEMU_TRUTH_DIR=...)");
  s->add_option("--only", a->only, "T4/T4g: only the mutants whose id matches this regex");
  s->add_option("--mutant-timeout", a->mutant_timeout,
                "T4/T4g: seconds one mutant's tests may take")
      ->check(CLI::Range(1.0, 86400.0));
  s->add_option("--signing-key", a->signing_key,
                "Ed25519 private key: the shard logs and the merged log are signed with it");
  s->add_option("--keys", a->keys,
                "Folder of trusted *.pub keys: the merge verifies every shard and the merged log");
  s->add_option("--build-dir", a->build_dir, "Build tree the tasks use (default: this mmaemu's)");
  add_tiers_options(*s, a->tiers, a->trust_tiers,
                    "Folder of tier files (default: found beside mmaemu)");
  s->add_option("--mmaemu", a->mmaemu, "The program the tasks run (default: this one)");
  a->json.add(*s, "the run folder, its scripts and, with --submit, the job ids");
  s->add_flag("--submit", a->submit, "Submit the array and the merge job (sbatch)");
  s->add_flag("--hold-merge", a->hold_merge,
              "With --submit: submit the merge job held (scontrol release JOB starts it)");
  s->add_option("--sbatch", a->sbatch, "The sbatch program (default: sbatch in PATH)");
  s->callback([a, &exit_code] { exit_code = run_slurm(*a); });
}

} // namespace mmaemu::cli
