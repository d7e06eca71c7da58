// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/splitk_live_map.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "mmaemu/emulator/errors.hpp"
#include "splitk_live_map_data.hpp"

namespace mmaemu::kernels {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "mmaemu-splitk-live-map/1";
constexpr const char* kMapFile = "kernels/data/splitk_live_map.json";

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw ValueError("split-K live map: " + where + ": " + what);
}

const json& field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    bad(where, std::string("missing '") + key + "'");
  return j.at(key);
}

std::string string_field(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_string() || v.get<std::string>().empty())
    bad(where + "." + key, "expected a non-empty string");
  return v.get<std::string>();
}

int int_field(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1000000)
    bad(where + "." + key, "expected an integer in 0..1000000");
  return v.get<int>();
}

std::vector<std::string> strings_field(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_array() || v.empty())
    bad(where + "." + key, "expected a non-empty list of strings");
  std::vector<std::string> out;
  for (const auto& x : v) {
    if (!x.is_string())
      bad(where + "." + key, "expected a non-empty list of strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

std::vector<Format> formats_field(const json& j, const char* key, const std::string& where) {
  std::vector<Format> out;
  for (const auto& name : strings_field(j, key, where)) {
    const auto f = parse_format(name);
    if (!f || !is_fp8(*f))
      bad(where + "." + key, "'" + name + "' is not an FP8 dtype (e4m3, e5m2)");
    out.push_back(*f);
  }
  return out;
}

int capability_of(const std::string& text, const std::string& where) {
  // "9.0" -> 90
  if (text.size() < 3 || text[text.size() - 2] != '.' ||
      !std::all_of(text.begin(), text.end(),
                   [](char c) { return c == '.' || (c >= '0' && c <= '9'); }))
    bad(where, "capability '" + text + "' is not major.minor");
  return std::stoi(text.substr(0, text.size() - 2)) * 10 + (text.back() - '0');
}

LiveMapRow row_from(const json& r, const std::string& where) {
  LiveMapRow row;
  row.id = string_field(r, "id", where);
  const std::string at = where + " '" + row.id + "'";
  row.evidence = string_field(r, "evidence", at);
  row.why = string_field(r, "why", at);
  const json& when = field(r, "when", at);
  const std::string w = at + ".when";
  row.cc = capability_of(string_field(when, "capability", w), w + ".capability");
  row.cublaslt_major = int_field(when, "cublaslt_major", w);
  row.algo_id = int_field(when, "algo_id", w);
  row.stages_id = int_field(when, "stages_id", w);
  const std::string sk = string_field(when, "splitk", w);
  if (sk != "1" && sk != ">1")
    bad(w + ".splitk", "'" + sk + "' is not \"1\" or \">1\"");
  row.split = sk == ">1";
  row.reduction_schemes = strings_field(when, "reduction_schemes", w);
  for (const auto& s : row.reduction_schemes) {
    if (s != "none" && s != "inplace" && s != "compute_type" && s != "output_type")
      bad(w + ".reduction_schemes",
          "'" + s + "' is not none, inplace, compute_type or output_type");
  }
  row.a = formats_field(when, "a", w);
  row.b = formats_field(when, "b", w);
  const json& fast = field(when, "use_fast_accum", w);
  if (!fast.is_array() || fast.empty())
    bad(w + ".use_fast_accum", "expected a non-empty list of booleans");
  for (const auto& x : fast) {
    if (!x.is_boolean())
      bad(w + ".use_fast_accum", "expected a non-empty list of booleans");
    row.use_fast_accum.push_back(x.get<bool>());
  }
  const json& decide = field(r, "decide", at);
  row.scheme = string_field(decide, "scheme", at + ".decide");
  if (row.split == (row.scheme == "none"))
    bad(at + ".decide.scheme", row.split ? "a split row needs a split scheme, not 'none'"
                                         : "an unsplit row decides scheme 'none'");
  return row;
}

template <class T> bool in(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int major_of(const std::string& version) {
  try {
    return std::stoi(version.substr(0, version.find('.')));
  } catch (const std::exception&) {
    return -1;
  }
}

std::string cc_text(int cc) {
  return "sm_" + std::to_string(cc);
}

// Why `row` does not cover the answer, the first condition that fails; empty when it does.
// `algorithm` is set when the algorithm (ALGO_ID, STAGES_ID) is the row's, so that the reason
// is worth naming.
std::string row_miss(const LiveMapRow& row, const LiveAnswer& a, const SplitKQuery& q,
                     bool& algorithm) {
  algorithm = false;
  if (a.algo_id != row.algo_id || a.stages_id != row.stages_id)
    return "covers ALGO_ID " + std::to_string(row.algo_id) + " / STAGES_ID " +
           std::to_string(row.stages_id) + " only";
  algorithm = true;
  if (a.cc != row.cc)
    return "needs " + cc_text(row.cc);
  if (major_of(a.cublaslt_version) != row.cublaslt_major)
    return "needs cuBLASLt " + std::to_string(row.cublaslt_major) + ".x";
  if (row.split ? a.splitk_num <= 1 : a.splitk_num != 1)
    return row.split ? "covers SPLITK_NUM > 1" : "covers SPLITK_NUM 1";
  if (!in(row.reduction_schemes, a.reduction_scheme)) {
    std::string s;
    for (const auto& x : row.reduction_schemes)
      s += (s.empty() ? "" : ", ") + x;
    return "covers the reduction scheme(s) " + s + " only";
  }
  if (!in(row.a, q.a_dtype) || !in(row.b, q.b_dtype)) {
    std::string s;
    for (std::size_t i = 0; i < row.a.size(); ++i)
      s += (i ? ", " : "") + std::string(format_name(row.a[i]));
    std::string t;
    for (std::size_t i = 0; i < row.b.size(); ++i)
      t += (i ? ", " : "") + std::string(format_name(row.b[i]));
    return "covers mat1 " + s + " x mat2 " + t + " only";
  }
  if (!in(row.use_fast_accum, q.use_fast_accum)) {
    std::string s;
    for (const bool f : row.use_fast_accum)
      s += (s.empty() ? "" : ", ") + std::string(f ? "1" : "0");
    return "covers FAST_ACCUM " + s + " only";
  }
  return {};
}

} // namespace

LiveMap parse_live_map_json(const std::string& json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    bad("JSON", e.what());
  }
  try {
    if (!j.is_object() || j.value("format", std::string()) != kFormat)
      bad("format", std::string("expected \"") + kFormat + "\"");
    LiveMap m;
    const json& rows = field(j, "rows", "map");
    if (!rows.is_array())
      bad("rows", "expected a list");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      m.rows.push_back(row_from(rows[i], "rows[" + std::to_string(i) + "]"));
      for (std::size_t k = 0; k + 1 < m.rows.size(); ++k) {
        if (m.rows[k].id == m.rows.back().id)
          bad("rows[" + std::to_string(i) + "]", "id '" + m.rows.back().id + "' is repeated");
      }
    }
    const json& pairs = field(j, "recorded_pairs", "map");
    if (!pairs.is_array())
      bad("recorded_pairs", "expected a list");
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string w = "recorded_pairs[" + std::to_string(i) + "]";
      m.recorded_pairs.push_back({string_field(pairs[i], "gpu_name", w),
                                  string_field(pairs[i], "cublaslt_version", w),
                                  string_field(pairs[i], "recordings", w)});
    }
    return m;
  } catch (const json::exception& e) {
    bad("JSON", e.what());
  }
}

const LiveMap& shipped_live_map() {
  static const LiveMap m = parse_live_map_json(data::splitk_live_map_json());
  return m;
}

std::string algorithm_text(const LiveAnswer& a) {
  return "ALGO_ID " + std::to_string(a.algo_id) + ", TILE_ID " + std::to_string(a.tile_id) +
         ", STAGES_ID " + std::to_string(a.stages_id) + ", SPLITK_NUM " +
         std::to_string(a.splitk_num) + ", reduction " + a.reduction_scheme;
}

std::optional<SplitDecision> decision_from_answer(const LiveAnswer& a, const SplitKQuery& q,
                                                  const Profile& p, const LiveMap& map,
                                                  std::string& why) {
  const std::string heard = "cuBLASLt " + a.cublaslt_version + " on " + a.device_name + " (" +
                            cc_text(a.cc) + ") answered " + algorithm_text(a);
  const LiveMapRow* hit = nullptr;
  std::string near;
  for (const auto& row : map.rows) {
    bool algorithm = false;
    const std::string miss = row_miss(row, a, q, algorithm);
    if (miss.empty()) {
      hit = &row;
      break;
    }
    if (algorithm)
      near += "; row " + row.id + " (" + row.evidence + ") " + miss;
  }
  if (!hit) {
    why = heard + ": no measured mapping for this answer (" + kMapFile + ")" + near;
    return std::nullopt;
  }
  SplitDecision d;
  d.source = "live-query";
  d.evidence = hit->evidence;
  if (hit->split) {
    if (!in(p.split_schemes, hit->scheme)) {
      why = heard + ": row " + hit->id + " decides scheme '" + hit->scheme + "', which profile '" +
            p.name + "' does not have";
      return std::nullopt;
    }
    if (static_cast<std::int64_t>(a.splitk_num) > q.K) {
      why = heard + ": SPLITK_NUM " + std::to_string(a.splitk_num) +
            " exceeds K = " + std::to_string(q.K);
      return std::nullopt;
    }
    d.S = a.splitk_num;
    d.scheme = hit->scheme;
  }
  for (const auto& pair : map.recorded_pairs) {
    if (pair.gpu_name == a.device_name && pair.cublaslt_version == a.cublaslt_version)
      d.verified = true;
  }
  d.note = heard + " (" + a.library + "); mapped by row " + hit->id + ", evidence " +
           hit->evidence + (d.verified ? "" : "; no GEMM recording of this GPU and cuBLASLt");
  return d;
}

} // namespace mmaemu::kernels
