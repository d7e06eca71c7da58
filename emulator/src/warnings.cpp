// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/warnings.hpp"

#include <iostream>
#include <mutex>
#include <set>
#include <utility>

namespace mmaemu {

namespace {

struct State {
  std::mutex mu;
  WarningSink sink;
  std::set<std::pair<int, std::string>> seen;
};

State& state() {
  static State s;
  return s;
}

void default_sink(const Warning& w) {
  std::cerr << warning_class_name(w.cls) << ": " << w.message << '\n';
}

void deliver(const Warning& w) {
  WarningSink sink;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    sink = state().sink;
  }
  if (sink) {
    sink(w);
  } else {
    default_sink(w);
  }
}

} // namespace

const char* warning_class_name(WarningClass c) {
  switch (c) {
  case WarningClass::experimental_preset:
    return "ExperimentalPresetWarning";
  case WarningClass::unverified_split:
    return "UnverifiedSplitWarning";
  case WarningClass::unvalidated_envelope:
    return "UnvalidatedEnvelopeWarning";
  case WarningClass::backend_fallback:
    return "BackendFallbackWarning";
  }
  return "Warning";
}

WarningSink set_warning_sink(WarningSink sink) {
  std::lock_guard<std::mutex> lock(state().mu);
  std::swap(state().sink, sink);
  return sink;
}

bool warn_once(WarningClass cls, const std::string& key, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(state().mu);
    if (!state().seen.emplace(static_cast<int>(cls), key).second)
      return false;
  }
  deliver(Warning{cls, key, message});
  return true;
}

void warn_always(WarningClass cls, const std::string& key, const std::string& message) {
  deliver(Warning{cls, key, message});
}

void reset_warnings_once() {
  std::lock_guard<std::mutex> lock(state().mu);
  state().seen.clear();
}

} // namespace mmaemu
