// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the one strict JSON reader (support::parse_json_input and
// JsonObjectReader, behind tier files, gemm_call descriptions, the mutant catalogue, the fatbin
// manifest and verdict files) on arbitrary bytes, then every typed getter on each member of
// an accepted object.
//
// Documented exceptions: JsonInputError, std::bad_alloc; anything else escaping, a crash or a
// sanitizer report is a finding. So is a message of more than one line, over 4096 bytes, with
// a byte outside printable ASCII or not starting with the source; an accepted document that
// nlohmann alone would refuse or read otherwise, or that nests deeper than the limit; a
// refused document that nlohmann reads within the limits, unless a key appears twice; and an
// integer getter's value outside its range.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmaemu/support/json_input.hpp"

namespace {

using mmaemu::support::JsonInputError;
using nlohmann::json;

constexpr std::string_view kSource = "fuzz/input.json";
constexpr mmaemu::support::JsonLimits kLimits{1 << 16, 8};

// One bounded line of printable ASCII (what support::printable guarantees for echoed text).
void check_message(const JsonInputError& e) {
  const std::string_view m = e.what();
  if (m.size() > 4096 || m.rfind(kSource, 0) != 0)
    __builtin_trap();
  for (const char c : m) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7E)
      __builtin_trap();
  }
}

// The most arrays and objects nested in each other, counted here without recursion: `1` is 0,
// `[]` is 1.
std::size_t depth_of(const json& root) {
  std::size_t deepest = 0;
  std::vector<std::pair<const json*, std::size_t>> todo{{&root, 0}};
  while (!todo.empty()) {
    const auto [v, d] = todo.back();
    todo.pop_back();
    if (!v->is_structured())
      continue;
    deepest = std::max(deepest, d + 1);
    for (const json& child : *v)
      todo.push_back({&child, d + 1});
  }
  return deepest;
}

template <class F> void expect_only_input_errors(F f) {
  try {
    f();
  } catch (const JsonInputError& e) {
    check_message(e);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const json plain = json::parse(text.begin(), text.end(), nullptr, false);
  json doc;
  try {
    doc = mmaemu::support::parse_json_input(text, kSource, kLimits);
  } catch (const JsonInputError& e) {
    check_message(e);
    // nlohmann reads it within the limits: the only other reason to refuse is a duplicate key.
    if (!plain.is_discarded() && text.size() <= kLimits.max_bytes &&
        depth_of(plain) <= kLimits.max_depth &&
        std::string_view(e.what()).find("appears twice") == std::string_view::npos)
      __builtin_trap();
    return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  if (plain.is_discarded() || plain != doc || depth_of(doc) > kLimits.max_depth)
    __builtin_trap();
  if (!doc.is_object())
    return 0;
  mmaemu::support::JsonObjectReader r(doc, mmaemu::support::JsonLocation(std::string(kSource)),
                                      "fuzz/1");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string key = it.key(); // a named copy: clang 14 cannot capture a binding
    expect_only_input_errors([&] { r.string(key); });
    expect_only_input_errors([&] { r.optional_string(key, true); });
    expect_only_input_errors([&] { r.boolean(key, false); });
    expect_only_input_errors([&] { r.number(key, -1e6, 1e6); });
    expect_only_input_errors([&] {
      const std::int64_t i = r.integer(key, -5, 1000);
      if (i < -5 || i > 1000)
        __builtin_trap();
    });
    expect_only_input_errors([&] { r.strings(key); });
    expect_only_input_errors([&] {
      const json& o = r.object(key);
      mmaemu::support::JsonObjectReader inner(o, r.at(key), "fuzz/1 inner");
      inner.optional_integer("n", 0, 1);
      inner.no_other_keys();
    });
  }
  expect_only_input_errors([&] { r.no_other_keys(); });
  return 0;
}
