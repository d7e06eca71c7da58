// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Warnings as a process-wide mechanism: a sink that receives every warning, and
// once-per-key emission rules.

#include <functional>
#include <string>

namespace mmaemu {

// The seed's warning classes.
enum class WarningClass {
  experimental_preset,  // ExperimentalPresetWarning
  unverified_split,     // UnverifiedSplitWarning
  unvalidated_envelope, // UnvalidatedEnvelopeWarning
  backend_fallback,     // BackendFallbackWarning
};

const char* warning_class_name(WarningClass c);

struct Warning {
  WarningClass cls;
  std::string key; // what "once" is counted by
  std::string message;
};

using WarningSink = std::function<void(const Warning&)>;

// Replaces the process-wide sink and returns the previous one. The default sink prints
// "<ClassName>: <message>" to stderr.
WarningSink set_warning_sink(WarningSink sink);

// Emits a warning to the sink unless one with the same class and key was emitted already.
// Returns whether it was emitted.
bool warn_once(WarningClass cls, const std::string& key, const std::string& message);

// Emits a warning to the sink unconditionally.
void warn_always(WarningClass cls, const std::string& key, const std::string& message);

// Forgets which keys were emitted (tests).
void reset_warnings_once();

} // namespace mmaemu
