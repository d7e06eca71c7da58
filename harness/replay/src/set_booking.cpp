// SPDX-License-Identifier: BSD-2-Clause
#include "set_booking.hpp"

#include "mmaemu/support/text.hpp"

namespace mmaemu::harness::detail {

namespace {

std::string attr_of(const recordings::Attributes& attrs, const char* key) {
  const auto it = attrs.find(key);
  return it == attrs.end() ? std::string() : it->second;
}

} // namespace

std::vector<std::size_t> selected(std::size_t n, const CaseFilter& f) {
  std::vector<std::size_t> out;
  out.reserve(f.all() ? n : n / f.stride + 1);
  for (std::size_t i = 0; i < n; ++i) {
    if (f.selects(i))
      out.push_back(i);
  }
  return out;
}

std::string same_call_message(const std::string& first_id) {
  return "the same call as " + first_id + ": its refusal is one event, judged once there";
}

SetBooking::SetBooking(const std::string& name, const char* kind, const std::string& preset,
                       const recordings::Attributes& attrs, const std::string& file,
                       std::size_t units_total)
    : t0_(std::chrono::steady_clock::now()) {
  s_.file = file;
  s_.name = name;
  s_.kind = kind;
  s_.preset = preset;
  s_.gpu = attr_of(attrs, "gpu");
  s_.scope = attr_of(attrs, "scope");
  s_.expect_error = attr_of(attrs, "expect_error");
  s_.xfail = attr_of(attrs, "xfail");
  scope_reason_ = attr_of(attrs, "scope_reason");
  s_.units_total = units_total;
  s_.letters.reserve(units_total);
  s_.results.reserve(units_total);
  if (!s_.xfail.empty()) {
    const std::string evidence = attr_of(attrs, "xfail_evidence");
    if (evidence.empty()) {
      declaration_error_ = "the set declares xfail '" + support::printable(s_.xfail, 200) +
                           "' without xfail_evidence: a documented disagreement names its "
                           "evidence";
    } else {
      xfail_ = outcome::ExpectedFailure{s_.xfail, evidence};
    }
  }
  if (const std::string c = attr_of(attrs, "computed_by"); !c.empty())
    set_not_hardware_ =
        "not a hardware recording: computed_by '" + support::printable(c, 200) + "'";
}

std::string SetBooking::not_run_reason(const ReplayOptions& opt,
                                       const std::string& file_not_hardware) const {
  if (s_.scope == "out") {
    const std::string& reason = scope_reason_;
    return "out of scope (n/a)" + (reason.empty() ? std::string() : ": " + reason);
  }
  if (opt.hardware_only) {
    const std::string& why = !file_not_hardware.empty() ? file_not_hardware : set_not_hardware_;
    if (!why.empty())
      return why + "; the tiers replay hardware recordings only";
  }
  return {};
}

void SetBooking::unit(const std::string& id) {
  close_unit();
  open_ = true;
  any_ = false;
  worst_ = Outcome::pass;
  unit_id_ = id;
}

void SetBooking::add(CaseResult c) {
  if (!declaration_error_.empty() && c.outcome != Outcome::unsupported) {
    c.outcome = Outcome::error;
    c.message = declaration_error_;
  } else if (xfail_) {
    const Outcome judged = outcome::expected_failure_outcome(c.outcome);
    if (judged == Outcome::xfail) {
      c.message =
          "expected to fail (" + xfail_->reason + ")" + (c.message.empty() ? "" : ": " + c.message);
    } else if (judged == Outcome::xpass) {
      c.message = "expected to fail (" + xfail_->reason + "; evidence: " + xfail_->evidence +
                  ") but it passed" + (c.message.empty() ? "" : ": " + c.message);
    }
    c.outcome = judged;
  }
  switch (c.outcome) {
  case Outcome::pass:
    ++s_.passed;
    break;
  case Outcome::fail:
    ++s_.failed;
    if (c.why == Mismatch::zero_sign)
      ++s_.mismatches.zero_sign;
    else if (c.why == Mismatch::nan_payload)
      ++s_.mismatches.nan_payload;
    else if (c.why == Mismatch::value)
      ++s_.mismatches.value;
    break;
  case Outcome::error:
    ++s_.errors;
    break;
  case Outcome::unsupported:
    ++s_.unsupported;
    break;
  case Outcome::xfail:
    ++s_.xfailed;
    break;
  case Outcome::xpass:
    ++s_.xpassed;
    break;
  }
  worst_ = any_ ? outcome::worse(worst_, c.outcome) : c.outcome;
  any_ = true;
  ++s_.outputs;
  s_.results.push_back(std::move(c));
}

void SetBooking::unit_not_run(const std::string& id, const std::vector<std::string>& outputs,
                              const std::string& why) {
  unit(id);
  auto one = [&](std::string rid) {
    CaseResult c;
    c.id = std::move(rid);
    c.outcome = Outcome::unsupported;
    c.message = why;
    add(std::move(c));
  };
  if (s_.kind == "gemm_call") {
    for (const auto& o : outputs)
      one(id + "/" + o);
  } else {
    one(id);
  }
}

void SetBooking::close_unit() {
  if (!open_)
    return;
  open_ = false;
  if (!any_) {
    // A unit without any result (a call that recorded no output) ran nothing: UNSUPPORTED,
    // never PASS.
    CaseResult c;
    c.id = unit_id_;
    c.outcome = Outcome::unsupported;
    c.message = "no recorded output";
    ++s_.unsupported;
    s_.results.push_back(std::move(c));
    worst_ = Outcome::unsupported;
  }
  s_.letters += outcome::outcome_letter(worst_);
  s_.units.add(worst_);
}

SetResult SetBooking::finish() {
  close_unit();
  s_.cases = s_.results.size();
  s_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  return std::move(s_);
}

} // namespace mmaemu::harness::detail
