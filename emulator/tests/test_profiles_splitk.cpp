// SPDX-License-Identifier: BSD-2-Clause
// Profiles as data (the shipped platforms and their fields, empty split-K tables, the
// default from $MMAEMU_PROFILE) and resolve_splitk's order: explicit, workspace0, table,
// live-query, envelope, with strict / MMAEMU_SPLITK_STRICT, dry, and the one-time warnings.

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mmaemu/emulator/accumulate.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/profile.hpp"
#include "mmaemu/emulator/splitk.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace {

using mmaemu::Format;
using mmaemu::Maturity;
using mmaemu::Profile;
using mmaemu::SplitKQuery;
using mmaemu::SplitKRequest;
using mmaemu::WarningClass;

// Sets (or unsets) an environment variable for a scope and restores it.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name))
      old_ = std::string(v);
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

class WithSink : public ::testing::Test {
protected:
  void SetUp() override {
    prev_ = mmaemu::set_warning_sink([this](const mmaemu::Warning& w) { seen_.push_back(w); });
    mmaemu::reset_warnings_once();
  }
  void TearDown() override { mmaemu::set_warning_sink(prev_); }
  int count(WarningClass c) const {
    int n = 0;
    for (const auto& w : seen_)
      n += w.cls == c;
    return n;
  }
  mmaemu::WarningSink prev_;
  std::vector<mmaemu::Warning> seen_;
};

using Profiles = WithSink;
using SplitK = WithSink;

struct Expect {
  const char* name;
  const char* preset;
  const char* gpu;
  const char* capability;
  int sm;
  const char* caller;
  const char* torch;
  std::int64_t workspace;
  std::vector<std::string> schemes;
  Maturity maturity;
  const char* splitk_maturity;
};

const std::vector<Expect>& shipped() {
  static const std::vector<Expect> v = {
      {"ada",
       "ada",
       "NVIDIA GeForce RTX 4060",
       "8.9",
       24,
       "torch._scaled_mm",
       "2.7.1",
       8519680,
       {"serial", "pairwise"},
       Maturity::validated,
       "unrecorded"},
      {"ada-te",
       "ada",
       "NVIDIA GeForce RTX 4060",
       "8.9",
       24,
       "transformer_engine",
       "2.7.1",
       8519680,
       {"serial", "pairwise"},
       Maturity::validated,
       "experimental"},
      {"ada-ws0",
       "ada",
       "NVIDIA GeForce RTX 4060",
       "8.9",
       24,
       "torch._scaled_mm",
       "2.7.1",
       0,
       {"serial", "pairwise"},
       Maturity::validated,
       "unrecorded"},
      {"hopper",
       "hopper",
       "NVIDIA H100 PCIe",
       "9.0",
       114,
       "torch._scaled_mm",
       "2.7.1",
       33554432,
       {"contiguous"},
       Maturity::validated,
       "unrecorded"},
      {"hopper-te",
       "hopper",
       "NVIDIA H100 PCIe",
       "9.0",
       114,
       "transformer_engine",
       "2.7.1",
       33554432,
       {"contiguous"},
       Maturity::validated,
       "experimental"},
      {"hopper-ws0",
       "hopper",
       "NVIDIA H100 PCIe",
       "9.0",
       114,
       "torch._scaled_mm",
       "2.7.1",
       0,
       {"contiguous"},
       Maturity::validated,
       "unrecorded"},
      {"hopper-experimental",
       "hopper",
       "NVIDIA H100",
       "9.0",
       132,
       "torch._scaled_mm",
       "unrecorded",
       33554432,
       {"contiguous"},
       Maturity::experimental,
       "experimental"},
      {"h200",
       "hopper",
       "NVIDIA H200",
       "9.0",
       132,
       "torch._scaled_mm",
       "2.11",
       33554432,
       {"contiguous"},
       Maturity::experimental,
       "unrecorded"},
      {"h100-sxm",
       "hopper",
       "NVIDIA H100 80GB HBM3",
       "9.0",
       132,
       "torch._scaled_mm",
       "unrecorded",
       33554432,
       {"contiguous"},
       Maturity::experimental,
       "unrecorded"},
      {"b200-mma-sync-experimental",
       "b200_mma_sync",
       "NVIDIA B200",
       "10.0",
       148,
       "mma.sync",
       "none",
       0,
       {},
       Maturity::experimental,
       "unrecorded"},
  };
  return v;
}

TEST_F(Profiles, EveryShippedProfileLoadsWithItsFields) {
  std::set<std::string> names;
  for (const auto& n : mmaemu::list_profiles())
    names.insert(n);
  std::set<std::string> want;
  for (const auto& e : shipped())
    want.insert(e.name);
  EXPECT_EQ(names, want);
  for (const auto& e : shipped()) {
    SCOPED_TRACE(e.name);
    const Profile& p = mmaemu::get_profile(e.name);
    EXPECT_EQ(p.name, e.name);
    EXPECT_EQ(p.preset, e.preset);
    EXPECT_EQ(p.gpu_name, e.gpu);
    EXPECT_EQ(p.capability, e.capability);
    EXPECT_EQ(p.sm_count, e.sm);
    EXPECT_EQ(p.caller, e.caller);
    EXPECT_EQ(p.torch_version, e.torch);
    EXPECT_EQ(p.workspace_bytes, e.workspace);
    EXPECT_EQ(p.align, 16);
    EXPECT_EQ(p.split_schemes, e.schemes);
    EXPECT_EQ(p.maturity, e.maturity);
    EXPECT_EQ(p.splitk_maturity, e.splitk_maturity);
    EXPECT_FALSE(p.cublaslt_version.empty());
    EXPECT_FALSE(p.envelope.has_value()) << "no shipped profile has a validated envelope on record";
    // The same object each time.
    EXPECT_EQ(&mmaemu::get_profile(e.name), &p);
  }
}

TEST_F(Profiles, EveryShippedSplitKTableIsEmpty) {
  for (const auto& name : mmaemu::list_profiles()) {
    const Profile& p = mmaemu::get_profile(name);
    EXPECT_FALSE(p.splitk_table.id.empty()) << name;
    EXPECT_TRUE(p.splitk_table.entries.empty())
        << name << ": table '" << p.splitk_table.id << "' has " << p.splitk_table.entries.size()
        << " entries, but no split-K sweep is recorded in this repository";
  }
}

TEST_F(Profiles, EveryProfileRejectsE4m3PairIntoE5m2) {
  for (const auto& name : mmaemu::list_profiles()) {
    const Profile& p = mmaemu::get_profile(name);
    EXPECT_TRUE(p.rejects_call(Format::e4m3, Format::e4m3, Format::e5m2).has_value()) << name;
    EXPECT_FALSE(p.rejects_call(Format::e4m3, Format::e4m3, Format::e4m3).has_value()) << name;
    EXPECT_FALSE(p.rejects_call(Format::e5m2, Format::e4m3, Format::e5m2).has_value()) << name;
    EXPECT_FALSE(p.rejects_call(Format::e4m3, Format::e5m2, Format::bf16).has_value()) << name;
    // The rule names an e4m3 pair (scaled-mm-facts.md): each operand is matched against its
    // own format, so e4m3 x e5m2 into e5m2 is no e4m3 pair.
    EXPECT_FALSE(p.rejects_call(Format::e4m3, Format::e5m2, Format::e5m2).has_value()) << name;
  }
}

TEST_F(Profiles, UnknownNamesRaiseValueErrorListingTheKnownOnes) {
  for (const char* bad : {"h100", "Hopper", "", "sm_90", "b200"}) {
    try {
      mmaemu::get_profile(bad);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const mmaemu::ValueError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
      for (const auto& n : mmaemu::list_profiles())
        EXPECT_NE(msg.find(n), std::string::npos) << n << " in " << msg;
    }
  }
}

TEST_F(Profiles, MmaemuProfilePicksTheDefault) {
  {
    ScopedEnv env("MMAEMU_PROFILE", nullptr);
    EXPECT_EQ(mmaemu::get_profile_or_default().name, "hopper");
    EXPECT_EQ(mmaemu::get_profile_or_default("ada-te").name, "ada-te");
  }
  {
    ScopedEnv env("MMAEMU_PROFILE", "");
    EXPECT_EQ(mmaemu::get_profile_or_default().name, "hopper");
  }
  {
    ScopedEnv env("MMAEMU_PROFILE", "ada");
    EXPECT_EQ(mmaemu::get_profile_or_default().name, "ada");
    EXPECT_EQ(mmaemu::get_profile_or_default("h200").name, "h200"); // an explicit name wins
  }
  {
    ScopedEnv env("MMAEMU_PROFILE", "not-a-profile");
    EXPECT_THROW(mmaemu::get_profile_or_default(), mmaemu::ValueError);
  }
  {
    // accumulate's default profile follows the variable: ada-ws0 decides S = 1 by workspace 0
    // where the default hopper profile could not decide.
    ScopedEnv env("MMAEMU_PROFILE", "ada-ws0");
    mmaemu::SplitDecision d;
    const mmaemu::AccumulateOptions opt;
    mmaemu::accumulate(mmaemu::Tensor::zeros(Format::e4m3, {1, 16}),
                       mmaemu::Tensor::zeros(Format::e4m3, {1, 16}), true, opt, &d);
    EXPECT_EQ(d.source, "workspace0");
  }
  {
    ScopedEnv env("MMAEMU_PROFILE", nullptr);
    const mmaemu::AccumulateOptions opt;
    EXPECT_THROW(mmaemu::accumulate(mmaemu::Tensor::zeros(Format::e4m3, {1, 16}),
                                    mmaemu::Tensor::zeros(Format::e4m3, {1, 16}), true, opt),
                 mmaemu::SplitKUnknownError);
  }
}

TEST_F(Profiles, MalformedProfileJsonIsAValueErrorNamingTheField) {
  const std::string good =
      R"({"name": "x", "preset": "hopper", "gpu_name": "g", "capability": "9.0", "sm_count": 1,
          "cublaslt_version": "v", "caller": "torch._scaled_mm", "torch_version": "2.7.1",
          "workspace_bytes": 0, "maturity": "custom")";
  EXPECT_NO_THROW(mmaemu::parse_profile_json(good + "}"));
  EXPECT_EQ(mmaemu::parse_profile_json(good + "}").maturity, Maturity::custom);
  auto err = [&](const std::string& text) -> std::string {
    try {
      mmaemu::parse_profile_json(text);
    } catch (const mmaemu::ValueError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(err(good + R"(, "split_schemes": ["diagonal"]})").find("diagonal"), std::string::npos);
  EXPECT_NE(err(R"({"name": "x"})").find("preset"), std::string::npos);
  EXPECT_NE(err("{not json").find("profile JSON"), std::string::npos);
  std::string great = good;
  great.replace(great.find("\"custom\""), 8, "\"great\"");
  EXPECT_NE(err(great + "}").find("great"), std::string::npos);
  EXPECT_NE(err(good + R"(, "rejects": [{"a": "e9m9", "message": "m"}]})").find("e9m9"),
            std::string::npos);
  EXPECT_THROW(
      mmaemu::parse_profile_json(
          R"({"name": "x", "preset": "sm_120", "gpu_name": "g", "capability": "9.0", "sm_count": 1,
                       "cublaslt_version": "v", "caller": "c", "torch_version": "t", "workspace_bytes": 0,
                       "maturity": "custom"})"),
      mmaemu::ValueError);
}

// ---- resolve_splitk --------------------------------------------------------------------------

SplitKQuery query(std::int64_t M = 64, std::int64_t N = 128, std::int64_t K = 256,
                  Format out = Format::bf16, bool fast = false, bool layout_std = true) {
  return SplitKQuery{M, N, K, Format::e4m3, Format::e4m3, out, fast, layout_std};
}

TEST_F(SplitK, ExplicitOneIsUnsplitOnEveryProfile) {
  for (const auto& name : mmaemu::list_profiles()) {
    const auto d = mmaemu::resolve_splitk(query(), mmaemu::get_profile(name),
                                          SplitKRequest::explicit_split(1));
    EXPECT_EQ(d.S, 1) << name;
    EXPECT_EQ(d.scheme, "none") << name;
    EXPECT_EQ(d.source, "explicit") << name;
    EXPECT_TRUE(d.warnings.empty()) << name;
  }
  EXPECT_TRUE(seen_.empty());
}

TEST_F(SplitK, ExplicitSplitWithTheProfilesSchemeWarnsUnverifiedOncePerProcess) {
  const Profile& hopper = mmaemu::get_profile("hopper");
  const auto d =
      mmaemu::resolve_splitk(query(), hopper, SplitKRequest::explicit_split(2, "contiguous"));
  EXPECT_EQ(d.S, 2);
  EXPECT_EQ(d.scheme, "contiguous");
  EXPECT_EQ(d.source, "explicit");
  EXPECT_FALSE(d.verified);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].cls, WarningClass::unverified_split);
  EXPECT_EQ(count(WarningClass::unverified_split), 1);
  // Again (another S too): the decision still lists it, the sink does not get it twice.
  const auto again =
      mmaemu::resolve_splitk(query(), hopper, SplitKRequest::explicit_split(3, "contiguous"));
  EXPECT_EQ(again.warnings.size(), 1u);
  EXPECT_EQ(count(WarningClass::unverified_split), 1);
  EXPECT_EQ(seen_.size(), 1u);
  EXPECT_STREQ(mmaemu::warning_class_name(seen_[0].cls), "UnverifiedSplitWarning");

  for (const char* scheme : {"serial", "pairwise"}) {
    const auto a = mmaemu::resolve_splitk(query(), mmaemu::get_profile("ada"),
                                          SplitKRequest::explicit_split(4, scheme));
    EXPECT_EQ(a.S, 4);
    EXPECT_EQ(a.scheme, scheme);
  }
}

TEST_F(SplitK, DryReturnsTheWarningWithoutUsingUpTheOnce) {
  const Profile& ada = mmaemu::get_profile("ada");
  const auto dry = mmaemu::resolve_splitk(query(), ada, SplitKRequest::explicit_split(2, "serial"),
                                          std::nullopt, true);
  ASSERT_EQ(dry.warnings.size(), 1u);
  EXPECT_EQ(dry.warnings[0].cls, WarningClass::unverified_split);
  EXPECT_TRUE(seen_.empty());
  mmaemu::resolve_splitk(query(), ada, SplitKRequest::explicit_split(2, "serial"));
  EXPECT_EQ(count(WarningClass::unverified_split), 1);
  mmaemu::resolve_splitk(query(), ada, SplitKRequest::explicit_split(2, "serial"), std::nullopt,
                         true);
  mmaemu::resolve_splitk(query(), ada, SplitKRequest::explicit_split(2, "serial"));
  EXPECT_EQ(count(WarningClass::unverified_split), 1);
}

TEST_F(SplitK, ASchemeOfTheOtherPresetIsAValueError) {
  struct Case {
    const char* profile;
    const char* scheme;
  };
  for (const Case c :
       {Case{"hopper", "serial"}, Case{"hopper", "pairwise"}, Case{"hopper-te", "serial"},
        Case{"h200", "pairwise"}, Case{"ada", "contiguous"}, Case{"ada-ws0", "contiguous"}}) {
    try {
      mmaemu::resolve_splitk(query(), mmaemu::get_profile(c.profile),
                             SplitKRequest::explicit_split(2, c.scheme));
      ADD_FAILURE() << c.profile << " accepted " << c.scheme;
    } catch (const mmaemu::ValueError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(c.scheme), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.profile), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(mmaemu::resolve_splitk(query(), mmaemu::get_profile("hopper"),
                                      SplitKRequest::explicit_split(0)),
               mmaemu::ValueError);
  EXPECT_TRUE(seen_.empty());
}

TEST_F(SplitK, SplitOnB200IsUnsupported) {
  const Profile& b200 = mmaemu::get_profile("b200-mma-sync-experimental");
  for (const char* scheme : {"contiguous", "serial", "pairwise"}) {
    EXPECT_THROW(mmaemu::resolve_splitk(query(), b200, SplitKRequest::explicit_split(2, scheme)),
                 mmaemu::UnsupportedFeatureError)
        << scheme;
  }
  EXPECT_EQ(mmaemu::resolve_splitk(query(), b200, SplitKRequest::explicit_split(1)).S, 1);
}

TEST_F(SplitK, AutoOnAnEmptyTableIsSplitKUnknownErrorNamingTheTable) {
  for (const auto& name : mmaemu::list_profiles()) {
    const Profile& p = mmaemu::get_profile(name);
    if (p.workspace_bytes == 0)
      continue;
    try {
      mmaemu::resolve_splitk(query(), p, SplitKRequest::automatic());
      ADD_FAILURE() << name << " decided";
    } catch (const mmaemu::SplitKUnknownError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("table '" + p.splitk_table.id + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
    }
  }
}

TEST_F(SplitK, AutoOnWorkspaceZeroIsUnsplit) {
  for (const char* name : {"hopper-ws0", "ada-ws0", "b200-mma-sync-experimental"}) {
    const auto d =
        mmaemu::resolve_splitk(query(), mmaemu::get_profile(name), SplitKRequest::automatic());
    EXPECT_EQ(d.source, "workspace0") << name;
    EXPECT_EQ(d.S, 1) << name;
    EXPECT_EQ(d.scheme, "none") << name;
    EXPECT_TRUE(d.warnings.empty()) << name;
  }
}

Profile custom(bool validated_envelope, std::int64_t workspace = 33554432) {
  return mmaemu::parse_profile_json(
      R"({"name": "custom-h", "preset": "hopper", "gpu_name": "Test GPU", "capability": "9.0", "sm_count": 1,
          "cublaslt_version": "v", "caller": "torch._scaled_mm", "torch_version": "2.7.1",
          "workspace_bytes": )" +
      std::to_string(workspace) + R"(, "split_schemes": ["contiguous"],
          "maturity": "custom",
          "splitk_table": {"table": "custom-t", "note": "test", "entries": [
            {"M": 64, "N": 128, "K": 256, "a": "e4m3", "b": "e4m3", "out": "bf16", "fast": false,
             "S": 2, "scheme": "contiguous", "verified": false, "evidence": "made up for the test"},
            {"M": 16, "N": 16, "K": 4096, "a": "e4m3", "b": "e4m3", "out": "bf16", "fast": true,
             "S": 1, "verified": true, "evidence": "also made up"}]},
          "envelope": {"min_mn": 1024, "max_k": 8192, "validated": )" +
      std::string(validated_envelope ? "true" : "false") + R"(, "evidence": "test envelope"}})");
}

TEST_F(SplitK, ATableEntryDecidesItsShapeAndTheEnvelopeAnother) {
  ScopedEnv env("MMAEMU_SPLITK_STRICT", nullptr);
  const Profile p = custom(false);
  ASSERT_EQ(p.splitk_table.entries.size(), 2u);
  // The table entry.
  const auto t = mmaemu::resolve_splitk(query(64, 128, 256, Format::bf16, false), p,
                                        SplitKRequest::automatic());
  EXPECT_EQ(t.source, "table");
  EXPECT_EQ(t.S, 2);
  EXPECT_EQ(t.scheme, "contiguous");
  EXPECT_EQ(t.table_id, "custom-t");
  EXPECT_FALSE(t.verified);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0].cls, WarningClass::unverified_split);
  EXPECT_EQ(count(WarningClass::unverified_split), 1);
  const auto t1 = mmaemu::resolve_splitk(query(16, 16, 4096, Format::bf16, true), p,
                                         SplitKRequest::automatic());
  EXPECT_EQ(t1.source, "table");
  EXPECT_EQ(t1.S, 1);
  EXPECT_TRUE(t1.verified);
  EXPECT_TRUE(t1.warnings.empty());
  // The same shape with fast accumulation, another output dtype, or a non-standard layout
  // has no entry: the envelope (M*N = 8192 >= 1024, K = 256 <= 8192) infers S = 1.
  for (const auto& q :
       {query(64, 128, 256, Format::bf16, true), query(64, 128, 256, Format::fp32, false),
        query(64, 128, 256, Format::bf16, false, false)}) {
    const auto e = mmaemu::resolve_splitk(q, p, SplitKRequest::automatic());
    EXPECT_EQ(e.source, "envelope");
    EXPECT_EQ(e.S, 1);
    ASSERT_EQ(e.warnings.size(), 1u);
    EXPECT_EQ(e.warnings[0].cls, WarningClass::unvalidated_envelope);
  }
  EXPECT_EQ(count(WarningClass::unvalidated_envelope), 1); // once per process
  EXPECT_STREQ(mmaemu::warning_class_name(WarningClass::unvalidated_envelope),
               "UnvalidatedEnvelopeWarning");
  // Outside the envelope (M*N too small, K too large): nothing decides.
  EXPECT_THROW(mmaemu::resolve_splitk(query(16, 32, 256), p, SplitKRequest::automatic()),
               mmaemu::SplitKUnknownError);
  EXPECT_THROW(mmaemu::resolve_splitk(query(64, 128, 8208), p, SplitKRequest::automatic()),
               mmaemu::SplitKUnknownError);
  EXPECT_EQ(mmaemu::resolve_splitk(query(32, 32, 8192), p, SplitKRequest::automatic()).source,
            "envelope");
  // Explicit comes first: S = 1 for the table's shape.
  EXPECT_EQ(mmaemu::resolve_splitk(query(), p, SplitKRequest::explicit_split(1)).source,
            "explicit");
}

// A claim the data does not make is not made: a table entry without "verified" is unverified
// (S > 1 warns), an envelope without "validated" is unvalidated (it warns).
TEST_F(SplitK, AnEntryOrEnvelopeThatDoesNotSayVerifiedIsNot) {
  ScopedEnv env("MMAEMU_SPLITK_STRICT", nullptr);
  const Profile p = mmaemu::parse_profile_json(
      R"({"name": "custom-u", "preset": "hopper", "gpu_name": "Test GPU", "capability": "9.0", "sm_count": 1,
          "cublaslt_version": "v", "caller": "torch._scaled_mm", "torch_version": "2.7.1",
          "workspace_bytes": 33554432, "split_schemes": ["contiguous"], "maturity": "custom",
          "splitk_table": {"table": "custom-u", "note": "test", "entries": [
            {"M": 64, "N": 128, "K": 256, "a": "e4m3", "b": "e4m3", "out": "bf16", "fast": false,
             "S": 2, "scheme": "contiguous", "evidence": "made up for the test"}]},
          "envelope": {"min_mn": 1024, "max_k": 8192, "evidence": "test envelope"}})");
  ASSERT_EQ(p.splitk_table.entries.size(), 1u);
  EXPECT_FALSE(p.splitk_table.entries[0].verified);
  ASSERT_TRUE(p.envelope.has_value());
  EXPECT_FALSE(p.envelope->validated);
  const auto t = mmaemu::resolve_splitk(query(64, 128, 256, Format::bf16, false), p,
                                        SplitKRequest::automatic(), std::nullopt, true);
  EXPECT_EQ(t.source, "table");
  EXPECT_FALSE(t.verified);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0].cls, WarningClass::unverified_split);
  const auto e = mmaemu::resolve_splitk(query(64, 128, 512, Format::bf16, false), p,
                                        SplitKRequest::automatic(), std::nullopt, true);
  EXPECT_EQ(e.source, "envelope");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_EQ(e.warnings[0].cls, WarningClass::unvalidated_envelope);
}

TEST_F(SplitK, AValidatedEnvelopeDoesNotWarn) {
  ScopedEnv env("MMAEMU_SPLITK_STRICT", nullptr);
  const auto e =
      mmaemu::resolve_splitk(query(64, 64, 64), custom(true), SplitKRequest::automatic());
  EXPECT_EQ(e.source, "envelope");
  EXPECT_TRUE(e.warnings.empty());
  EXPECT_TRUE(seen_.empty());
}

TEST_F(SplitK, EnvelopeWarningDryDoesNotUseUpTheOnce) {
  ScopedEnv env("MMAEMU_SPLITK_STRICT", nullptr);
  const Profile p = custom(false);
  const auto dry =
      mmaemu::resolve_splitk(query(64, 64, 64), p, SplitKRequest::automatic(), std::nullopt, true);
  EXPECT_EQ(dry.warnings.size(), 1u);
  EXPECT_TRUE(seen_.empty());
  mmaemu::resolve_splitk(query(64, 64, 64), p, SplitKRequest::automatic());
  EXPECT_EQ(count(WarningClass::unvalidated_envelope), 1);
}

TEST_F(SplitK, WorkspaceZeroComesBeforeTheTable) {
  const Profile p = custom(false, 0);
  const auto d = mmaemu::resolve_splitk(query(), p, SplitKRequest::automatic());
  EXPECT_EQ(d.source, "workspace0");
  EXPECT_EQ(d.S, 1);
}

TEST_F(SplitK, StrictDisablesTheEnvelope) {
  const Profile p = custom(false);
  const SplitKQuery inside = query(64, 64, 64);
  {
    ScopedEnv env("MMAEMU_SPLITK_STRICT", nullptr);
    EXPECT_THROW(mmaemu::resolve_splitk(inside, p, SplitKRequest::automatic(), true),
                 mmaemu::SplitKUnknownError);
    try {
      mmaemu::resolve_splitk(inside, p, SplitKRequest::automatic(), true);
    } catch (const mmaemu::SplitKUnknownError& e) {
      EXPECT_NE(std::string(e.what()).find("strict"), std::string::npos) << e.what();
    }
    EXPECT_EQ(mmaemu::resolve_splitk(inside, p, SplitKRequest::automatic(), false).source,
              "envelope");
    // The table still answers under strict.
    EXPECT_EQ(mmaemu::resolve_splitk(query(), p, SplitKRequest::automatic(), true).source, "table");
  }
  {
    ScopedEnv env("MMAEMU_SPLITK_STRICT", "1");
    EXPECT_THROW(mmaemu::resolve_splitk(inside, p, SplitKRequest::automatic()),
                 mmaemu::SplitKUnknownError);
    EXPECT_EQ(mmaemu::resolve_splitk(inside, p, SplitKRequest::automatic(), false).source,
              "envelope");
  }
  {
    ScopedEnv env("MMAEMU_SPLITK_STRICT", "0");
    EXPECT_EQ(mmaemu::resolve_splitk(inside, p, SplitKRequest::automatic()).source, "envelope");
  }
}

TEST(SplitKParse, AcceptsTheSeedsSpellings) {
  const auto a = mmaemu::parse_splitk("auto");
  EXPECT_TRUE(a.is_auto);
  const auto one = mmaemu::parse_splitk("1");
  EXPECT_FALSE(one.is_auto);
  EXPECT_EQ(one.split.S, 1);
  EXPECT_EQ(one.split.scheme, "none");
  struct Case {
    const char* text;
    int S;
    const char* scheme;
  };
  for (const Case c : {Case{"4,contiguous", 4, "contiguous"}, Case{"2,serial", 2, "serial"},
                       Case{"3,pairwise", 3, "pairwise"}}) {
    const auto r = mmaemu::parse_splitk(c.text);
    EXPECT_FALSE(r.is_auto) << c.text;
    EXPECT_EQ(r.split.S, c.S) << c.text;
    EXPECT_EQ(r.split.scheme, c.scheme) << c.text;
    EXPECT_EQ(mmaemu::splitk_request_text(r), c.text);
  }
  EXPECT_EQ(mmaemu::splitk_request_text(a), "auto");
  EXPECT_EQ(mmaemu::splitk_request_text(one), "1");
}

TEST(SplitKParse, RejectsOtherTextWithAValueErrorNamingIt) {
  for (const char* bad :
       {"0", "2", "2,diagonal", "x", "", "-1", "2,", ",serial", "auto,2", "1.5,serial"}) {
    try {
      mmaemu::parse_splitk(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const mmaemu::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

} // namespace
