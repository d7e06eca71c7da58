// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the tier file parser (harness::parse_tier_text, the checks behind
// load_tier_file and `mmaemu tier`) on arbitrary bytes.
//
// The file is named after the input's "name" when it is a plain string (so that the seeds,
// tiers/*.json, pass the name-equals-stem rule and the fuzzer explores the keys after it),
// else fuzz/T9.json.
//
// parse_tier_text documents that it throws TierFileError and nothing else (std::bad_alloc
// aside); anything else escaping, a crash or a sanitizer report is a finding. So is an
// accepted tier whose name is unsafe in a file name or whose kind is unknown, or an error
// message of more than one line.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "mmaemu/harness/tier_spec.hpp"

namespace {

std::filesystem::path file_for(std::string_view text) {
  std::string name = "T9";
  try {
    const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_object() && j.contains("name") && j["name"].is_string()) {
      const auto& n = j["name"].get_ref<const std::string&>();
      if (!n.empty() && n.size() < 64 && n.find('/') == std::string::npos &&
          n.find('\0') == std::string::npos && n != "." && n != "..")
        name = n;
    }
  } catch (...) {
    // Only a hint for the file name; the parser under test sees the bytes either way.
  }
  return std::filesystem::path("fuzz") / (name + ".json");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const mmaemu::harness::TierSpec t = mmaemu::harness::parse_tier_text(text, file_for(text));
    const auto& kinds = mmaemu::harness::tier_kinds();
    if (std::find(kinds.begin(), kinds.end(), t.kind) == kinds.end())
      __builtin_trap();
    if (t.name.empty() || t.name.find('/') != std::string::npos ||
        t.name.find("..") != std::string::npos)
      __builtin_trap();
    for (char c : t.name) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
        __builtin_trap();
    }
    if (!(t.budget_seconds >= 0))
      __builtin_trap();
  } catch (const mmaemu::harness::TierFileError& e) {
    const std::string_view m = e.what();
    if (m.find('\n') != std::string_view::npos || m.size() > 4096)
      __builtin_trap(); // one bounded line
  } catch (const std::bad_alloc&) {
    // Documented: out of memory is the only other exception.
  }
  return 0;
}
