// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/profile.hpp"

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "embedded_data.hpp"
#include "mmaemu/emulator/errors.hpp"

namespace mmaemu {

namespace {

using nlohmann::json;

Format format_field(const json& j, const char* key, const std::string& where) {
  const auto name = j.at(key).get<std::string>();
  const auto f = parse_format(name);
  if (!f)
    throw ValueError(where + ": field '" + key + "' = '" + name + "' is not a format");
  return *f;
}

Maturity maturity_of(const std::string& s, const std::string& where) {
  if (s == "validated")
    return Maturity::validated;
  if (s == "experimental")
    return Maturity::experimental;
  if (s == "custom")
    return Maturity::custom;
  throw ValueError(where + ": maturity '" + s + "' is not validated, experimental or custom");
}

SplitKTable table_from(const json& j) {
  SplitKTable t;
  t.id = j.at("table").get<std::string>();
  t.note = j.value("note", "");
  for (const auto& e : j.at("entries")) {
    SplitKEntry x;
    const std::string where = "split-K table '" + t.id + "'";
    x.M = e.at("M").get<std::int64_t>();
    x.N = e.at("N").get<std::int64_t>();
    x.K = e.at("K").get<std::int64_t>();
    x.a = format_field(e, "a", where);
    x.b = format_field(e, "b", where);
    x.out = format_field(e, "out", where);
    x.fast = e.at("fast").get<bool>();
    x.S = e.at("S").get<int>();
    x.scheme = e.value("scheme", x.S == 1 ? "none" : "");
    x.verified = e.value("verified", false);
    x.evidence = e.value("evidence", "");
    t.entries.push_back(x);
  }
  return t;
}

const SplitKTable& shipped_table(const std::string& id) {
  static const std::map<std::string, SplitKTable> tables = [] {
    std::map<std::string, SplitKTable> m;
    for (const auto& [tid, text] : data::splitk_tables_json())
      m[tid] = parse_splitk_table_json(text);
    return m;
  }();
  auto it = tables.find(id);
  if (it == tables.end())
    throw ValueError("split-K table '" + id + "' is not shipped");
  return it->second;
}

GemmModel gemm_from(const json& j, const std::string& where) {
  GemmModel g;
  if (!j.is_object())
    throw ValueError(where + ": field 'gemm' must be an object");
  const std::string w = where + ": gemm";
  g.split_grain = j.value("split_grain", 16);
  if (g.split_grain < 1 || g.split_grain > 4096) {
    throw ValueError(w + ".split_grain = " + std::to_string(g.split_grain) + " is not in 1..4096");
  }
  if (j.contains("slow_block")) {
    const json& b = j["slow_block"];
    if (b.is_string() && b.get<std::string>() == "preset") {
      g.slow_block_from_preset = true;
    } else if (b.is_string() && b.get<std::string>() == "flat") {
      g.slow_block_from_preset = false;
      g.slow_block = std::nullopt;
    } else if (b.is_number_integer() && b.get<std::int64_t>() >= 1 &&
               b.get<std::int64_t>() <= (std::int64_t{1} << 30)) {
      g.slow_block_from_preset = false;
      g.slow_block = b.get<int>();
    } else {
      throw ValueError(w + ".slow_block = " + b.dump() +
                       " is not \"preset\", \"flat\" or a block length in 1..2^30");
    }
  }
  const std::string merge = j.value("merge", "forward");
  if (merge == "forward")
    g.merge = PartialMerge::forward;
  else if (merge == "reverse")
    g.merge = PartialMerge::reverse;
  else
    throw ValueError(w + ".merge = '" + merge + "' is not forward or reverse");
  const std::string fold = j.value("scale_fold", "fold_once");
  if (fold == "fold_once")
    g.scale_fold = ScaleFold::fold_once;
  else if (fold == "two_multiplies")
    g.scale_fold = ScaleFold::two_multiplies;
  else
    throw ValueError(w + ".scale_fold = '" + fold + "' is not fold_once or two_multiplies");
  g.evidence = j.value("evidence", "");
  return g;
}

Profile profile_from(const json& j, bool resolve_table) {
  Profile p;
  p.name = j.at("name").get<std::string>();
  const std::string where = "profile '" + p.name + "'";
  p.preset = j.at("preset").get<std::string>();
  get_preset_quiet(p.preset); // must exist
  p.gpu_name = j.at("gpu_name").get<std::string>();
  p.capability = j.at("capability").get<std::string>();
  {
    std::size_t used = 0;
    double cc = 0;
    try {
      cc = std::stod(p.capability, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != p.capability.size() || cc <= 0) {
      throw ValueError(where + ": capability '" + p.capability + "' is not MAJOR.MINOR (e.g. 9.0)");
    }
  }
  p.sm_count = j.at("sm_count").get<int>();
  p.cublaslt_version = j.at("cublaslt_version").get<std::string>();
  p.caller = j.at("caller").get<std::string>();
  p.torch_version = j.at("torch_version").get<std::string>();
  p.workspace_bytes = j.at("workspace_bytes").get<std::int64_t>();
  p.align = j.value("align", 16);
  if (j.contains("splitk_table") && j["splitk_table"].is_string()) {
    const auto id = j["splitk_table"].get<std::string>();
    p.splitk_table = resolve_table ? shipped_table(id) : SplitKTable{id, "", {}};
  } else if (j.contains("splitk_table") && j["splitk_table"].is_object()) {
    p.splitk_table = table_from(j["splitk_table"]);
  }
  p.split_schemes = j.value("split_schemes", std::vector<std::string>{});
  for (const auto& s : p.split_schemes) {
    if (s != "contiguous" && s != "serial" && s != "pairwise") {
      throw ValueError(where + ": split scheme '" + s + "' is not contiguous, serial or pairwise");
    }
  }
  // Every profile's cuBLASLt rejects e4m3 x e4m3 with an e5m2 output (scaled-mm-facts.md).
  p.rejects.push_back({Format::e4m3, Format::e4m3, Format::e5m2,
                       "cuBLASLt rejects float8_e4m3fn x float8_e4m3fn with a float8_e5m2 "
                       "output (CUBLAS_STATUS_NOT_SUPPORTED)"});
  for (const auto& r : j.value("rejects", json::array())) {
    RejectRule rule;
    if (r.contains("a"))
      rule.a = format_field(r, "a", where);
    if (r.contains("b"))
      rule.b = format_field(r, "b", where);
    if (r.contains("out"))
      rule.out = format_field(r, "out", where);
    rule.message = r.at("message").get<std::string>();
    p.rejects.push_back(rule);
  }
  p.maturity = maturity_of(j.at("maturity").get<std::string>(), where);
  p.splitk_maturity = j.value("splitk_maturity", "unrecorded");
  if (j.contains("envelope") && j["envelope"].is_object()) {
    const auto& e = j["envelope"];
    SplitKEnvelope env;
    env.min_mn = e.at("min_mn").get<std::int64_t>();
    env.max_k = e.at("max_k").get<std::int64_t>();
    env.validated = e.value("validated", false);
    env.evidence = e.value("evidence", "");
    p.envelope = env;
  }
  if (j.contains("gemm"))
    p.gemm = gemm_from(j["gemm"], where);
  return p;
}

const std::vector<Profile>& shipped() {
  static const std::vector<Profile> profiles = [] {
    std::vector<Profile> v;
    const json j = json::parse(data::profiles_json());
    for (const auto& p : j.at("profiles"))
      v.push_back(profile_from(p, true));
    return v;
  }();
  return profiles;
}

} // namespace

const char* partial_merge_name(PartialMerge m) {
  return m == PartialMerge::forward ? "forward" : "reverse";
}

const char* scale_fold_name(ScaleFold f) {
  return f == ScaleFold::fold_once ? "fold_once" : "two_multiplies";
}

bool slow_accumulation_characterised(const Profile& profile, const Preset& preset) {
  return !profile.gemm.slow_block_from_preset || preset.slow_chunk.has_value();
}

std::optional<int> slow_block_of(const Profile& profile, const Preset& preset) {
  return profile.gemm.slow_block_from_preset ? preset.slow_chunk : profile.gemm.slow_block;
}

std::optional<std::string> Profile::rejects_call(Format a, Format b, Format out) const {
  for (const auto& r : rejects) {
    if ((!r.a || *r.a == a) && (!r.b || *r.b == b) && (!r.out || *r.out == out))
      return r.message;
  }
  return std::nullopt;
}

const Profile& get_profile(std::string_view name) {
  for (const auto& p : shipped()) {
    if (p.name == name)
      return p;
  }
  std::string known;
  for (const auto& p : shipped())
    known += (known.empty() ? "" : ", ") + p.name;
  throw ValueError("unknown profile '" + std::string(name) + "' (known: " + known + ")");
}

const Profile& get_profile_or_default(std::string_view name) {
  if (!name.empty())
    return get_profile(name);
  if (const char* env = std::getenv("MMAEMU_PROFILE"); env && *env)
    return get_profile(env);
  return get_profile("hopper");
}

std::vector<std::string> list_profiles() {
  std::vector<std::string> v;
  for (const auto& p : shipped())
    v.push_back(p.name);
  return v;
}

Profile parse_profile_json(const std::string& json_text) {
  try {
    return profile_from(json::parse(json_text), false);
  } catch (const json::exception& e) {
    throw ValueError(std::string("profile JSON: ") + e.what());
  }
}

SplitKTable parse_splitk_table_json(const std::string& json_text) {
  try {
    return table_from(json::parse(json_text));
  } catch (const json::exception& e) {
    throw ValueError(std::string("split-K table JSON: ") + e.what());
  }
}

} // namespace mmaemu
