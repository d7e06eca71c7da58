// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report keygen --out KEY.pem
// mmaemu report verify PATH... [--keys DIR]
// mmaemu report release --date YYYY-MM-DD [--out DIR] [--log-dir DIR] [--keys DIR] [--tiers DIR]
//                       [--allow-other-commit]
// mmaemu report merge LOG... [--out FILE] [--keys DIR]

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"
#include "mmaemu/emulator/evidence.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/harness/tier_spec.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/merge_logs.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "mmaemu/reports/verify_log.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ReportArgs {
  std::string out, keys, date, log_dir, tiers;
  std::vector<std::string> paths;
  bool allow_other_commit = false; // report release
};

fs::path keys_dir(const ReportArgs& a) {
  if (!a.keys.empty())
    return a.keys;
  return harness::discover_layout().keys_dir;
}

std::string shown(const fs::path& p) {
  return support::printable(p.string(), 256);
}

int run_keygen(const ReportArgs& a) {
  try {
    const auto k = reports::generate_key(a.out);
    const auto fp = reports::fingerprint(reports::load_public_key(k.public_key));
    std::printf("private key %s (mode 0600): keep it secret, point MMAEMU_SIGNING_KEY at it\n",
                shown(k.private_key).c_str());
    std::printf("public key  %s: copy it into docs/validation_logs/keys/ to trust it\n",
                shown(k.public_key).c_str());
    std::printf("fingerprint %s\n", fp.c_str());
  } catch (const reports::SigningError& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  }
  return kOk;
}

// One line per log: OK, FAIL (a log that does not verify) or ERROR (a file that is not a
// readable validation log). Every log is checked; the exit status is 2 if any was an ERROR,
// else 1 if any FAILed, else 0.
int run_verify(const ReportArgs& a) {
  reports::TrustedKeys keys;
  std::vector<fs::path> logs;
  try {
    keys = reports::load_trusted_keys(keys_dir(a));
    logs = reports::collect_logs(std::vector<fs::path>(a.paths.begin(), a.paths.end()));
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  if (logs.empty()) {
    error_line("no validation log (*.json) under the paths given");
    return kUsage;
  }
  std::optional<reports::LogVerification> first_bad;
  std::size_t failed = 0, errors = 0;
  for (const auto& l : logs) {
    const auto v = reports::verify_log(l, keys);
    std::printf("%-5s %s: %s\n",
                v.ok      ? "OK"
                : v.error ? "ERROR"
                          : "FAIL",
                shown(l).c_str(), v.reason.c_str());
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
  if (first_bad) {
    error_line(shown(first_bad->file) +
               (first_bad->error ? " is not a readable validation log: " : " does not verify: ") +
               first_bad->reason);
    return errors ? kUsage : kFailed;
  }
  return kOk;
}

int run_release(const ReportArgs& a) {
  if (!reports::is_date(a.date)) {
    error_line("--date: '" + a.date + "' is not a date YYYY-MM-DD");
    return kUsage;
  }
  harness::LayoutOverrides o;
  o.tiers_dir = a.tiers;
  o.log_root = a.log_dir;
  o.keys_dir = a.keys;
  const harness::Layout layout = harness::discover_layout(o);
  std::vector<reports::ReleaseTier> tiers;
  reports::TrustedKeys keys;
  reports::ReleaseReport rep;
  // The report is for HEAD of the source tree: every log must come from it, clean.
  const nlohmann::json git = reports::git_state(layout.source_dir);
  reports::ReleaseOptions ro;
  ro.commit = git.value("commit", "unknown");
  ro.commit_unknown_why = git.value("reason", "");
  ro.allow_other_commit = a.allow_other_commit;
  try {
    for (const auto& t : harness::load_tiers(layout.tiers_dir)) {
      tiers.push_back({t.name, t.title, t.required_for_release});
    }
    keys = reports::load_trusted_keys(layout.keys_dir);
    rep = reports::build_release_report(layout.log_root, a.date, tiers, keys, ro);
    rep.evidence = evidence::counts_lines();
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  const fs::path out = a.out.empty() ? layout.log_root / a.date : fs::path(a.out);
  try {
    std::error_code ec;
    fs::create_directories(out, ec);
    reports::write_file_replacing(out / "release.md", reports::release_markdown(rep));
    reports::write_file_replacing(out / "release.html", reports::release_html(rep));
  } catch (const std::exception& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  }
  for (const auto& row : rep.rows) {
    std::printf("%-5s %-12s %s\n", row.tier.c_str(), row.status.c_str(),
                row.required ? "(required)" : "");
  }
  for (const auto& why : rep.reasons)
    std::printf("  - %s\n", why.c_str());
  for (const auto& note : rep.notes)
    std::printf("  ! %s\n", note.c_str());
  std::printf("release %s at %s: %s\n%s\n%s\n", a.date.c_str(), rep.commit.c_str(),
              rep.verdict.c_str(), (out / "release.md").c_str(), (out / "release.html").c_str());
  return rep.verdict == "PASS" ? kOk : kFailed;
}

// A tier name as a file name: what publish_log may create beside the shards.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '.')
    return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.')
      return false;
  }
  return true;
}

// merged[key] when it is a string, else "".
std::string string_at(const json& merged, const char* key) {
  const auto it = merged.find(key);
  return it != merged.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int run_merge(const ReportArgs& a) {
  std::vector<reports::ShardLog> shards;
  std::optional<reports::TrustedKeys> keys;
  try {
    if (!a.keys.empty())
      keys = reports::load_trusted_keys(a.keys);
    for (const auto& p : a.paths) {
      if (keys) {
        const auto v = reports::verify_log(p, *keys);
        if (!v.ok) {
          error_line(shown(p) + " does not verify: " + v.reason);
          return v.error ? kUsage : kFailed;
        }
      }
      const std::string bytes = reports::read_file_bytes(p);
      shards.push_back({fs::path(p).filename().string(),
                        support::sha256_hex(bytes.data(), bytes.size()),
                        reports::parse_json_text(bytes, p)});
    }
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  json merged;
  try {
    merged = reports::merge_shard_logs(shards);
  } catch (const reports::MergeError& e) {
    error_line(e.what());
    return kUsage;
  }
  const std::string tier = string_at(merged, "tier");
  if (a.out.empty() && !plain_name(tier)) {
    error_line("the shards' tier " + support::printable(tier) +
               " is not a plain file name; give --out");
    return kUsage;
  }
  std::unique_ptr<reports::Key> key;
  if (const char* k = std::getenv("MMAEMU_SIGNING_KEY"); k && *k) {
    try {
      key = std::make_unique<reports::Key>(reports::load_private_key(k));
    } catch (const reports::SigningError& e) {
      error_line(std::string("MMAEMU_SIGNING_KEY: ") + e.what());
      return kUsage;
    }
  }
  const fs::path target =
      a.out.empty() ? fs::path(a.paths[0]).parent_path() / (tier + ".json") : fs::path(a.out);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  try {
    const auto pub = reports::publish_log(merged, dir, target.stem().string(), key.get());
    std::printf("merged %zu shards of %s: %s -> %s (%s)\n", shards.size(),
                support::printable(tier).c_str(),
                support::printable(string_at(merged, "verdict")).c_str(), shown(pub.log).c_str(),
                pub.signature.empty() ? "unsigned" : "signed");
  } catch (const std::exception& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_report(CLI::App& app, int& exit_code) {
  CLI::App* rep =
      app.add_subcommand("report", "Signing keys, log verification, merge, release report");
  rep->require_subcommand(1);

  auto ka = std::make_shared<ReportArgs>();
  CLI::App* keygen = rep->add_subcommand("keygen", "Make an Ed25519 signing key pair");
  keygen->add_option("--out", ka->out, "Private key to write (KEY.pem; KEY.pub beside it)")
      ->required();
  keygen->callback([ka, &exit_code] { exit_code = run_keygen(*ka); });

  auto va = std::make_shared<ReportArgs>();
  CLI::App* verify =
      rep->add_subcommand("verify", "Check validation logs against the trusted keys");
  verify->add_option("paths", va->paths, "Logs or folders of logs")->required();
  verify->add_option("--keys", va->keys,
                     "Folder of trusted *.pub keys (default: docs/validation_logs/keys)");
  verify->callback([va, &exit_code] { exit_code = run_verify(*va); });

  auto ra = std::make_shared<ReportArgs>();
  CLI::App* release =
      rep->add_subcommand("release", "Sign-off report of one date's logs (md + html)");
  release->add_option("--date", ra->date, "YYYY-MM-DD (UTC), the logs' folder")->required();
  release->add_option("--out", ra->out,
                      "Folder for release.md and release.html (default: the date's folder)");
  release->add_option("--log-dir", ra->log_dir, "Root of the validation logs");
  release->add_option("--keys", ra->keys, "Folder of trusted *.pub keys");
  release->add_option("--tiers", ra->tiers, "Folder of tier files (which tiers are required)");
  release->add_flag("--allow-other-commit", ra->allow_other_commit,
                    "Take logs of another commit than HEAD, or of a dirty tree (listed as such)");
  release->callback([ra, &exit_code] { exit_code = run_release(*ra); });

  auto ma = std::make_shared<ReportArgs>();
  CLI::App* merge = rep->add_subcommand("merge", "Combine the logs of --shard k/N runs into one");
  merge->add_option("paths", ma->paths, "The shard logs, 1/N..N/N")->required();
  merge->add_option("--out", ma->out,
                    "Merged log (default: <tier>.json beside the first shard; a "
                    "taken name gets a -2, -3, ... suffix)");
  merge->add_option("--keys", ma->keys, "Verify every shard against these trusted keys first");
  merge->callback([ma, &exit_code] { exit_code = run_merge(*ma); });
}

} // namespace mmaemu::cli
