// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The one outcome vocabulary of mmaemu (docs/testing.md, "Outcomes"), and the one rule that
// turns counted outcomes into a verdict. Every judge uses it: the replay library (`mmaemu
// replay`, T1, T2, T3), the tier engine and its logs, `mmaemu selftest`, `mmaemu bench
// kernels`, the shard merge and the release report. Nothing else defines outcome names,
// letters, an order of severity or a verdict rule.
//
//   PASS         the check ran and held (bits equal, the expected error class raised);
//   FAIL         the check ran and did not hold (bits differ, another error class);
//   ERROR        the check could not run (a corrupt input, a driver error, a crash);
//   UNSUPPORTED  the check needs a device, data or feature that is absent, or what it would
//                test is no evidence here: never counted as PASS;
//   XFAIL        a documented disagreement: the check ran and failed as its ExpectedFailure
//                (reason and evidence) says it does;
//   XPASS        a check marked XFAIL that held: reported, and it fails the run (the
//                documentation of the disagreement is wrong, or the disagreement is gone).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mmaemu::outcome {

enum class Outcome { pass, fail, error, unsupported, xfail, xpass };

inline constexpr std::size_t kOutcomeCount = 6;
// Every outcome, in the order of the enum (the order of totals in logs).
inline constexpr std::array<Outcome, kOutcomeCount> kAllOutcomes = {
    Outcome::pass,        Outcome::fail,  Outcome::error,
    Outcome::unsupported, Outcome::xfail, Outcome::xpass};

// "PASS", "FAIL", "ERROR", "UNSUPPORTED", "XFAIL", "XPASS".
const char* outcome_name(Outcome o);
// The exact upper-case name; nothing for any other text.
std::optional<Outcome> parse_outcome(std::string_view name);

// One letter per case in logs (`sets[].outcomes`): P, F, E, U, X (XFAIL), Y (XPASS).
char outcome_letter(Outcome o);
std::optional<Outcome> outcome_of_letter(char letter);

// How bad an outcome is, for the worst of several (a gemm_call call of several outputs, a
// merge of shard verdicts): PASS < XFAIL < UNSUPPORTED < XPASS < FAIL < ERROR.
int severity(Outcome o);
Outcome worse(Outcome a, Outcome b);

// Whether the check ran (everything but UNSUPPORTED), and whether the outcome fails a run
// (FAIL, ERROR, XPASS).
bool ran(Outcome o);
bool fails_run(Outcome o);

// A documented disagreement: why the check is expected to fail, and the evidence that it does
// on the hardware (a recording, a measurement, an issue). Both are required.
struct ExpectedFailure {
  std::string reason;
  std::string evidence;
};

// The outcome of a check marked with an ExpectedFailure, from what the check gave on its own:
// FAIL becomes XFAIL, PASS becomes XPASS; ERROR and UNSUPPORTED stay (a check that could not
// run has shown nothing either way).
Outcome expected_failure_outcome(Outcome raw);

// Counts per outcome.
struct Tally {
  std::array<std::size_t, kOutcomeCount> counts{};

  void add(Outcome o, std::size_t n = 1) { counts[static_cast<std::size_t>(o)] += n; }
  std::size_t operator[](Outcome o) const { return counts[static_cast<std::size_t>(o)]; }
  std::size_t total() const;
  // Checks that ran (every outcome but UNSUPPORTED).
  std::size_t ran() const;
  Tally& operator+=(const Tally& other);
};

// The one verdict rule: ERROR if any check could not run; else FAIL if any failed, passed
// unexpectedly (XPASS) or a bookkeeping check of the run did not hold (`failed_checks`);
// else UNSUPPORTED if nothing ran (a run that tested nothing never passes); else PASS (XFAILs
// included: a documented disagreement that is still there).
Outcome verdict_of(const Tally& t, std::size_t failed_checks = 0);

// The first case of each bad kind, for the verdict's one-line reason.
struct VerdictNotes {
  std::string first_error;        // "<id>: <message>"
  std::string first_failure;      // idem, a FAIL
  std::string first_xpass;        // idem, an XPASS
  std::string first_failed_check; // idem, a bookkeeping check that did not hold
  std::size_t failed_checks = 0;
  std::string nothing_ran; // why nothing ran, for an UNSUPPORTED verdict
};

struct Verdict {
  Outcome outcome = Outcome::unsupported;
  std::string reason; // one line, at most 400 characters; empty for PASS
};

// verdict_of with its reason: "N case(s) could not run; first: ...", "N case(s) failed, N
// passed unexpectedly (XPASS), N check(s) did not hold; first: ...", or notes.nothing_ran.
Verdict judge(const Tally& t, const VerdictNotes& notes);

// The exit status of a command that reports one verdict: 0 PASS, 4 UNSUPPORTED (nothing could
// be tested), 1 otherwise.
int exit_status_of(Outcome verdict);

} // namespace mmaemu::outcome
