// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/verdict_cache.hpp"

#include <nlohmann/json.hpp>

#include "lower_hex.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/cache_dir.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/json_input.hpp"

#ifndef MMAEMU_KERNELS_VERSION
#define MMAEMU_KERNELS_VERSION "0.0.0"
#endif

namespace mmaemu::kernels {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A verdict nests one level; deeper input is refused while it is parsed.
constexpr std::size_t kVerdictJsonDepth = 16;

std::optional<Verdict> parse_verdict(std::string_view text, const std::string& key) {
  std::optional<json> j;
  try {
    // Its size is bounded once, where lookup reads the file.
    j = support::parse_json_input(text, "verdict", {text.size(), kVerdictJsonDepth});
  } catch (const support::JsonInputError&) {
    return std::nullopt; // damaged: as if absent, so the gate runs again
  }
  if (!j->is_object())
    return std::nullopt;
  const auto format = j->find("format");
  const auto k = j->find("key");
  const auto passed = j->find("passed");
  const auto detail_it = j->find("detail");
  if (format == j->end() || k == j->end() || passed == j->end() || detail_it == j->end())
    return std::nullopt;
  if (!format->is_string() || *format != kVerdictFormat || !k->is_string() || *k != key ||
      !passed->is_boolean() || !detail_it->is_string())
    return std::nullopt;
  return Verdict{passed->get<bool>(), detail_it->get<std::string>()};
}

} // namespace

const std::string& mmaemu_version() {
  static const std::string v = MMAEMU_KERNELS_VERSION;
  return v;
}

std::string verdict_key(const VerdictKeyFields& f) {
  // nlohmann's object keeps its keys sorted; dump() without indent has no spaces.
  json j = json::object();
  j["cc"] = f.cc;
  j["driver_version"] = f.driver_version;
  j["gate"] = f.gate;
  j["gate_version"] = f.gate_version;
  j["gpu_uuid"] = f.gpu_uuid;
  j["image_sha256"] = f.image_sha256;
  j["mmaemu_version"] = f.mmaemu_version.empty() ? mmaemu_version() : f.mmaemu_version;
  return support::sha256_hex(j.dump(-1, ' ', true, json::error_handler_t::replace));
}

VerdictCache::VerdictCache(std::optional<fs::path> dir) : dir_(std::move(dir)) {}

std::optional<fs::path> VerdictCache::folder(std::string* why) const {
  if (dir_)
    return dir_;
  try {
    return cache_subdir("verdicts");
  } catch (const std::exception& e) {
    if (why)
      *why = e.what();
    return std::nullopt;
  }
}

std::optional<Verdict> VerdictCache::lookup(const std::string& key) {
  if (!detail::is_lower_hex(key, 64))
    return std::nullopt;
  {
    std::lock_guard lock(mu_);
    if (auto it = memory_.find(key); it != memory_.end())
      return it->second;
  }
  const auto dir = folder(nullptr);
  if (!dir)
    return std::nullopt;
  std::string text;
  try {
    text = support::read_input_file(*dir / (key + ".json"), kMaxVerdictBytes, "verdict");
  } catch (const std::exception&) {
    return std::nullopt; // missing, not a regular file, too large: as if absent
  }
  auto v = parse_verdict(text, key);
  if (v) {
    std::lock_guard lock(mu_);
    memory_[key] = *v;
  }
  return v;
}

bool VerdictCache::store(const std::string& key, const Verdict& v) {
  if (!detail::is_lower_hex(key, 64))
    throw ValueError("verdict key '" + key.substr(0, 80) + "' is not 64 lower-case hex digits");
  {
    std::lock_guard lock(mu_);
    memory_[key] = v;
  }
  std::string why;
  const auto dir = folder(&why);
  if (dir) {
    json j = json::object();
    j["format"] = kVerdictFormat;
    j["key"] = key;
    j["passed"] = v.passed;
    j["detail"] = v.detail;
    try {
      support::write_file_atomic(*dir / (key + ".json"),
                                 j.dump(2, ' ', true, json::error_handler_t::replace) + "\n", 0600);
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  std::lock_guard lock(mu_);
  last_error_ = why;
  return why.empty();
}

void VerdictCache::forget_memory() {
  std::lock_guard lock(mu_);
  memory_.clear();
}

std::string VerdictCache::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

VerdictCache& verdict_cache() {
  static VerdictCache* c = new VerdictCache;
  return *c;
}

} // namespace mmaemu::kernels
