// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/mutants/test_plan.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "mmaemu/support/process.hpp"
#include "output_tail.hpp"

namespace mmaemu::mutants {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {} // namespace

const char* run_status_name(RunStatus s) {
  switch (s) {
  case RunStatus::passed:
    return "passed";
  case RunStatus::failed:
    return "failed";
  case RunStatus::crashed:
    return "crashed";
  case RunStatus::timed_out:
    return "timed_out";
  case RunStatus::error:
    return "error";
  }
  return "?";
}

std::vector<PlannedTest> parse_ctest_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("ctest --show-only=json-v1: not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("tests") || !doc["tests"].is_array())
    throw std::runtime_error("ctest --show-only=json-v1: no 'tests' list");
  std::vector<PlannedTest> out;
  for (const auto& t : doc["tests"]) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
      throw std::runtime_error("ctest --show-only=json-v1: a test without a name");
    PlannedTest p;
    p.name = t["name"].get<std::string>();
    if (!t.contains("command") || !t["command"].is_array() || t["command"].empty())
      throw std::runtime_error("ctest --show-only=json-v1: test '" + p.name + "' has no command");
    for (const auto& a : t["command"]) {
      if (!a.is_string())
        throw std::runtime_error("ctest --show-only=json-v1: test '" + p.name +
                                 "': a command word is not a string");
      p.command.push_back(a.get<std::string>());
    }
    bool disabled = false;
    if (t.contains("properties") && t["properties"].is_array()) {
      for (const auto& prop : t["properties"]) {
        if (!prop.is_object() || !prop.contains("name") || !prop.contains("value"))
          continue;
        const std::string name = prop["name"].is_string() ? prop["name"].get<std::string>() : "";
        const json& v = prop["value"];
        if (name == "WORKING_DIRECTORY" && v.is_string()) {
          p.cwd = v.get<std::string>();
        } else if (name == "ENVIRONMENT" && v.is_array()) {
          for (const auto& kv : v) {
            if (!kv.is_string())
              continue;
            const std::string s = kv.get<std::string>();
            const auto eq = s.find('=');
            if (eq != std::string::npos && eq > 0)
              p.env[s.substr(0, eq)] = s.substr(eq + 1);
          }
        } else if (name == "TIMEOUT" && v.is_number()) {
          p.timeout_s = v.get<double>();
        } else if (name == "WILL_FAIL" && v.is_boolean()) {
          p.will_fail = v.get<bool>();
        } else if (name == "SKIP_RETURN_CODE" && v.is_number_integer()) {
          p.skip_return_code = v.get<int>();
        } else if (name == "DISABLED" && v.is_boolean()) {
          disabled = v.get<bool>();
        }
      }
    }
    if (!disabled)
      out.push_back(std::move(p));
  }
  return out;
}

std::vector<PlannedTest> list_ctest_tests(const fs::path& build_dir, const std::string& label_regex,
                                          const std::string& exclude_labels,
                                          const std::string& exclude_names) {
  support::ProcessOptions o = support::ProcessOptions::in_dir(build_dir);
  o.timeout_s = 120;
  std::vector<std::string> argv = {"ctest", "--show-only=json-v1", "-L", label_regex};
  if (!exclude_labels.empty()) {
    argv.push_back("-LE");
    argv.push_back(exclude_labels);
  }
  if (!exclude_names.empty()) {
    argv.push_back("-E");
    argv.push_back(exclude_names);
  }
  const auto r = support::run_process(argv, o);
  if (r.exit_code != 0) {
    throw std::runtime_error("ctest --show-only=json-v1 in " + build_dir.string() + " failed (" +
                             (r.error.empty() ? "exit " + std::to_string(r.exit_code) : r.error) +
                             "): " + detail::last_lines(r.output, 5));
  }
  // ctest may print warnings before the JSON document.
  const auto brace = r.output.find('{');
  if (brace == std::string::npos)
    throw std::runtime_error("ctest --show-only=json-v1 printed no JSON");
  return parse_ctest_json(r.output.substr(brace));
}

namespace {

// A test that gtest_discover_tests made: [exe, --gtest_filter=<name>, optional flags].
bool gtest_case(const PlannedTest& t, std::string& name) {
  if (t.command.size() < 2 || t.will_fail)
    return false;
  const std::string f = "--gtest_filter=";
  if (t.command[1].rfind(f, 0) != 0)
    return false;
  name = t.command[1].substr(f.size());
  if (name.empty() || name.find_first_of(":*?-") != std::string::npos)
    return false;
  for (std::size_t i = 2; i < t.command.size(); ++i) {
    if (t.command[i] != "--gtest_also_run_disabled_tests")
      return false;
  }
  return true;
}

bool same_process(const PlannedTest& a, const PlannedTest& b) {
  return a.command[0] == b.command[0] && a.command.size() == b.command.size() && a.cwd == b.cwd &&
         a.env == b.env && a.skip_return_code == b.skip_return_code;
}

// The first test gtest reports as failed, else the one that was running when the output ends.
std::string failed_case(const std::string& out) {
  std::string running;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string::npos)
      nl = out.size();
    const std::string line = out.substr(pos, nl - pos);
    pos = nl + 1;
    auto after = [&](const char* tag) -> std::string {
      const std::string t = tag;
      if (line.rfind(t, 0) != 0)
        return "";
      std::string rest = line.substr(t.size());
      const auto sp = rest.find(' ');
      return sp == std::string::npos ? rest : rest.substr(0, sp);
    };
    if (auto n = after("[  FAILED  ] "); !n.empty() && line.find(" ms)") != std::string::npos)
      return n;
    if (auto n = after("[ RUN      ] "); !n.empty())
      running = n;
    if (!after("[       OK ] ").empty() || !after("[  SKIPPED ] ").empty())
      running.clear();
  }
  return running;
}

struct Batch {
  std::size_t first = 0, count = 0; // tests[first, first + count)
  std::vector<std::string> command;
};

// Consecutive gtest cases of one executable (same folder, environment and skip rule) run as one
// process with their names joined in --gtest_filter: ctest starts a process per case, which
// costs more than most cases here.
std::vector<Batch> batches(const std::vector<PlannedTest>& tests) {
  std::vector<Batch> out;
  constexpr std::size_t kMaxBatch = 400;
  for (std::size_t i = 0; i < tests.size();) {
    std::string name;
    Batch b;
    b.first = i;
    if (!gtest_case(tests[i], name)) {
      b.count = 1;
      b.command = tests[i].command;
      out.push_back(b);
      ++i;
      continue;
    }
    std::string filter = name;
    std::size_t j = i + 1;
    std::string next;
    while (j < tests.size() && j - i < kMaxBatch && gtest_case(tests[j], next) &&
           same_process(tests[i], tests[j])) {
      filter += ":" + next;
      ++j;
    }
    b.count = j - i;
    b.command = tests[i].command;
    b.command[1] = "--gtest_filter=" + filter;
    out.push_back(b);
    i = j;
  }
  return out;
}

} // namespace

PlanRun run_plan(const std::vector<PlannedTest>& tests, const PlanRunOptions& opt) {
  PlanRun out;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (const Batch& b : batches(tests)) {
    const PlannedTest& t = tests[b.first];
    double limit = 0;
    for (std::size_t i = b.first; i < b.first + b.count; ++i)
      limit += tests[i].timeout_s > 0 ? tests[i].timeout_s : opt.test_timeout_s;
    support::ProcessOptions o =
        support::ProcessOptions::in_dir(t.cwd.empty() ? opt.build_dir : t.cwd);
    o.set_env = t.env;
    for (const auto& [k, v] : opt.env)
      o.set_env[k] = v;
    o.timeout_s = limit;
    bool total_limit = false;
    if (opt.total_timeout_s > 0) {
      const double left = opt.total_timeout_s - elapsed();
      if (left <= 0) {
        out.status = RunStatus::timed_out;
        out.first_failure = t.name;
        out.detail = "the mutant's time limit (" + std::to_string(opt.total_timeout_s) +
                     " s) ran out before this test";
        break;
      }
      if (left < o.timeout_s) {
        o.timeout_s = left;
        total_limit = true;
      }
    }
    o.max_output = 4u << 20;
    const auto r = support::run_process(b.command, o);
    out.tests_run += b.count;
    auto culprit = [&] {
      if (b.count == 1)
        return t.name;
      const std::string n = failed_case(r.output);
      return n.empty() ? t.name + " (or a later case of its executable)" : n;
    };
    if (r.timed_out) {
      out.status = RunStatus::timed_out;
      out.first_failure = culprit();
      out.detail = (total_limit ? "the mutant's time limit ran out in this test"
                                : "timed out after " + std::to_string(o.timeout_s) + " s") +
                   std::string(": ") + detail::last_lines(r.output, 3);
      break;
    }
    if (r.exit_code == -1) {
      out.status = RunStatus::error;
      out.first_failure = t.name;
      out.detail = "could not start: " + r.error;
      break;
    }
    if (t.skip_return_code && r.exit_code == *t.skip_return_code)
      continue;
    if (r.exit_code >= 128 && !t.will_fail) {
      out.status = RunStatus::crashed;
      out.first_failure = culprit();
      out.detail = "killed by signal " + std::to_string(r.exit_code - 128) + ": " +
                   detail::last_lines(r.output, 6);
      break;
    }
    const bool ok = t.will_fail ? r.exit_code != 0 : r.exit_code == 0;
    if (!ok) {
      out.status = RunStatus::failed;
      out.first_failure = culprit();
      out.detail = detail::last_lines(r.output, 8);
      break;
    }
  }
  out.seconds = elapsed();
  return out;
}

} // namespace mmaemu::mutants
