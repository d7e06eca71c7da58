// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_spec.hpp"

#include <algorithm>
#include <set>

#include "mmaemu/support/digest.hpp"
#include "mmaemu/reports/canonical_json.hpp"

namespace mmaemu::harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Reads fields of one JSON object, naming the file and the key path in every error, and
// rejecting keys the schema does not have (a misspelt key must not be silently ignored).
class Reader {
public:
  Reader(const fs::path& file, const json& obj, std::string where)
      : file_(file), obj_(obj), where_(std::move(where)) {
    if (!obj_.is_object())
      fail(where_.empty() ? "the file must hold a JSON object" : "must be an object");
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw TierFileError(file_.string() + ": " + (where_.empty() ? "" : "'" + where_ + "' ") + what);
  }
  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const {
    throw TierFileError(file_.string() + ": '" + path(key) + "' " + what);
  }
  std::string path(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }

  const json* get(const std::string& key, bool required) {
    seen_.insert(key);
    const auto it = obj_.find(key);
    if (it == obj_.end()) {
      if (required)
        fail_key(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  std::string str(const std::string& key, bool required = true, bool nonempty = true) {
    const json* v = get(key, required);
    if (!v)
      return "";
    if (!v->is_string())
      fail_key(key, "must be a string, not " + v->dump());
    if (nonempty && v->get<std::string>().empty())
      fail_key(key, "must not be empty");
    return v->get<std::string>();
  }
  bool boolean(const std::string& key, bool fallback) {
    const json* v = get(key, false);
    if (!v)
      return fallback;
    if (!v->is_boolean())
      fail_key(key, "must be true or false, not " + v->dump());
    return v->get<bool>();
  }
  std::optional<double> number(const std::string& key, bool required) {
    const json* v = get(key, required);
    if (!v)
      return std::nullopt;
    if (!v->is_number() || v->get<double>() < 0) {
      fail_key(key, "must be a non-negative number, not " + v->dump());
    }
    return v->get<double>();
  }
  std::vector<std::string> strings(const std::string& key) {
    const json* v = get(key, false);
    std::vector<std::string> out;
    if (!v)
      return out;
    if (!v->is_array())
      fail_key(key, "must be an array of strings");
    for (const auto& e : *v) {
      if (!e.is_string())
        fail_key(key, "must be an array of strings, holds " + e.dump());
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
      fail_key(key, "must be an array");
    return *v;
  }
  void no_other_keys() const {
    for (const auto& [k, v] : obj_.items()) {
      if (!seen_.count(k))
        fail_key(k, "is not a key of " + std::string(kTierSchema));
    }
  }

private:
  const fs::path& file_;
  const json& obj_;
  std::string where_;
  std::set<std::string> seen_;
};

// T0 < T1 < T1s < T2 < ... < T10: by the number, then the suffix.
bool tier_less(const std::string& a, const std::string& b) {
  auto num = [](const std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9'))
      ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9')
      ++j;
    return std::make_tuple(s.substr(0, i), j > i ? std::stol(s.substr(i, j - i)) : -1L,
                           s.substr(j));
  };
  return num(a) < num(b);
}

} // namespace

const std::vector<std::string>& tier_kinds() {
  static const std::vector<std::string> k = {"ctest",   "replay",  "truth",
                                             "command", "package", "mutants"};
  return k;
}

TierSpec load_tier_file(const fs::path& file) {
  std::string text;
  try {
    text = reports::read_file_bytes(file);
  } catch (const std::exception& e) {
    throw TierFileError(e.what());
  }
  json j;
  try {
    j = reports::parse_json_text(text, file.string());
  } catch (const std::exception& e) {
    throw TierFileError(e.what());
  }
  Reader top(file, j, "");
  TierSpec t;
  t.file = file;
  t.file_sha256 = support::sha256_hex(text.data(), text.size());
  const std::string schema = top.str("schema");
  if (schema != kTierSchema) {
    top.fail_key("schema", "is '" + schema + "', expected '" + kTierSchema + "'");
  }
  t.name = top.str("name");
  if (t.name != file.stem().string()) {
    top.fail_key("name", "is '" + t.name + "' but the file is " + file.filename().string() +
                             " (the name must equal the file's stem)");
  }
  t.title = top.str("title");
  t.purpose = top.str("purpose");
  t.when = top.str("when");
  t.required_for_release = top.boolean("required_for_release", false);
  t.progress = top.boolean("progress", false);
  t.labels = top.strings("labels");
  top.str("notes", false, false);                   // free text for people
  top.str("SPDX-License-Identifier", false, false); // JSON has no comments

  Reader budget(file, *top.get("budget", true), "budget");
  t.budget_seconds = *budget.number("seconds", true);
  t.budget_data_mib = budget.number("data_mib", false);
  budget.no_other_keys();

  const json& run = *top.get("run", true);
  Reader runr(file, run, "run");
  t.kind = runr.str("kind");
  if (std::find(tier_kinds().begin(), tier_kinds().end(), t.kind) == tier_kinds().end()) {
    std::string known;
    for (const auto& k : tier_kinds())
      known += (known.empty() ? "" : ", ") + k;
    runr.fail_key("kind", "is '" + t.kind + "', not one of " + known);
  }
  t.run = run;

  Reader needs(file, *top.get("needs", true), "needs");
  t.needs_build_tree = needs.boolean("build_tree", false);
  t.needs_source_tree = needs.boolean("source_tree", false);
  t.files = needs.strings("files");
  t.commands = needs.strings("commands");
  for (const auto& e : needs.array("env")) {
    Reader er(file, e, "needs.env[]");
    EnvNeed n{er.str("name"), er.str("what")};
    er.no_other_keys();
    t.env.push_back(n);
  }
  for (const auto& d : needs.array("devices")) {
    Reader dr(file, d, "needs.devices[]");
    DeviceNeed n{dr.str("kind"), dr.str("name", false, false), dr.str("why")};
    if (n.kind != "cuda")
      dr.fail_key("kind", "is '" + n.kind + "', only 'cuda' is known");
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
    throw TierFileError(dir.string() + ": no tier folder there (use --tiers DIR)");
  }
  std::vector<TierSpec> tiers;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      tiers.push_back(load_tier_file(e.path()));
    }
  }
  if (tiers.empty())
    throw TierFileError(dir.string() + ": holds no tier file (*.json)");
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
  throw TierFileError("tier '" + name + "' is not declared (known: " + known + ")");
}

} // namespace mmaemu::harness
