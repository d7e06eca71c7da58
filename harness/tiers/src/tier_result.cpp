// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/harness/tier_result.hpp"

#include <cstdio>

#include "mmaemu/reports/markup_escape.hpp"

namespace mmaemu::harness {

namespace {

constexpr Outcome kAll[] = {Outcome::pass, Outcome::fail, Outcome::error, Outcome::unsupported,
                            Outcome::xfail};

std::string xml_escape(const std::string& s) {
  return reports::markup_escape(s);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

} // namespace

std::size_t TierResult::case_count() const {
  std::size_t n = 0;
  for (auto t : totals)
    n += t;
  return n;
}

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

void settle_verdict(TierResult& r, const std::string& nothing_ran_reason) {
  if ((r.verdict == Outcome::unsupported || r.verdict == Outcome::error) && !r.reason.empty()) {
    return;
  }
  const std::size_t ran = r.total(Outcome::pass) + r.total(Outcome::fail) +
                          r.total(Outcome::error) + r.total(Outcome::xfail);
  std::size_t failed_checks = 0;
  for (const auto& c : r.checks)
    failed_checks += c.ok ? 0 : 1;
  if (r.total(Outcome::error) > 0) {
    r.verdict = Outcome::error;
    if (r.reason.empty()) {
      r.reason = std::to_string(r.total(Outcome::error)) + " case(s) could not run";
      for (const auto& c : r.cases) {
        if (c.outcome == Outcome::error) {
          r.reason += "; first: " + c.id + (c.message.empty() ? "" : ": " + c.message);
          break;
        }
      }
    }
  } else if (r.total(Outcome::fail) > 0 || failed_checks > 0) {
    r.verdict = Outcome::fail;
    if (r.reason.empty()) {
      std::string first;
      for (const auto& c : r.checks) {
        if (!c.ok) {
          first = c.id + (c.message.empty() ? "" : ": " + c.message);
          break;
        }
      }
      for (const auto& c : r.cases) {
        if (!first.empty())
          break;
        if (c.outcome == Outcome::fail)
          first = c.id + (c.message.empty() ? "" : ": " + c.message);
      }
      if (r.total(Outcome::fail) > 0)
        r.reason = std::to_string(r.total(Outcome::fail)) + " case(s) failed";
      if (failed_checks > 0) {
        r.reason += (r.reason.empty() ? "" : ", ") + std::to_string(failed_checks) +
                    " check(s) did not hold";
      }
      r.reason += "; first: " + first;
    }
  } else if (ran == 0) {
    r.verdict = Outcome::unsupported;
    if (r.reason.empty())
      r.reason = nothing_ran_reason;
  } else {
    r.verdict = Outcome::pass;
    r.reason.clear();
  }
  // Keep the reason to one line.
  for (char& c : r.reason) {
    if (c == '\n' || c == '\r')
      c = ' ';
  }
  if (r.reason.size() > 400)
    r.reason = r.reason.substr(0, 397) + "...";
}

int tier_exit_status(Outcome verdict) {
  switch (verdict) {
  case Outcome::pass:
    return 0;
  case Outcome::unsupported:
    return 4;
  default:
    return 1;
  }
}

nlohmann::json totals_json(const TierResult& r) {
  nlohmann::json t;
  for (auto o : kAll)
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
    // A set none of whose cases was judged is skipped, not passed.
    const Outcome o = errs     ? Outcome::error
                      : failed ? Outcome::fail
                      : passed ? Outcome::pass
                               : Outcome::unsupported;
    add_case(
        r.tier + "." + s.value("recording", "?"), s.value("set", "?"), s.value("seconds", 0.0), o,
        std::to_string(failed) + " of " + std::to_string(cases) + " cases differ, " +
            std::to_string(errs) + " could not run, " + std::to_string(na) + " not applicable");
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
