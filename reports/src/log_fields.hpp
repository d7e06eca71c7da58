// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Reading a field of a validation log that may be damaged or crafted (private to the library).
// nlohmann's value(key, default) throws when the field exists with another type ("tier": 5, a
// "host" that is a string): a report over a folder of logs must then show the fallback for that
// log, never stop. Each function takes any JSON value (an object or not) and never throws.

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace mmaemu::reports::detail {

// j[key] if j is an object holding key, else null.
inline const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  if (!j.is_object())
    return none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

// j[key] if it is an object, else an empty object.
inline const nlohmann::json& object_field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  const auto& m = member(j, key);
  return m.is_object() ? m : empty;
}

// j[key] if it is an array, else an empty array.
inline const nlohmann::json& array_field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  const auto& m = member(j, key);
  return m.is_array() ? m : empty;
}

// j[key] if it is a string, else `fallback`.
inline std::string text_field(const nlohmann::json& j, const char* key,
                              const std::string& fallback) {
  const auto& m = member(j, key);
  return m.is_string() ? m.get<std::string>() : fallback;
}

// j[key] if it is an integer that fits a long long, else `fallback`.
inline long long integer_field(const nlohmann::json& j, const char* key, long long fallback) {
  const auto& m = member(j, key);
  if (m.is_number_unsigned())
    return m.get<unsigned long long>() <= 0x7FFFFFFFFFFFFFFFull ? m.get<long long>() : fallback;
  return m.is_number_integer() ? m.get<long long>() : fallback;
}

// j[key] if it is a number, else `fallback`.
inline double number_field(const nlohmann::json& j, const char* key, double fallback) {
  const auto& m = member(j, key);
  return m.is_number() ? m.get<double>() : fallback;
}

// a + b, saturated at the ends of long long: a crafted log's counts never overflow a sum.
inline long long saturating_add(long long a, long long b) {
  long long r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<long long>::max() : std::numeric_limits<long long>::min();
  return r;
}

} // namespace mmaemu::reports::detail
