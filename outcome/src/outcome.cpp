// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/outcome/outcome.hpp"

namespace mmaemu::outcome {

namespace {

struct Entry {
  Outcome outcome;
  const char* name;
  char letter;
  int severity;
};

// The vocabulary in one table: name, log letter, severity.
constexpr Entry kTable[kOutcomeCount] = {
    {Outcome::pass, "PASS", 'P', 0},   {Outcome::fail, "FAIL", 'F', 4},
    {Outcome::error, "ERROR", 'E', 5}, {Outcome::unsupported, "UNSUPPORTED", 'U', 2},
    {Outcome::xfail, "XFAIL", 'X', 1}, {Outcome::xpass, "XPASS", 'Y', 3},
};

const Entry& entry(Outcome o) {
  return kTable[static_cast<std::size_t>(o)];
}

} // namespace

const char* outcome_name(Outcome o) {
  return entry(o).name;
}

std::optional<Outcome> parse_outcome(std::string_view name) {
  for (const auto& e : kTable) {
    if (name == e.name)
      return e.outcome;
  }
  return std::nullopt;
}

char outcome_letter(Outcome o) {
  return entry(o).letter;
}

std::optional<Outcome> outcome_of_letter(char letter) {
  for (const auto& e : kTable) {
    if (letter == e.letter)
      return e.outcome;
  }
  return std::nullopt;
}

int severity(Outcome o) {
  return entry(o).severity;
}

Outcome worse(Outcome a, Outcome b) {
  return severity(b) > severity(a) ? b : a;
}

bool ran(Outcome o) {
  return o != Outcome::unsupported;
}

bool fails_run(Outcome o) {
  return o == Outcome::fail || o == Outcome::error || o == Outcome::xpass;
}

Outcome expected_failure_outcome(Outcome raw) {
  switch (raw) {
  case Outcome::fail:
    return Outcome::xfail;
  case Outcome::pass:
    return Outcome::xpass;
  default:
    return raw;
  }
}

std::size_t Tally::total() const {
  std::size_t n = 0;
  for (auto c : counts)
    n += c;
  return n;
}

std::size_t Tally::ran() const {
  return total() - (*this)[Outcome::unsupported];
}

Tally& Tally::operator+=(const Tally& other) {
  for (std::size_t i = 0; i < kOutcomeCount; ++i)
    counts[i] += other.counts[i];
  return *this;
}

Outcome verdict_of(const Tally& t, std::size_t failed_checks) {
  if (t[Outcome::error] > 0)
    return Outcome::error;
  if (t[Outcome::fail] > 0 || t[Outcome::xpass] > 0 || failed_checks > 0)
    return Outcome::fail;
  if (t.ran() == 0)
    return Outcome::unsupported;
  return Outcome::pass;
}

Verdict judge(const Tally& t, const VerdictNotes& notes) {
  Verdict v;
  v.outcome = verdict_of(t, notes.failed_checks);
  auto first = [](const std::string& what) {
    return what.empty() ? std::string() : "; first: " + what;
  };
  switch (v.outcome) {
  case Outcome::error:
    v.reason =
        std::to_string(t[Outcome::error]) + " case(s) could not run" + first(notes.first_error);
    break;
  case Outcome::fail: {
    auto part = [&](std::size_t n, const std::string& text) {
      if (n > 0)
        v.reason += (v.reason.empty() ? "" : ", ") + std::to_string(n) + text;
    };
    part(t[Outcome::fail], " case(s) failed");
    part(t[Outcome::xpass], " case(s) passed unexpectedly (XPASS)");
    part(notes.failed_checks, " check(s) did not hold");
    // A failed check first (it is what a reader cannot see among the cases), then the cases.
    v.reason += first(!notes.first_failed_check.empty() ? notes.first_failed_check
                      : !notes.first_failure.empty()    ? notes.first_failure
                                                        : notes.first_xpass);
    break;
  }
  case Outcome::unsupported:
    v.reason = notes.nothing_ran;
    break;
  default:
    break;
  }
  // One line, bounded.
  for (char& c : v.reason) {
    if (c == '\n' || c == '\r')
      c = ' ';
  }
  if (v.reason.size() > 400)
    v.reason = v.reason.substr(0, 397) + "...";
  return v;
}

int exit_status_of(Outcome verdict) {
  switch (verdict) {
  case Outcome::pass:
    return 0;
  case Outcome::unsupported:
    return 4;
  default:
    return 1;
  }
}

} // namespace mmaemu::outcome
