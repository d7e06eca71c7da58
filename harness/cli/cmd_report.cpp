// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report keygen --out KEY.pem [--json PATH]
// mmaemu report verify PATH... [--keys DIR] [--json PATH]
// mmaemu report release --date YYYY-MM-DD [--out DIR] [--log-dir DIR] [--keys DIR] [--tiers DIR]
//                       [--allow-other-commit] [--json PATH]
// mmaemu report merge LOG... [--out FILE] [--keys DIR] [--json PATH]
// mmaemu report merge LOG-OR-DIR... --shards N [--name STEM] [--why K=TEXT]... [--out FILE]
//                     [--keys DIR] [--json PATH]
// mmaemu report compare A.json B.json [--json PATH]
// mmaemu report publish LOG... [--json PATH]: signed logs trusted by docs/validation_logs/keys
//                       into the committed docs/validation_logs/<date>/
// This file adds the subcommands and runs keygen and verify; the others are in
// cmd_report_<name>.cpp (cmd_report.hpp).

#include <cstdio>
#include <memory>
#include <optional>

#include "cmd_report.hpp"
#include "commands.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/reports/verify_log.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "read_inputs.hpp"
#include "tier_args.hpp"

namespace mmaemu::cli {

namespace report {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path keys_dir(const ReportArgs& a) {
  if (!a.keys.empty())
    return a.keys;
  return harness::discover_layout().keys_dir;
}

int run_keygen(const ReportArgs& a) {
  try {
    // Neither key file may be a special file, a folder or something mmaemu reads.
    check_output_option("--out", a.out);
    check_output_option("--out", reports::public_key_path(a.out));
    a.json.check({a.out, reports::public_key_path(a.out)});
    const auto k = reports::generate_key(a.out);
    const auto fp = reports::fingerprint(reports::load_public_key(k.public_key));
    std::printf("private key %s (mode 0600): keep it secret, point MMAEMU_SIGNING_KEY at it\n",
                shown(k.private_key).c_str());
    std::printf("public key  %s: copy it into docs/validation_logs/keys/ to trust it\n",
                shown(k.public_key).c_str());
    std::printf("fingerprint %s\n", fp.c_str());
    a.json.write({{"private_key", k.private_key.string()},
                  {"public_key", k.public_key.string()},
                  {"fingerprint", fp}});
  } catch (const reports::SigningError& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

int run_verify(const ReportArgs& a) {
  reports::TrustedKeys keys;
  try {
    keys = reports::load_trusted_keys(keys_dir(a));
    // --json is checked before any work against every file the arguments name (each argument
    // on its own: one that names nothing is reported below, not here).
    std::vector<fs::path> read = files_under(keys_dir(a));
    for (const auto& p : a.paths) {
      try {
        for (const auto& l : reports::collect_logs({fs::path(p)})) {
          read.push_back(l);
          read.push_back(reports::signature_path(l));
        }
      } catch (const std::exception&) {
      }
    }
    a.json.check(read);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  // Each argument on its own: one that names nothing is an ERROR of its own line.
  std::vector<std::pair<fs::path, std::optional<reports::LogVerification>>> logs;
  for (const auto& p : a.paths) {
    reports::LogVerification bad;
    bad.file = p;
    bad.error = true;
    try {
      std::error_code ec;
      if (fs::symlink_status(p, ec).type() == fs::file_type::symlink &&
          fs::status(p, ec).type() == fs::file_type::not_found) {
        bad.reason = "a dangling symbolic link";
      } else {
        const auto found = reports::collect_logs({fs::path(p)});
        for (const auto& f : found)
          logs.emplace_back(f, std::nullopt);
        if (!found.empty())
          continue;
        bad.reason = "no validation log (*.json) under it";
      }
    } catch (const std::exception& e) {
      bad.reason = e.what();
    }
    logs.emplace_back(p, bad);
  }
  std::optional<reports::LogVerification> first_bad;
  std::size_t failed = 0, errors = 0;
  json listed = json::array();
  for (const auto& [l, given] : logs) {
    const auto v = given ? *given : reports::verify_log(l, keys);
    const char* verdict = v.ok ? "OK" : v.error ? "ERROR" : "FAIL";
    std::printf("%-5s %s: %s\n", verdict, shown(l).c_str(), v.reason.c_str());
    listed.push_back({{"log", l.string()}, {"verdict", verdict}, {"reason", v.reason}});
    if (v.ok)
      continue;
    ++(v.error ? errors : failed);
    if (!first_bad || (v.error && !first_bad->error))
      first_bad = v;
  }
  std::printf("%zu verified, %zu failed, %zu errors (trusted keys: %s, %zu)\n",
              logs.size() - failed - errors, failed, errors, shown(keys.dir).c_str(),
              keys.by_fingerprint.size());
  std::fflush(stdout);
  try {
    a.json.write({{"logs", listed},
                  {"verified", logs.size() - failed - errors},
                  {"failed", failed},
                  {"errors", errors},
                  {"keys", keys.dir.string()}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  if (first_bad) {
    error_line(shown(first_bad->file) +
               (first_bad->error ? " is not a readable validation log: " : " does not verify: ") +
               first_bad->reason);
    return errors ? kUsage : kFailed;
  }
  return kOk;
}

} // namespace report

void add_report(CLI::App& app, int& exit_code) {
  CLI::App* rep =
      app.add_subcommand("report", "Signing keys, log verification, merge, release report");
  rep->require_subcommand(1);

  auto ka = std::make_shared<report::ReportArgs>();
  CLI::App* keygen = rep->add_subcommand("keygen", "Make an Ed25519 signing key pair");
  keygen->add_option("--out", ka->out, "Private key to write (KEY.pem; KEY.pub beside it)")
      ->required();
  ka->json.add(*keygen, "Also write the key files and fingerprint");
  keygen->callback([ka, &exit_code] { exit_code = report::run_keygen(*ka); });

  auto va = std::make_shared<report::ReportArgs>();
  CLI::App* verify =
      rep->add_subcommand("verify", "Check validation logs against the trusted keys");
  verify->add_option("paths", va->paths, "Logs or folders of logs")->required();
  verify->add_option("--keys", va->keys,
                     "Folder of trusted *.pub keys (default: docs/validation_logs/keys)");
  va->json.add(*verify, "Also write each log's verdict");
  verify->callback([va, &exit_code] { exit_code = report::run_verify(*va); });

  auto ra = std::make_shared<report::ReportArgs>();
  CLI::App* release =
      rep->add_subcommand("release", "Sign-off report of one date's logs (md + html)");
  release->add_option("--date", ra->date, "YYYY-MM-DD (UTC), the logs' folder")->required();
  release->add_option("--out", ra->out,
                      "Folder for release.md and release.html (default: the date's folder)");
  release->add_option("--log-dir", ra->log_dir,
                      "Root of the validation logs (default: the committed docs/validation_logs)");
  release->add_option("--keys", ra->keys, "Folder of trusted *.pub keys");
  add_tiers_options(*release, ra->tiers, ra->trust_tiers,
                    "Folder of tier files (which tiers are required)");
  release->add_flag("--allow-other-commit", ra->allow_other_commit,
                    "Take logs of another commit than HEAD, or of a dirty tree (listed as such)");
  ra->json.add(*release, "Also write the verdict and the tiers' status");
  release->callback([ra, &exit_code] { exit_code = report::run_release(*ra); });

  auto ma = std::make_shared<report::ReportArgs>();
  CLI::App* merge = rep->add_subcommand("merge", "Combine the logs of --shard k/N runs into one");
  merge->add_option("paths", ma->paths, "The shard logs, 1/N..N/N")->required();
  merge->add_option("--out", ma->out,
                    "Merged log (default: <tier>.json beside the first shard; a "
                    "taken name gets a -2, -3, ... suffix)");
  merge->add_option("--keys", ma->keys, "Verify every shard against these trusted keys first");
  merge
      ->add_option("--shards", ma->shards,
                   "The run had N shards: paths may be folders (searched for "
                   "<name>-shard<k>of<N>[-<m>].json), a missing shard is UNSUPPORTED, a shard "
                   "logged twice (re-queued) counts once, and the exit status is 0 only for "
                   "PASS")
      ->check(CLI::Range(1, 100000));
  merge->add_option("--name", ma->name, "With --shards: the logs' stem (T1, mutants)");
  merge->add_option("--why", ma->why,
                    "With --shards: K=TEXT, why shard K has no log (the engine's word)");
  ma->json.add(*merge, "Also write the merged log's path and verdict");
  merge->callback([ma, &exit_code] { exit_code = report::run_merge(*ma); });

  auto ca = std::make_shared<report::ReportArgs>();
  CLI::App* compare = rep->add_subcommand(
      "compare", "Whether two logs hold the same result: tier, commit, verdict, totals, inputs, "
                 "each case's outcome and each set's counts and letters");
  compare->add_option("logs", ca->paths, "Two validation logs")->required()->expected(2);
  ca->json.add(*compare, "whether they hold the same result, and each difference");
  compare->callback([ca, &exit_code] { exit_code = report::run_compare(*ca); });

  auto pa = std::make_shared<report::ReportArgs>();
  CLI::App* publish = rep->add_subcommand(
      "publish", "Copy signed logs that verify into the committed docs/validation_logs/<date>/");
  publish->add_option("paths", pa->paths, "Validation logs (each with its .sig)")->required();
  pa->json.add(*publish, "Also write where each log went");
  publish->callback([pa, &exit_code] { exit_code = report::run_publish(*pa); });
}

} // namespace mmaemu::cli
