// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report merge LOG... [--out FILE] [--keys DIR] [--json PATH]
// mmaemu report merge LOG-OR-DIR... --shards N [--name STEM] [--why K=TEXT]... [--out FILE]
//                     [--keys DIR] [--json PATH]
// The logs of --shard k/N runs combined into one log, signed when MMAEMU_SIGNING_KEY is set.

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "cmd_report.hpp"
#include "commands.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/ed25519.hpp"
#include "mmaemu/reports/log_at_path.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/merge_logs.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/reports/verify_log.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"
#include "read_inputs.hpp"

namespace mmaemu::cli::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

// The shard logs a --shards merge takes: files as given; in folders (searched like `report
// verify`), the files named <stem>-shard<k>of<N>[-<m>].json of this N (and of --name).
std::vector<fs::path> shard_log_files(const ReportArgs& a, std::string& stem) {
  std::vector<fs::path> out;
  std::set<std::string> stems;
  for (const auto& p : a.paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    for (const auto& f : reports::collect_logs({fs::path(p)})) {
      std::string s;
      std::size_t k = 0, n = 0;
      if (!reports::parse_shard_log_name(f.filename().string(), s, k, n) || n != a.shards)
        continue;
      if (!a.name.empty() && s != a.name)
        continue;
      stems.insert(s);
      out.push_back(f);
    }
  }
  if (stems.size() > 1) {
    std::string list;
    for (const auto& s : stems)
      list += (list.empty() ? "" : ", ") + support::printable(s, 64);
    throw std::runtime_error("the folders hold shard logs of " + list + "; give --name");
  }
  stem = stems.empty() ? a.name : *stems.begin();
  return out;
}

} // namespace

int run_merge(const ReportArgs& a) {
  std::vector<reports::ShardLog> shards;
  std::optional<reports::TrustedKeys> keys;
  reports::MergeOptions mo;
  mo.count = a.shards;
  std::vector<fs::path> files(a.paths.begin(), a.paths.end());
  std::vector<fs::path> merge_inputs;
  std::string stem;
  try {
    for (const auto& w : a.why) {
      const auto eq = w.find('=');
      std::size_t k = 0;
      try {
        k = eq == std::string::npos ? 0 : std::stoul(w.substr(0, eq));
      } catch (const std::logic_error&) {
        k = 0;
      }
      if (k < 1 || k > a.shards) {
        error_line("--why: '" + support::printable(w, 128) + "' is not K=TEXT with 1 <= K <= " +
                   std::to_string(a.shards) + " (and needs --shards)");
        return kUsage;
      }
      mo.why_missing[k] = w.substr(eq + 1);
    }
    a.json.check(joined(std::vector<fs::path>(a.paths.begin(), a.paths.end()),
                        a.keys.empty() ? std::vector<fs::path>{} : files_under(a.keys)));
    if (!a.keys.empty())
      keys = reports::load_trusted_keys(a.keys);
    if (a.shards)
      files = shard_log_files(a, stem);
    // --out is the file written, exactly: not a shard (or a link to one), not a key, not a
    // special file or folder; its .sig neither (docs/api.md, "Conventions").
    if (!a.out.empty()) {
      merge_inputs = joined(files, a.keys.empty() ? std::vector<fs::path>{} : files_under(a.keys));
      check_output_option("--out", a.out, merge_inputs);
      check_output_option("--out", reports::signature_path(a.out), merge_inputs);
    }
    for (const auto& p : files) {
      if (keys) {
        const auto v = reports::verify_log(p, *keys);
        if (!v.ok) {
          error_line(shown(p) + " does not verify: " + v.reason);
          return v.error ? kUsage : kFailed;
        }
      }
      const std::string bytes = reports::read_file_bytes(p);
      shards.push_back({p.filename().string(), support::sha256_hex(bytes.data(), bytes.size()),
                        reports::parse_json_text(bytes, p)});
    }
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  if (a.shards && shards.empty()) {
    // Nothing to merge is the loudest failure of all: every shard is missing.
    for (std::size_t k = 1; k <= a.shards; ++k) {
      const auto it = mo.why_missing.find(k);
      std::printf("MISSING shard %zu/%zu: no log%s%s\n", k, a.shards,
                  it == mo.why_missing.end() ? "" : ": ",
                  it == mo.why_missing.end() ? "" : support::printable(it->second, 512).c_str());
    }
    error_line("no shard log" + (stem.empty() ? std::string() : " of " + support::printable(stem)) +
               " of a " + std::to_string(a.shards) + "-shard run under the paths given: all " +
               std::to_string(a.shards) + " shards are missing");
    return kFailed;
  }
  json merged;
  try {
    merged = reports::merge_shard_logs(shards, mo);
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
      a.out.empty() ? files[0].parent_path() / (tier + ".json") : fs::path(a.out);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  for (const auto& m : merged.value("missing_shards", json::array())) {
    std::printf("MISSING shard %s: %s\n", support::printable(m.value("shard", "?")).c_str(),
                support::printable(m.value("why", ""), 512).c_str());
  }
  for (const auto& s : merged.value("superseded", json::array())) {
    std::printf("superseded shard %s: %s (%s), kept %s, which finished later\n",
                support::printable(s.value("shard", "?")).c_str(),
                support::printable(s.value("file", "")).c_str(),
                support::printable(s.value("verdict", "?")).c_str(),
                support::printable(s.value("kept", "")).c_str());
  }
  const std::string verdict = string_at(merged, "verdict");
  try {
    const auto pub = a.out.empty()
                         ? reports::publish_log(merged, dir, target.stem().string(), key.get())
                         : reports::write_log_at(merged, a.out, key.get(),
                                                 joined(merge_inputs, standard_inputs()));
    std::printf("merged %zu shards of %s: %s -> %s (%s)\n", merged["merged_from"].size(),
                support::printable(tier).c_str(), support::printable(verdict).c_str(),
                shown(pub.log).c_str(), pub.signature.empty() ? "unsigned" : "signed");
    if (!string_at(merged, "reason").empty())
      std::printf("reason: %s\n", support::printable(string_at(merged, "reason"), 2048).c_str());
    a.json.write({{"tier", tier},
                  {"shards", merged["merged_from"].size()},
                  {"verdict", verdict},
                  {"log", pub.log.string()},
                  {"signed", !pub.signature.empty()}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const std::exception& e) {
    error_line(std::string("--out: ") + e.what());
    return kUsage;
  }
  // With --shards the merge is the run's verdict: anything but PASS is a failure.
  if (a.shards && verdict != "PASS") {
    error_line("merged " + support::printable(tier) + " of " + std::to_string(a.shards) +
               " shards is " + support::printable(verdict) + ", not PASS");
    return kFailed;
  }
  return kOk;
}

} // namespace mmaemu::cli::report
