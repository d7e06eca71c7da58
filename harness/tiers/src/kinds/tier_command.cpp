// SPDX-License-Identifier: BSD-2-Clause
// Tiers of kind "command" (T6 performance): run a command that writes benchmark figures as
// JSON, and judge each figure against its target from the tier file.

#include <cstdio>
#include <set>

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/support/process.hpp"
#include "tier_kinds.hpp"
#include "tier_work.hpp"

namespace mmaemu::harness::detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string substitute(std::string s, const std::string& key, const std::string& value) {
  std::size_t p = 0;
  while ((p = s.find(key, p)) != std::string::npos) {
    s.replace(p, key.size(), value);
    p += value.size();
  }
  return s;
}

} // namespace

void run_command_kind(const TierSpec& t, const RunOptions& opt, TierResult& r) {
  const json& argv_j = t.run.value("argv", json::array());
  if (!argv_j.is_array() || argv_j.empty()) {
    r.verdict = Outcome::error;
    r.reason = t.file.string() + ": run.argv must be a non-empty array";
    return;
  }
  // A command that does not split its work ({shard} in run.argv) runs whole in shard 1; the
  // other shards select no case, so that a merge holds each figure once.
  bool splits = false;
  for (const auto& a : argv_j)
    splits = splits || (a.is_string() && a.get<std::string>().find("{shard}") != std::string::npos);
  if (opt.shard.active() && !splits && opt.shard.index != 1)
    return;
  std::unique_ptr<WorkDir> work;
  fs::path out = opt.out_dir;
  if (out.empty()) {
    work = std::make_unique<WorkDir>("cmd");
    out = work->path();
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  // {shard}: the command splits its work itself (T6: bench gemm --sweep --shard k/N).
  auto expand = [&](const std::string& s) {
    return substitute(
        substitute(substitute(s, "{mmaemu}", opt.layout.exe.string()), "{out}", out.string()),
        "{shard}", opt.shard.text());
  };
  std::vector<std::string> argv;
  std::string shown;
  for (const auto& a : argv_j) {
    argv.push_back(expand(a.get<std::string>()));
    shown += (shown.empty() ? "" : " ") + argv.back();
  }
  support::ProcessOptions po;
  po.timeout_s = t.run.value("timeout_s", 0.0);
  if (opt.verbose)
    po.on_line = [&](const std::string& l) { std::fprintf(opt.text, "%s\n", l.c_str()); };
  std::fprintf(opt.text, "%s: %s\n", t.name.c_str(), shown.c_str());
  std::fflush(opt.text);
  const support::ProcessResult res = support::run_process(argv, po);
  r.details = {{"command", shown}, {"exit_code", res.exit_code}};
  if (res.exit_code != 0) {
    r.add({"command", Outcome::error, 0,
           res.timed_out ? "ran past run.timeout_s"
                         : "exit " + std::to_string(res.exit_code) + ": " +
                               (res.error.empty() ? tail_lines(res.output, 3) : res.error)});
    return;
  }
  // run.result stays inside the output folder or the tier's tree (tier_paths.hpp): checked
  // by the parser, and here again after symlinks.
  fs::path result;
  json j;
  try {
    const fs::path tree =
        opt.layout.source_dir ? *opt.layout.source_dir : t.file.parent_path().parent_path();
    result = resolve_tier_path(t.run.value("result", std::string("{out}/result.json")), tree, out);
    j = reports::read_json_file(result);
  } catch (const std::exception& e) {
    r.add({"result", Outcome::error, 0, e.what()});
    return;
  }
  // The figures: run.figures names numeric fields of the result (with unit, target and
  // better), else the result holds "benchmarks": [{name, value, unit}].
  json benchmarks = json::array();
  const json figures = t.run.value("figures", json::object());
  json targets = t.run.value("targets", json::object());
  if (j.is_object() && !figures.empty()) {
    for (const auto& [name, f] : figures.items()) {
      if (!j.contains(name) || !j[name].is_number()) {
        r.add({"result", Outcome::error, 0, result.string() + " has no number \"" + name + "\""});
        continue;
      }
      benchmarks.push_back({{"name", name}, {"value", j[name]}, {"unit", f.value("unit", "")}});
      if (f.contains("target"))
        targets[name] = f;
    }
    r.details["result"] = j;
  } else if (j.is_object() && j.contains("benchmarks") && j["benchmarks"].is_array()) {
    benchmarks = j["benchmarks"];
    r.details["result"] = j; // the whole result (T6: the sweep's rows) goes into the log
  } else {
    r.add({"result", Outcome::error, 0,
           result.string() + " has no \"benchmarks\" array and the tier names no run.figures"});
    return;
  }
  for (const auto& b : benchmarks) {
    if (!b.is_object() || !b.contains("name") || !b.contains("value") || !b["value"].is_number()) {
      r.add({"result", Outcome::error, 0, "benchmark entry " + b.dump() + " lacks name or value"});
      continue;
    }
    const std::string name = b["name"].get<std::string>();
    json entry = {{"name", name}, {"value", b["value"]}, {"unit", b.value("unit", "")}};
    TierCase c{"bench/" + name, Outcome::pass, 0, "measured, no target", false};
    if (targets.contains(name)) {
      const json& tg = targets[name];
      const double target = tg.value("target", 0.0);
      const std::string better = tg.value("better", std::string("higher"));
      const double v = b["value"].get<double>();
      const bool met = better == "lower" ? v <= target : v >= target;
      entry["target"] = target;
      entry["better"] = better;
      entry["met"] = met;
      char msg[200];
      std::snprintf(msg, sizeof msg, "%g %s, target %s %g", v, b.value("unit", "").c_str(),
                    better == "lower" ? "<=" : ">=", target);
      c.outcome = met ? Outcome::pass : Outcome::fail;
      c.message = msg;
    }
    r.benchmarks.push_back(entry);
    r.add(c);
  }
  // A target whose figure the command did not report was not met: it is not measured. In a
  // shard, the figures the result lists under "not_in_shard" are other shards' to report.
  std::set<std::string> elsewhere;
  if (opt.shard.active() && j.is_object() && j.contains("not_in_shard") &&
      j["not_in_shard"].is_array()) {
    for (const auto& n : j["not_in_shard"])
      if (n.is_string())
        elsewhere.insert(n.get<std::string>());
  }
  for (const auto& [name, tg] : targets.items()) {
    if (elsewhere.count(name))
      continue;
    bool measured = false;
    for (const auto& b : benchmarks)
      measured = measured || (b.is_object() && b.value("name", std::string()) == name);
    if (!measured) {
      r.add({"bench/" + name, Outcome::unsupported, 0,
             "not measured: the result has no figure \"" + name + "\""});
    }
  }
}

} // namespace mmaemu::harness::detail
