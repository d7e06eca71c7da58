// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_spec.hpp"

#include <algorithm>
#include <regex>
#include <tuple>

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/mutants/catalogue.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/json_input.hpp"
#include "mmaemu/support/text.hpp"

namespace mmaemu::harness {

namespace fs = std::filesystem;
using nlohmann::json;
using support::JsonObjectReader;
using support::JsonStringRule;

namespace {

// Tier files nest 4 levels; deeper input is refused while it is parsed.
constexpr support::JsonLimits kTierJsonLimits{support::kMaxTextBytes, 32};
constexpr double kMaxSeconds = 30.0 * 24 * 3600;
constexpr std::int64_t kMaxJobs = 4096;

std::string shown_file(const fs::path& file) {
  return support::shown_path(file);
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

const JsonStringRule kLabelRule{safe_label, "a ctest label (letters, digits, '_', '-')"};
const JsonStringRule kEnvNameRule{safe_env_name, "an environment variable name"};

// The figures or targets of a command tier: name -> {unit, target, better}.
void check_figures(JsonObjectReader& runr, const std::string& key, bool unit_allowed) {
  const json* figures = runr.optional_object(key);
  if (!figures)
    return;
  for (const auto& [name, f] : figures->items()) {
    JsonObjectReader fr(f, runr.at(key).key(name), "run." + key + " entries");
    if (unit_allowed)
      fr.optional_string("unit", true);
    fr.optional_number("target", 0, 1e300);
    const std::string better = fr.optional_string("better").value_or("");
    if (!better.empty() && better != "lower" && better != "higher")
      fr.fail("better", "is '" + support::printable(better) + "', not 'lower' or 'higher'");
    fr.no_other_keys();
  }
}

// A path field of the run (tier_paths.hpp): absent, or a relative path that stays inside the
// tier's tree (or, for run.result, the run's output folder).
void check_path_field(JsonObjectReader& runr, const std::string& key, TierPathRoot root) {
  const auto value = runr.optional_string(key);
  if (!value)
    return;
  if (const auto why = tier_path_problem(*value, root))
    runr.fail(key, "must be a path inside the tier's tree" +
                       std::string(root == TierPathRoot::out_or_tree ? " or {out}" : "") + ": it " +
                       *why);
}

// The parameters of each kind of run (tier_ctest.cpp, tier_replay.cpp, tier_truth.cpp,
// tier_command.cpp, tier_package.cpp): every key typed and range-checked here, so that the
// runners read only checked values.
void check_run(JsonObjectReader& runr, const std::string& kind) {
  if (kind == "ctest") {
    if (runr.strings("labels", kLabelRule).empty())
      runr.fail("labels", "must name at least one ctest label");
    runr.optional_strings("exclude_labels", kLabelRule);
    runr.optional_integer("jobs", 0, kMaxJobs);
    runr.optional_number("timeout_s", 0, kMaxSeconds);
  } else if (kind == "truth") {
    runr.optional_string("env", false, kEnvNameRule);
  } else if (kind == "command") {
    if (runr.strings("argv").empty())
      runr.fail("argv", "must not be empty");
    check_path_field(runr, "result", TierPathRoot::out_or_tree);
    runr.optional_number("timeout_s", 0, kMaxSeconds);
    check_figures(runr, "figures", true);
    check_figures(runr, "targets", false);
  } else if (kind == "package") {
    runr.optional_string("generator");
    check_path_field(runr, "consumer", TierPathRoot::tree);
    runr.optional_number("timeout_s", 0, kMaxSeconds);
  } else if (kind == "mutants") {
    check_path_field(runr, "catalogue", TierPathRoot::tree);
    const std::string mt = runr.optional_string("mutant_tier").value_or("");
    if (!mt.empty() && mt != "cpu" && mt != "gpu")
      runr.fail("mutant_tier", "must be cpu or gpu");
    runr.optional_number("mutant_timeout_s", 0, kMaxSeconds);
    const std::string ex = runr.optional_string("exclude_tests").value_or("");
    if (!ex.empty()) {
      try {
        (void)std::regex(ex, std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        runr.fail("exclude_tests", "is not a regular expression");
      }
      if (!runr.optional_string("exclude_why"))
        runr.fail("exclude_why", "must say why exclude_tests leaves those tests out");
    }
    // first_tests: {"<group>": "<ctest name regex>"}, the tests a mutant of that group runs
    // first; the same tests run, so only its reason is needed, not a proof.
    if (const json* first = runr.optional_object("first_tests")) {
      for (const auto& [group, regex] : first->items()) {
        const auto& groups = mutants::catalogue_groups();
        if (std::find(groups.begin(), groups.end(), group) == groups.end())
          runr.fail("first_tests",
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
          runr.fail("first_tests", "'" + support::printable(group) +
                                       "' must map to a regular expression on test names");
      }
      if (!runr.optional_string("first_tests_why"))
        runr.fail("first_tests_why", "must say why first_tests runs those tests first");
    }
  } else if (kind == "device") {
    runr.optional_integer("device", 0, 63);
    runr.optional_integer("projection_m", 0, 1 << 16);
    runr.optional_integer("projection_n", 0, 1 << 16);
    runr.optional_integer("projection_k", 0, 1 << 20);
    runr.optional_integer("adversarial_size", 0, 4096);
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

namespace {

TierSpec read_tier(std::string_view text, const fs::path& file) {
  const std::string source = shown_file(file);
  const json j = support::parse_json_input(text, source, kTierJsonLimits);
  if (!j.is_object()) {
    throw TierFileError(source + ": the file must hold a JSON object, not " + support::type_of(j));
  }
  JsonObjectReader top(j, support::JsonLocation(source), kTierSchema);
  TierSpec t;
  t.file = file;
  t.file_sha256 = support::sha256_hex(text.data(), text.size());
  const std::string schema = top.string("schema");
  if (schema != kTierSchema) {
    top.fail("schema", "is '" + support::printable(schema) + "', expected '" + kTierSchema + "'");
  }
  t.name = top.string("name");
  if (!safe_name(t.name)) {
    top.fail("name", "'" + support::printable(t.name) +
                         "' is not a tier name (letters, digits, '_', '-', '.', at most 32, "
                         "no '..'; it becomes part of file names)");
  }
  if (t.name != file.stem().string()) {
    top.fail("name", "is '" + t.name + "' but the file is " +
                         support::printable(file.filename().string()) +
                         " (the name must equal the file's stem)");
  }
  t.title = top.string("title");
  t.purpose = top.string("purpose");
  t.when = top.string("when");
  t.required_for_release = top.boolean("required_for_release", false);
  t.progress = top.boolean("progress", false);
  t.labels = top.optional_strings("labels", kLabelRule);
  top.optional_string("notes", true);                   // free text for people
  top.optional_string("SPDX-License-Identifier", true); // JSON has no comments

  JsonObjectReader budget(top.value("budget"), top.at("budget"), kTierSchema);
  t.budget_seconds = budget.number("seconds", 0, kMaxSeconds);
  t.budget_data_mib = budget.optional_number("data_mib", 0, 1 << 20);
  budget.no_other_keys();

  const json& run = top.value("run");
  JsonObjectReader runr(run, top.at("run"), kTierSchema);
  t.kind = runr.string("kind");
  if (std::find(tier_kinds().begin(), tier_kinds().end(), t.kind) == tier_kinds().end()) {
    std::string known;
    for (const auto& k : tier_kinds())
      known += (known.empty() ? "" : ", ") + k;
    runr.fail("kind", "is '" + support::printable(t.kind) + "', not one of " + known);
  }
  check_run(runr, t.kind);
  t.run = run;

  JsonObjectReader needs(top.value("needs"), top.at("needs"), kTierSchema);
  t.needs_build_tree = needs.boolean("build_tree", false);
  t.needs_source_tree = needs.boolean("source_tree", false);
  t.files = needs.optional_strings("files");
  for (std::size_t i = 0; i < t.files.size(); ++i) {
    if (const auto why = tier_path_problem(t.files[i], TierPathRoot::tree))
      needs.at("files").index(i).fail("must be a path inside the source tree: it " + *why);
  }
  t.commands = needs.optional_strings("commands");
  if (const json* env = needs.optional_array("env")) {
    for (std::size_t i = 0; i < env->size(); ++i) {
      JsonObjectReader er((*env)[i], needs.at("env").index(i), kTierSchema);
      EnvNeed n;
      n.name = er.string("name", false, kEnvNameRule);
      n.what = er.string("what");
      er.no_other_keys();
      t.env.push_back(n);
    }
  }
  if (const json* devices = needs.optional_array("devices")) {
    for (std::size_t i = 0; i < devices->size(); ++i) {
      JsonObjectReader dr((*devices)[i], needs.at("devices").index(i), kTierSchema);
      DeviceNeed n;
      n.kind = dr.string("kind");
      n.name = dr.optional_string("name", true).value_or("");
      n.why = dr.string("why");
      if (n.kind != "cuda")
        dr.fail("kind", "is '" + support::printable(n.kind) + "', only 'cuda' is known");
      dr.no_other_keys();
      t.devices.push_back(n);
    }
  }
  needs.no_other_keys();
  top.no_other_keys();
  return t;
}

} // namespace

TierSpec parse_tier_text(std::string_view text, const fs::path& file) {
  try {
    return read_tier(text, file);
  } catch (const support::JsonInputError& e) {
    throw TierFileError(e.what());
  }
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
