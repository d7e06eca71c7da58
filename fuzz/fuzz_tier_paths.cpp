// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the tier file's path fields (harness::tier_path_problem, the rule behind
// run.result, run.catalogue, run.consumer and needs.files) on arbitrary bytes.
//
// The first byte picks the field's root (even: the tier's tree, odd: {out} or the tree); the
// rest is the value. A finding: an accepted value that is absolute, holds a control byte or a
// ".." component, or leads outside its root when joined lexically; an error message of more
// than one line; and, with the value as the run.result of a command tier, anything but
// TierFileError escaping parse_tier_text or a tier it accepts whose run.result the rule
// refuses. No filesystem is touched (resolve_tier_path's symlink check is tested in
// harness/tiers/tests/test_tier_paths.cpp).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "mmaemu/harness/tier_paths.hpp"
#include "mmaemu/harness/tier_spec.hpp"

namespace {

namespace fs = std::filesystem;
using mmaemu::harness::TierPathRoot;

bool inside(const fs::path& joined, const fs::path& root) {
  const fs::path n = joined.lexically_normal();
  auto ni = n.begin();
  for (const auto& part : root) {
    if (ni == n.end() || *ni != part)
      return false;
    ++ni;
  }
  return true;
}

void check_accepted(std::string_view v, TierPathRoot root) {
  if (v.empty() || v.front() == '/' || v.size() > mmaemu::harness::kMaxTierPathBytes)
    __builtin_trap();
  for (char c : v) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      __builtin_trap();
  }
  const fs::path tree = "/tree", out = "/out";
  const bool in_out = root == TierPathRoot::out_or_tree && v.substr(0, 6) == "{out}/";
  const fs::path base = in_out ? out : tree;
  const fs::path joined = base / std::string(in_out ? v.substr(6) : v);
  for (const auto& part : joined) {
    if (part == "..")
      __builtin_trap();
  }
  if (!inside(joined, base))
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const TierPathRoot root = (data[0] & 1) ? TierPathRoot::out_or_tree : TierPathRoot::tree;
  const std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto why = mmaemu::harness::tier_path_problem(value, root);
  if (!why) {
    check_accepted(value, root);
  } else if (why->find('\n') != std::string::npos || why->size() > 256) {
    __builtin_trap();
  }
  if (root != TierPathRoot::out_or_tree)
    return 0;
  // The same value as run.result of a tier file.
  nlohmann::json t = {{"schema", "mmaemu-tier/1"},
                      {"name", "T9"},
                      {"title", "t"},
                      {"purpose", "p"},
                      {"when", "w"},
                      {"budget", {{"seconds", 1}}},
                      {"run", {{"kind", "command"}, {"argv", {"true"}}}},
                      {"needs", nlohmann::json::object()}};
  t["run"]["result"] = value;
  const std::string text = t.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  try {
    const auto spec = mmaemu::harness::parse_tier_text(text, "fuzz/T9.json");
    const std::string r = spec.run.value("result", std::string());
    if (mmaemu::harness::tier_path_problem(r, TierPathRoot::out_or_tree))
      __builtin_trap();
  } catch (const mmaemu::harness::TierFileError& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos)
      __builtin_trap();
  } catch (const std::bad_alloc&) {
  }
  return 0;
}
