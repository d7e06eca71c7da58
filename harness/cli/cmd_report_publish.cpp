// SPDX-License-Identifier: BSD-2-Clause
// mmaemu report publish LOG... [--json PATH]: signed logs trusted by docs/validation_logs/keys
//                       into the committed docs/validation_logs/<date>/

#include <cstdio>

#include "cmd_report.hpp"
#include "commands.hpp"
#include "mmaemu/harness/tier_layout.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/clock.hpp"
#include "mmaemu/reports/git_state.hpp"
#include "mmaemu/reports/log_writer.hpp"
#include "mmaemu/reports/trusted_keys.hpp"
#include "mmaemu/reports/verify_log.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The date folder a log is published under: its own start date (UTC), else the date folder it
// lies in, else today.
std::string publish_date(const json& log, const fs::path& file) {
  if (const auto d = log.find("durations"); d != log.end() && d->is_object()) {
    const std::string started = d->value("started_utc", "");
    if (started.size() >= 10 && reports::is_date(started.substr(0, 10)))
      return started.substr(0, 10);
  }
  const std::string parent = file.parent_path().filename().string();
  return reports::is_date(parent) ? parent : reports::utc_date();
}

// "T1-2" -> "T1": publish_log gives a free name again in the committed folder.
std::string publish_stem(const fs::path& file) {
  std::string stem = file.stem().string();
  const auto dash = stem.rfind('-');
  if (dash != std::string::npos && dash + 1 < stem.size() &&
      stem.find_first_not_of("0123456789", dash + 1) == std::string::npos)
    stem.erase(dash);
  return stem;
}

bool inside(const fs::path& p, const fs::path& dir) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(fs::absolute(p), ec);
  const fs::path b = fs::weakly_canonical(fs::absolute(dir), ec);
  auto ai = a.begin();
  for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
    if (ai == a.end() || *ai != *bi)
      return false;
  }
  return true;
}

} // namespace

int run_publish(const ReportArgs& a) {
  // Always the committed folder's own keys: a log must verify where it is published.
  const harness::Layout layout = harness::discover_layout();
  if (layout.publish_root.empty()) {
    error_line("report publish needs the source tree's docs/validation_logs (run the mmaemu of "
               "a build tree)");
    return kUsage;
  }
  reports::TrustedKeys keys;
  try {
    a.json.check(std::vector<fs::path>(a.paths.begin(), a.paths.end()));
    keys = reports::load_trusted_keys(layout.keys_dir);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  struct Ready {
    fs::path file;
    std::string bytes, sig, date, stem, commit;
    bool dirty = false;
    std::string signer;
  };
  std::vector<Ready> ready;
  for (const auto& p : a.paths) {
    if (inside(p, layout.publish_root)) {
      error_line(shown(p) + ": already in " + shown(layout.publish_root));
      return kUsage;
    }
    const auto v = reports::verify_log(p, keys);
    if (!v.ok) {
      error_line(shown(p) + ": refusing to publish: " + v.reason +
                 (v.reason.find("unsigned") != std::string::npos
                      ? " (run the tier with MMAEMU_SIGNING_KEY set, or with --publish)"
                      : ""));
      return kUsage;
    }
    Ready r;
    r.file = p;
    try {
      r.bytes = reports::read_file_bytes(p);
      r.sig =
          support::read_input_file(reports::signature_path(p), support::kMaxKeyBytes, "signature");
      const json log = reports::parse_json_text(r.bytes, p);
      r.date = publish_date(log, p);
      r.stem = publish_stem(p);
      const reports::LogRevision rev = reports::log_revision(log);
      r.commit = rev.commit;
      r.dirty = rev.dirty;
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
    r.signer = v.reason;
    ready.push_back(std::move(r));
  }
  json published = json::array();
  for (const auto& r : ready) {
    try {
      const fs::path dir = reports::prepare_log_dir(layout.publish_root, r.date);
      const auto pub = reports::publish_signed_copy(r.bytes, r.sig, dir, r.stem);
      std::printf("published %s -> %s (commit %s%s; %s)\n", shown(r.file).c_str(),
                  shown(pub.log).c_str(),
                  support::printable(r.commit.empty() ? "unknown" : r.commit).c_str(),
                  r.dirty ? ", dirty tree" : "", support::printable(r.signer).c_str());
      published.push_back({{"from", r.file.string()},
                           {"log", pub.log.string()},
                           {"signature", pub.signature.string()},
                           {"commit", r.commit},
                           {"dirty", r.dirty}});
    } catch (const std::exception& e) {
      error_line(e.what());
      return kUsage;
    }
  }
  std::printf("%zu published into %s: commit them (git add) with the change they validate\n",
              ready.size(), shown(layout.publish_root).c_str());
  try {
    a.json.write({{"published", published}});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace mmaemu::cli::report
