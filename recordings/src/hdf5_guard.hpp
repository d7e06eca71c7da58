// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Running a parse that may crash inside a library (libhdf5 1.10 on corrupt files) in a forked
// child process first, so that the calling process never crashes: private to the recordings
// library (tests include it to check the guard itself).

#include <cstdint>
#include <functional>
#include <string>

namespace mmaemu::recordings::detail {

struct GuardOutcome {
  enum Kind {
    ok,          // the child ran `parse` to its end
    clean_error, // `parse` threw RecordingError in the child: `message` is its what()
    failed,      // crash, signal, time-out, memory limit, other exception: `message` says
  };
  Kind kind = failed;
  std::string message;
  std::string result; // ok: what `parse` returned
};

// Forks; the child resets the crash signals to their default action, disables core dumps,
// dies with its parent, (in builds without sanitizers) limits its address space to what it
// has plus `memory_budget` bytes, runs `parse`, sends its result (at most `max_result`
// bytes) or its error through a pipe and _exit()s. The parent waits at most `timeout_s`
// seconds (then kills the child). `name` (already printable) starts every message. Never
// throws for what happens in the child; throws RecordingError if no child can be started.
GuardOutcome run_in_child(const std::string& name, const std::function<std::string()>& parse,
                          std::uint64_t memory_budget, double timeout_s,
                          std::uint64_t max_result = 0);

} // namespace mmaemu::recordings::detail
