// SPDX-License-Identifier: BSD-2-Clause
// The outcome vocabulary and the verdict rule, against what docs/testing.md states: the six
// names and their log letters, nothing that ran nothing is a PASS, an XPASS fails the run, an
// ERROR outranks a FAIL, and a verdict's reason is one bounded line naming the first case.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "mmaemu/outcome/outcome.hpp"

namespace mmaemu::outcome {
namespace {

// The documented vocabulary (docs/testing.md), in the order of the enum.
const std::vector<std::string> kDocumentedNames = {"PASS",        "FAIL",  "ERROR",
                                                   "UNSUPPORTED", "XFAIL", "XPASS"};
const std::string kDocumentedLetters = "PFEUXY";

TEST(Outcome, NamesAndLettersAreTheDocumentedOnesAndRoundTrip) {
  ASSERT_EQ(kAllOutcomes.size(), kDocumentedNames.size());
  for (std::size_t i = 0; i < kAllOutcomes.size(); ++i) {
    const Outcome o = kAllOutcomes[i];
    EXPECT_EQ(static_cast<std::size_t>(o), i);
    EXPECT_EQ(outcome_name(o), kDocumentedNames[i]);
    EXPECT_EQ(outcome_letter(o), kDocumentedLetters[i]);
    EXPECT_EQ(parse_outcome(kDocumentedNames[i]), o);
    EXPECT_EQ(outcome_of_letter(kDocumentedLetters[i]), o);
  }
}

TEST(Outcome, OtherSpellingsAreNotOutcomes) {
  for (const char* s : {"", "pass", "Pass", " PASS", "PASS ", "OK", "PARTIAL", "MISMATCH", "SKIP"})
    EXPECT_FALSE(parse_outcome(s).has_value()) << s;
  for (char c : std::string("pfeuxy-?Z ")) // lower case and other letters
    EXPECT_FALSE(outcome_of_letter(c).has_value()) << c;
}

TEST(Outcome, WorseFollowsTheDocumentedSeverityOrder) {
  // PASS < XFAIL < UNSUPPORTED < XPASS < FAIL < ERROR
  const std::vector<Outcome> order = {Outcome::pass,  Outcome::xfail, Outcome::unsupported,
                                      Outcome::xpass, Outcome::fail,  Outcome::error};
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (std::size_t j = 0; j < order.size(); ++j) {
      const Outcome want = order[i > j ? i : j];
      EXPECT_EQ(worse(order[i], order[j]), want) << i << " " << j;
    }
  }
}

TEST(Outcome, OnlyUnsupportedDidNotRunAndOnlyFailErrorXpassFailARun) {
  const std::set<Outcome> failing = {Outcome::fail, Outcome::error, Outcome::xpass};
  for (Outcome o : kAllOutcomes) {
    EXPECT_EQ(ran(o), o != Outcome::unsupported) << outcome_name(o);
    EXPECT_EQ(fails_run(o), failing.count(o) == 1) << outcome_name(o);
  }
}

TEST(Outcome, AnExpectedFailureTurnsFailIntoXfailAndPassIntoXpass) {
  EXPECT_EQ(expected_failure_outcome(Outcome::fail), Outcome::xfail);
  EXPECT_EQ(expected_failure_outcome(Outcome::pass), Outcome::xpass);
  // A check that could not run has shown nothing either way.
  EXPECT_EQ(expected_failure_outcome(Outcome::error), Outcome::error);
  EXPECT_EQ(expected_failure_outcome(Outcome::unsupported), Outcome::unsupported);
}

Tally tally_of(std::initializer_list<std::pair<Outcome, std::size_t>> counts) {
  Tally t;
  for (const auto& [o, n] : counts)
    t.add(o, n);
  return t;
}

TEST(Verdict, ARunThatRanNothingIsUnsupportedNeverPass) {
  EXPECT_EQ(verdict_of(Tally{}), Outcome::unsupported);
  EXPECT_EQ(verdict_of(tally_of({{Outcome::unsupported, 5000}})), Outcome::unsupported);
  EXPECT_EQ(exit_status_of(verdict_of(Tally{})), 4);
}

TEST(Verdict, AnErrorOutranksFailuresAndAFailureOutranksPasses) {
  EXPECT_EQ(verdict_of(tally_of({{Outcome::pass, 9}, {Outcome::fail, 1}, {Outcome::error, 1}})),
            Outcome::error);
  EXPECT_EQ(verdict_of(tally_of({{Outcome::pass, 9}, {Outcome::fail, 1}})), Outcome::fail);
  EXPECT_EQ(verdict_of(tally_of({{Outcome::pass, 1}, {Outcome::unsupported, 9}})), Outcome::pass);
}

TEST(Verdict, AnXpassFailsARunOfPasses) {
  const Tally t = tally_of({{Outcome::pass, 100}, {Outcome::xpass, 1}});
  EXPECT_EQ(verdict_of(t), Outcome::fail);
  EXPECT_EQ(exit_status_of(verdict_of(t)), 1);
}

TEST(Verdict, XfailsAreChecksThatRanAndDoNotFailTheRun) {
  EXPECT_EQ(verdict_of(tally_of({{Outcome::xfail, 3}})), Outcome::pass);
  EXPECT_EQ(verdict_of(tally_of({{Outcome::pass, 3}, {Outcome::xfail, 3}})), Outcome::pass);
}

TEST(Verdict, AFailedBookkeepingCheckFailsEvenARunOfNothing) {
  EXPECT_EQ(verdict_of(tally_of({{Outcome::pass, 3}}), 1), Outcome::fail);
  EXPECT_EQ(verdict_of(Tally{}, 1), Outcome::fail);
}

TEST(Verdict, TallyTotalsAndRanCountEveryOutcome) {
  Tally t = tally_of({{Outcome::pass, 1}, {Outcome::fail, 2}, {Outcome::unsupported, 4}});
  t += tally_of({{Outcome::xfail, 8}, {Outcome::xpass, 16}, {Outcome::error, 32}});
  EXPECT_EQ(t.total(), 63u);
  EXPECT_EQ(t.ran(), 59u);
  EXPECT_EQ(t[Outcome::xpass], 16u);
}

TEST(Verdict, TheReasonNamesTheCountsAndTheFirstCase) {
  VerdictNotes n;
  n.first_error = "a.h5: not HDF5";
  const Verdict e = judge(tally_of({{Outcome::error, 2}, {Outcome::fail, 1}}), n);
  EXPECT_EQ(e.outcome, Outcome::error);
  EXPECT_EQ(e.reason, "2 case(s) could not run; first: a.h5: not HDF5");

  VerdictNotes f;
  f.first_failure = "x:7: bits differ";
  f.first_xpass = "x:9";
  const Verdict fx = judge(tally_of({{Outcome::fail, 3}, {Outcome::xpass, 1}}), f);
  EXPECT_EQ(fx.reason, "3 case(s) failed, 1 case(s) passed unexpectedly (XPASS); first: x:7: "
                       "bits differ");

  VerdictNotes x;
  x.first_xpass = "x:9: passed";
  EXPECT_EQ(judge(tally_of({{Outcome::xpass, 1}}), x).reason,
            "1 case(s) passed unexpectedly (XPASS); first: x:9: passed");

  // A check that did not hold is named before the failed cases.
  VerdictNotes c;
  c.failed_checks = 1;
  c.first_failed_check = "T1/data_budget: 30 MiB of 20";
  c.first_failure = "x:7";
  EXPECT_EQ(judge(tally_of({{Outcome::fail, 1}}), c).reason,
            "1 case(s) failed, 1 check(s) did not hold; first: T1/data_budget: 30 MiB of 20");

  VerdictNotes u;
  u.nothing_ran = "no case ran";
  EXPECT_EQ(judge(Tally{}, u).reason, "no case ran");
  EXPECT_EQ(judge(tally_of({{Outcome::pass, 1}}), u).reason, "");
}

TEST(Verdict, TheReasonIsOneLineOfAtMost400Characters) {
  VerdictNotes n;
  n.first_error = "line one\nline two\r" + std::string(1000, 'z');
  const Verdict v = judge(tally_of({{Outcome::error, 1}}), n);
  EXPECT_EQ(v.reason.find('\n'), std::string::npos);
  EXPECT_EQ(v.reason.find('\r'), std::string::npos);
  EXPECT_EQ(v.reason.size(), 400u);
  EXPECT_EQ(v.reason.substr(397), "...");
}

} // namespace
} // namespace mmaemu::outcome
