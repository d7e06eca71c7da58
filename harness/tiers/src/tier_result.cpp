// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_result.hpp"

#include <cstdio>

#include "mmaemu/reports/escape_xml.hpp"

namespace mmaemu::harness {

namespace {

std::string xml_escape(const std::string& s) {
  return reports::xml_escape(s);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

} // namespace

void TierResult::add(TierCase c) {
  count(c.outcome);
  cases.push_back(std::move(c));
}

void TierResult::check(TierCheck c) {
  if (!details.is_object())
    details = nlohmann::json::object();
  details["checks"].push_back({{"id", c.id}, {"ok", c.ok}, {"message", c.message}});
  checks.push_back(std::move(c));
}

outcome::VerdictNotes verdict_notes(const TierResult& r, const std::string& nothing_ran_reason) {
  outcome::VerdictNotes notes;
  notes.nothing_ran = nothing_ran_reason;
  auto named = [](const std::string& id, const std::string& message) {
    return id + (message.empty() ? "" : ": " + message);
  };
  for (const auto& c : r.checks) {
    if (!c.ok && notes.failed_checks++ == 0)
      notes.first_failed_check = named(c.id, c.message);
  }
  for (const auto& c : r.cases) {
    std::string* first = c.outcome == Outcome::error   ? &notes.first_error
                         : c.outcome == Outcome::fail  ? &notes.first_failure
                         : c.outcome == Outcome::xpass ? &notes.first_xpass
                                                       : nullptr;
    if (first && first->empty())
      *first = named(c.id, c.message);
  }
  return notes;
}

void judge_tier(TierResult& r, const std::string& nothing_ran_reason) {
  if ((r.verdict == Outcome::unsupported || r.verdict == Outcome::error) && !r.reason.empty())
    return;
  const outcome::Verdict v = outcome::judge(r.totals, verdict_notes(r, nothing_ran_reason));
  r.verdict = v.outcome;
  r.reason = v.reason;
}

nlohmann::json totals_json(const TierResult& r) {
  nlohmann::json t;
  for (auto o : outcome::kAllOutcomes)
    t[outcome_name(o)] = r.total(o);
  t["cases"] = r.case_count();
  return t;
}

nlohmann::json case_json(const TierCase& c) {
  nlohmann::json j = {{"id", c.id}, {"outcome", outcome_name(c.outcome)}, {"seconds", c.seconds}};
  if (!c.message.empty())
    j["message"] = c.message;
  return j;
}

std::string junit_xml(const TierResult& r) {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string body;
  auto add_case = [&](const std::string& classname, const std::string& name, double secs, Outcome o,
                      const std::string& message) {
    ++tests;
    body += "    <testcase classname=\"" + xml_escape(classname) + "\" name=\"" + xml_escape(name) +
            "\" time=\"" + seconds_text(secs) + "\"";
    switch (o) {
    case Outcome::pass:
      body += "/>\n";
      return;
    case Outcome::fail:
      ++failures;
      body += "><failure message=\"" + xml_escape(message) + "\"/></testcase>\n";
      return;
    case Outcome::error:
      ++errors;
      body += "><error message=\"" + xml_escape(message) + "\"/></testcase>\n";
      return;
    case Outcome::unsupported:
      ++skipped;
      body += "><skipped message=\"UNSUPPORTED: " + xml_escape(message) + "\"/></testcase>\n";
      return;
    case Outcome::xfail:
      ++skipped;
      body += "><skipped message=\"XFAIL: " + xml_escape(message) + "\"/></testcase>\n";
      return;
    case Outcome::xpass:
      // An expected failure that passed fails the run, so CI shows it.
      ++failures;
      body += "><failure message=\"XPASS: " + xml_escape(message) + "\"/></testcase>\n";
      return;
    }
  };
  bool checks_hold = true;
  for (const auto& c : r.checks)
    checks_hold = checks_hold && c.ok;
  if (r.case_count() == 0 && checks_hold) {
    add_case(r.tier, r.tier, r.seconds, r.verdict, r.reason);
  }
  for (const auto& s : r.sets) {
    const std::size_t passed = s.value("passed", std::size_t{0});
    const std::size_t failed = s.value("failed", std::size_t{0});
    const std::size_t errs = s.value("errors", std::size_t{0});
    const std::size_t na = s.value("not_applicable", std::size_t{0});
    const std::size_t cases = s.value("cases", std::size_t{0});
    // The set's verdict by the one rule: a set none of whose cases was judged is skipped, not
    // passed.
    outcome::Tally units;
    units.add(Outcome::pass, passed);
    units.add(Outcome::fail, failed);
    units.add(Outcome::error, errs);
    units.add(Outcome::unsupported, na);
    units.add(Outcome::xfail, s.value("xfailed", std::size_t{0}));
    units.add(Outcome::xpass, s.value("xpassed", std::size_t{0}));
    const Outcome o = outcome::verdict_of(units);
    std::string message = std::to_string(failed) + " of " + std::to_string(cases) +
                          " cases differ, " + std::to_string(errs) + " could not run, " +
                          std::to_string(na) + " not applicable";
    if (units[Outcome::xfail] > 0)
      message += ", " + std::to_string(units[Outcome::xfail]) + " XFAIL";
    if (units[Outcome::xpass] > 0)
      message += ", " + std::to_string(units[Outcome::xpass]) + " XPASS (expected to fail)";
    add_case(r.tier + "." + s.value("recording", "?"), s.value("set", "?"), s.value("seconds", 0.0),
             o, message);
  }
  for (const auto& c : r.cases) {
    if (c.in_set)
      continue; // inside its set's testcase
    add_case(r.tier, c.id, c.seconds, c.outcome, c.message);
  }
  // A check that does not hold fails the tier, so CI shows it; one that holds is no test.
  for (const auto& c : r.checks) {
    if (!c.ok)
      add_case(r.tier + ".checks", c.id, 0, Outcome::fail, c.message);
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  x += "  <testsuite name=\"" + xml_escape(r.tier) + "\" tests=\"" + std::to_string(tests) +
       "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
       "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + seconds_text(r.seconds) +
       "\" timestamp=\"" + xml_escape(r.started_utc) + "\">\n";
  x += body;
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

} // namespace mmaemu::harness
