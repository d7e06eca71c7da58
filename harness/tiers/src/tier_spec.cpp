// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_spec.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <tuple>

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/mutants/catalogue.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kMaxJsonDepth = 32; // tier files nest 4 levels; deeper input is refused
constexpr double kMaxSeconds = 30.0 * 24 * 3600;
constexpr std::int64_t kMaxJobs = 4096;

std::string shown_file(const fs::path& file) {
  return support::printable(file.string(), 256);
}

// The JSON type of a value, for "expected a number, got string".
std::string type_of(const json& v) {
  if (v.is_number_float())
    return "number " + support::printable(v.dump(), 32);
  if (v.is_number())
    return "integer " + v.dump();
  return v.type_name();
}

// Names: letters, digits, '_', '-', '.', starting with a letter or digit, no "..", at most
// 32 bytes; a tier name becomes part of log and JUnit file names.
bool safe_name(const std::string& s) {
  if (s.empty() || s.size() > 32 || s.find("..") != std::string::npos)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '_' && c != '-' && c != '.')))
      return false;
  }
  return true;
}

// A ctest label (it becomes part of a regular expression): letters, digits, '_', '-'.
bool safe_label(const std::string& s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (char c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

// An environment variable name: upper-case letters, digits and '_', not starting with a digit.
bool safe_env_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

// Parses a tier file's bytes: syntax errors as "<file>:<line>:<column>: not valid JSON (...)",
// bounded, and no nesting deeper than kMaxJsonDepth.
json parse_tier_json(std::string_view text, const fs::path& file) {
  try {
    return json::parse(text.begin(), text.end(), [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) {
        throw TierFileError(shown_file(file) + ": nested deeper than " +
                            std::to_string(kMaxJsonDepth) + " levels");
      }
      return true;
    });
  } catch (const json::parse_error& e) {
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    // nlohmann's description without its "[json.exception...] parse error at ...: " prefix
    // and without the echoed token ("last read: '...'"), which may be the rest of the file.
    std::string what = e.what();
    if (const auto p = what.find(": "); p != std::string::npos)
      what = what.substr(p + 2);
    if (const auto p = what.find("; last read"); p != std::string::npos)
      what.erase(p);
    throw TierFileError(shown_file(file) + ":" + std::to_string(line) + ":" +
                        std::to_string(column) + ": not valid JSON (" +
                        support::printable(what, 160) + ")");
  } catch (const json::exception& e) {
    // Errors without a position: a number out of range ("number overflow parsing '1e999'").
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos)
      what = what.substr(p + 2);
    throw TierFileError(shown_file(file) + ": not valid JSON (" + support::printable(what, 160) +
                        ")");
  }
}

// Reads fields of one JSON object, naming the file and the key path in every error
// ("<file>: key 'budget.seconds': expected a number, got string"), and rejecting keys the
// schema does not have (a misspelt key must not be silently ignored).
class Reader {
public:
  Reader(const fs::path& file, const json& obj, std::string where)
      : file_(file), obj_(obj), where_(std::move(where)) {
    if (!obj_.is_object()) {
      if (where_.empty())
        throw TierFileError(shown_file(file_) + ": the file must hold a JSON object, not " +
                            type_of(obj_));
      throw TierFileError(shown_file(file_) + ": key '" + where_ + "': expected an object, got " +
                          type_of(obj_));
    }
  }

  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const {
    throw TierFileError(shown_file(file_) + ": key '" + support::printable(path(key)) +
                        "': " + what);
  }
  std::string path(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }

  const json* get(const std::string& key, bool required) {
    seen_.insert(key);
    const auto it = obj_.find(key);
    if (it == obj_.end()) {
      if (required)
        fail_key(key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string str(const std::string& key, bool required = true, bool nonempty = true) {
    const json* v = get(key, required);
    if (!v)
      return "";
    if (!v->is_string())
      fail_key(key, "expected a string, got " + type_of(*v));
    if (nonempty && v->get_ref<const std::string&>().empty())
      fail_key(key, "must not be empty");
    return v->get<std::string>();
  }
  bool boolean(const std::string& key, bool fallback) {
    const json* v = get(key, false);
    if (!v)
      return fallback;
    if (!v->is_boolean())
      fail_key(key, "expected true or false, got " + type_of(*v));
    return v->get<bool>();
  }
  // A finite number in [0, max].
  std::optional<double> number(const std::string& key, bool required, double max = kMaxSeconds) {
    const json* v = get(key, required);
    if (!v)
      return std::nullopt;
    if (!v->is_number())
      fail_key(key, "expected a number, got " + type_of(*v));
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < 0 || d > max) {
      fail_key(key, "expected a number from 0 to " + json(max).dump() + ", got " + type_of(*v));
    }
    return d;
  }
  // An integer in [0, max].
  std::optional<std::int64_t> integer(const std::string& key, std::int64_t max) {
    const json* v = get(key, false);
    if (!v)
      return std::nullopt;
    if (!v->is_number_integer())
      fail_key(key, "expected an integer, got " + type_of(*v));
    if (v->is_number_unsigned() ? v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)
                                : (v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > max)) {
      fail_key(key,
               "expected an integer from 0 to " + std::to_string(max) + ", got " + type_of(*v));
    }
    return v->get<std::int64_t>();
  }
  std::vector<std::string> strings(const std::string& key, bool required = false,
                                   bool (*valid)(const std::string&) = nullptr,
                                   const char* rule = "") {
    const json* v = get(key, required);
    std::vector<std::string> out;
    if (!v)
      return out;
    if (!v->is_array())
      fail_key(key, "expected an array of strings, got " + type_of(*v));
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      const std::string at = key + "[" + std::to_string(i) + "]";
      if (!e.is_string())
        fail_key(at, "expected a string, got " + type_of(e));
      if (valid && !valid(e.get_ref<const std::string&>())) {
        fail_key(at,
                 "'" + support::printable(e.get_ref<const std::string&>()) + "' is not " + rule);
      }
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  const json& array(const std::string& key) {
    static const json empty = json::array();
    const json* v = get(key, false);
    if (!v)
      return empty;
    if (!v->is_array())
      fail_key(key, "expected an array, got " + type_of(*v));
    return *v;
  }
  const json* object(const std::string& key) {
    const json* v = get(key, false);
    if (v && !v->is_object())
      fail_key(key, "expected an object, got " + type_of(*v));
    return v;
  }
  void no_other_keys(const std::string& schema = kTierSchema) const {
    for (const auto& [k, v] : obj_.items()) {
      if (!seen_.count(k))
        fail_key(k, "not a key of " + schema);
    }
  }
  const fs::path& file() const { return file_; }

private:
  const fs::path& file_;
  const json& obj_;
  std::string where_;
  std::set<std::string> seen_;
};

// The figures or targets of a command tier: name -> {unit, target, better}.
void check_figures(Reader& runr, const std::string& key, bool unit_allowed) {
  const json* figures = runr.object(key);
  if (!figures)
    return;
  for (const auto& [name, f] : figures->items()) {
    Reader fr(runr.file(), f, runr.path(key) + "." + support::printable(name));
    if (unit_allowed)
      fr.str("unit", false, false);
    fr.number("target", false, 1e300);
    const std::string better = fr.str("better", false);
    if (!better.empty() && better != "lower" && better != "higher")
      fr.fail_key("better", "is '" + support::printable(better) + "', not 'lower' or 'higher'");
    fr.no_other_keys("run." + key + " entries");
  }
}

// A path field of the run (tier_paths.hpp): absent, or a relative path that stays inside the
// tier's tree (or, for run.result, the run's output folder).
void check_path_field(Reader& runr, const std::string& key, TierPathRoot root) {
  const json* v = runr.get(key, false);
  if (!v)
    return;
  const std::string value = runr.str(key, false);
  if (const auto why = tier_path_problem(value, root))
    runr.fail_key(key, "must be a path inside the tier's tree" +
                           std::string(root == TierPathRoot::out_or_tree ? " or {out}" : "") +
                           ": it " + *why);
}

// The parameters of each kind of run (tier_ctest.cpp, tier_replay.cpp, tier_truth.cpp,
// tier_command.cpp, tier_package.cpp): every key typed and range-checked here, so that the
// runners read only checked values.
void check_run(Reader& runr, const std::string& kind) {
  if (kind == "ctest") {
    if (runr.strings("labels", true, safe_label, "a ctest label (letters, digits, '_', '-')")
            .empty())
      runr.fail_key("labels", "must name at least one ctest label");
    runr.strings("exclude_labels", false, safe_label, "a ctest label (letters, digits, '_', '-')");
    runr.integer("jobs", kMaxJobs);
    runr.number("timeout_s", false);
  } else if (kind == "truth") {
    const std::string env = runr.str("env", false);
    if (!env.empty() && !safe_env_name(env))
      runr.fail_key("env", "'" + support::printable(env) + "' is not an environment variable name");
  } else if (kind == "command") {
    if (runr.strings("argv", true).empty())
      runr.fail_key("argv", "must not be empty");
    check_path_field(runr, "result", TierPathRoot::out_or_tree);
    runr.number("timeout_s", false);
    check_figures(runr, "figures", true);
    check_figures(runr, "targets", false);
  } else if (kind == "package") {
    runr.str("generator", false);
    check_path_field(runr, "consumer", TierPathRoot::tree);
    runr.number("timeout_s", false);
  } else if (kind == "mutants") {
    check_path_field(runr, "catalogue", TierPathRoot::tree);
    const std::string mt = runr.str("mutant_tier", false);
    if (!mt.empty() && mt != "cpu" && mt != "gpu")
      runr.fail_key("mutant_tier", "must be cpu or gpu");
    runr.number("mutant_timeout_s", false);
    const std::string ex = runr.str("exclude_tests", false);
    if (!ex.empty()) {
      try {
        (void)std::regex(ex, std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        runr.fail_key("exclude_tests", "is not a regular expression");
      }
      if (runr.str("exclude_why", false).empty())
        runr.fail_key("exclude_why", "must say why exclude_tests leaves those tests out");
    }
    // first_tests: {"<group>": "<ctest name regex>"}, the tests a mutant of that group runs
    // first; the same tests run, so only its reason is needed, not a proof.
    if (const json* first = runr.object("first_tests")) {
      for (const auto& [group, regex] : first->items()) {
        const auto& groups = mutants::catalogue_groups();
        if (std::find(groups.begin(), groups.end(), group) == groups.end())
          runr.fail_key("first_tests",
                        "names '" + support::printable(group) + "', which is not a mutant group");
        bool ok = regex.is_string() && !regex.get<std::string>().empty();
        if (ok) {
          try {
            (void)std::regex(regex.get<std::string>(), std::regex::ECMAScript);
          } catch (const std::regex_error&) {
            ok = false;
          }
        }
        if (!ok)
          runr.fail_key("first_tests", "'" + support::printable(group) +
                                           "' must map to a regular expression on test names");
      }
      if (runr.str("first_tests_why", false).empty())
        runr.fail_key("first_tests_why", "must say why first_tests runs those tests first");
    }
  } else if (kind == "device") {
    runr.integer("device", 63);
    runr.integer("projection_m", 1 << 16);
    runr.integer("projection_n", 1 << 16);
    runr.integer("projection_k", 1 << 20);
    runr.integer("adversarial_size", 4096);
  }
  runr.no_other_keys("mmaemu-tier/1 run kind '" + kind + "'");
}

// T0 < T1 < T1s < T2 < ... < T10: by the prefix, the number (compared as digits: no
// overflow), then the suffix.
bool tier_less(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9'))
      ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9')
      ++j;
    std::string digits = s.substr(i, j - i);
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
    return std::make_tuple(s.substr(0, i), j > i, digits.size(), digits, s.substr(j));
  };
  return split(a) < split(b);
}

} // namespace

const std::vector<std::string>& tier_kinds() {
  static const std::vector<std::string> k = {"ctest",   "replay",  "truth", "command",
                                             "package", "mutants", "device"};
  return k;
}

TierSpec load_tier_file(const fs::path& file) {
  std::string text;
  try {
    text = support::read_input_file(file, support::kMaxTextBytes, "tier file");
  } catch (const support::FileError& e) {
    throw TierFileError(e.what());
  }
  return parse_tier_text(text, file);
}

TierSpec parse_tier_text(std::string_view text, const fs::path& file) {
  if (text.size() > support::kMaxTextBytes) {
    throw TierFileError(shown_file(file) + ": tier file is " + std::to_string(text.size()) +
                        " bytes, over the limit of " + std::to_string(support::kMaxTextBytes));
  }
  const json j = parse_tier_json(text, file);
  Reader top(file, j, "");
  TierSpec t;
  t.file = file;
  t.file_sha256 = support::sha256_hex(text.data(), text.size());
  const std::string schema = top.str("schema");
  if (schema != kTierSchema) {
    top.fail_key("schema",
                 "is '" + support::printable(schema) + "', expected '" + kTierSchema + "'");
  }
  t.name = top.str("name");
  if (!safe_name(t.name)) {
    top.fail_key("name", "'" + support::printable(t.name) +
                             "' is not a tier name (letters, digits, '_', '-', '.', at most 32, "
                             "no '..'; it becomes part of file names)");
  }
  if (t.name != file.stem().string()) {
    top.fail_key("name", "is '" + t.name + "' but the file is " +
                             support::printable(file.filename().string()) +
                             " (the name must equal the file's stem)");
  }
  t.title = top.str("title");
  t.purpose = top.str("purpose");
  t.when = top.str("when");
  t.required_for_release = top.boolean("required_for_release", false);
  t.progress = top.boolean("progress", false);
  t.labels = top.strings("labels", false, safe_label, "a ctest label (letters, digits, '_', '-')");
  top.str("notes", false, false);                   // free text for people
  top.str("SPDX-License-Identifier", false, false); // JSON has no comments

  Reader budget(file, *top.get("budget", true), "budget");
  t.budget_seconds = *budget.number("seconds", true);
  t.budget_data_mib = budget.number("data_mib", false, 1 << 20);
  budget.no_other_keys();

  const json& run = *top.get("run", true);
  Reader runr(file, run, "run");
  t.kind = runr.str("kind");
  if (std::find(tier_kinds().begin(), tier_kinds().end(), t.kind) == tier_kinds().end()) {
    std::string known;
    for (const auto& k : tier_kinds())
      known += (known.empty() ? "" : ", ") + k;
    runr.fail_key("kind", "is '" + support::printable(t.kind) + "', not one of " + known);
  }
  check_run(runr, t.kind);
  t.run = run;

  Reader needs(file, *top.get("needs", true), "needs");
  t.needs_build_tree = needs.boolean("build_tree", false);
  t.needs_source_tree = needs.boolean("source_tree", false);
  t.files = needs.strings("files");
  for (std::size_t i = 0; i < t.files.size(); ++i) {
    if (const auto why = tier_path_problem(t.files[i], TierPathRoot::tree))
      needs.fail_key("files[" + std::to_string(i) + "]",
                     "must be a path inside the source tree: it " + *why);
  }
  t.commands = needs.strings("commands");
  const json& env = needs.array("env");
  for (std::size_t i = 0; i < env.size(); ++i) {
    Reader er(file, env[i], "needs.env[" + std::to_string(i) + "]");
    EnvNeed n{er.str("name"), er.str("what")};
    if (!safe_env_name(n.name))
      er.fail_key("name",
                  "'" + support::printable(n.name) + "' is not an environment variable name");
    er.no_other_keys();
    t.env.push_back(n);
  }
  const json& devices = needs.array("devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Reader dr(file, devices[i], "needs.devices[" + std::to_string(i) + "]");
    DeviceNeed n{dr.str("kind"), dr.str("name", false, false), dr.str("why")};
    if (n.kind != "cuda")
      dr.fail_key("kind", "is '" + support::printable(n.kind) + "', only 'cuda' is known");
    dr.no_other_keys();
    t.devices.push_back(n);
  }
  needs.no_other_keys();
  top.no_other_keys();
  return t;
}

std::vector<TierSpec> load_tiers(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw TierFileError(shown_file(dir) + ": no tier folder there (use --tiers DIR)");
  }
  // Every *.json entry is a tier file: one that is not a regular file (a FIFO, a device, a
  // folder, a symlink to one) is refused by name, not skipped.
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json")
      files.push_back(it->path());
  }
  if (ec)
    throw TierFileError(shown_file(dir) + ": cannot be listed (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  std::vector<TierSpec> tiers;
  for (const auto& f : files)
    tiers.push_back(load_tier_file(f));
  if (tiers.empty())
    throw TierFileError(shown_file(dir) + ": holds no tier file (*.json)");
  std::sort(tiers.begin(), tiers.end(),
            [](const TierSpec& a, const TierSpec& b) { return tier_less(a.name, b.name); });
  return tiers;
}

const TierSpec& find_tier(const std::vector<TierSpec>& tiers, const std::string& name) {
  for (const auto& t : tiers) {
    if (t.name == name)
      return t;
  }
  std::string known;
  for (const auto& t : tiers)
    known += (known.empty() ? "" : ", ") + t.name;
  throw TierFileError("tier '" + support::printable(name) + "' is not declared (known: " + known +
                      ")");
}

} // namespace mmaemu::harness
