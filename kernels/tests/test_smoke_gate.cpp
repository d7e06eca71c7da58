// SPDX-License-Identifier: BSD-2-Clause
// The smoke gate fails a kernel on any bit difference from the reference: a -0 for a +0 and a
// NaN of another payload as much as a wrong value; its detail names the first differing output
// as (row, column) of the row-major [M][N] result; its cached verdict holds for one device,
// driver and image. The "kernel" here is the reference with one
// chosen output changed, so the expected position is the one the test changed.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mmaemu/kernels/gate_problems.hpp"
#include "mmaemu/kernels/gates.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"

namespace mmaemu::kernels {
namespace {

const KernelSpec& spec() {
  return kernel_specs().front();
}

// A runner that returns the reference, with `change` applied to the first problem's outputs.
ProblemRunner changed(std::function<void(const GateProblem&, std::uint32_t*)> change) {
  return [change](const GateProblem& p, std::uint32_t* out) {
    const auto want = reference_bits(spec(), p);
    std::memcpy(out, want.data(), want.size() * sizeof(std::uint32_t));
    if (p.what == smoke_problems().front().what)
      change(p, out);
  };
}

TEST(SmokeGate, TheReferenceItselfPasses) {
  const GateResult r = smoke_gate(spec(), changed([](const GateProblem&, std::uint32_t*) {}));
  EXPECT_TRUE(r.passed) << r.detail;
}

// Gate inputs are finite codes (seed 000): E4M3 has no infinity, and its NaNs are 0x7F and 0xFF
// (OCP FP8, sign bit either way). A NaN input would make every kernel agree on NaN outputs and
// test nothing of the chain. Every problem of every gate, and the random and adversarial ones,
// hold only finite codes, in vectors of their declared shapes.
TEST(SmokeGate, EveryGateProblemHoldsOnlyFiniteCodesOfItsShape) {
  std::vector<GateProblem> all = smoke_problems();
  for (auto& set : {window_problems(), design_a_problems(), adversarial_problems(7, 4, 8, 64)})
    all.insert(all.end(), set.begin(), set.end());
  for (std::uint32_t seed = 1; seed <= 8; ++seed) {
    all.push_back(random_problem(seed, 8, 8, 256));
    all.push_back(mixed_adversarial_problem(seed, 8, 8, 256));
  }
  std::size_t codes = 0;
  for (const auto& p : all) {
    ASSERT_EQ(p.a.size(), static_cast<std::size_t>(p.M) * static_cast<std::size_t>(p.K)) << p.what;
    ASSERT_EQ(p.b.size(), static_cast<std::size_t>(p.N) * static_cast<std::size_t>(p.K)) << p.what;
    for (const auto* v : {&p.a, &p.b}) {
      for (std::uint8_t c : *v) {
        EXPECT_TRUE(c != 0x7F && c != 0xFF) << p.what << ": NaN code 0x" << std::hex << int(c);
        ++codes;
      }
    }
  }
  EXPECT_GT(codes, 10000u); // enough draws that a NaN let through would appear
}

TEST(SmokeGate, ADifferenceNamesItsRowThenItsColumn) {
  const std::vector<GateProblem> problems = smoke_problems();
  const GateProblem& p = problems.front();
  ASSERT_GT(p.N, 3);
  ASSERT_GT(p.M, 1);
  ASSERT_NE(p.M, p.N); // so that (row, column) and (column, row) differ
  // Output (1, 3) of a row-major [M][N] result: index N + 3.
  const GateResult r = smoke_gate(spec(), changed([](const GateProblem& q, std::uint32_t* out) {
                                    out[static_cast<std::size_t>(q.N) + 3] ^= 1u;
                                  }));
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("1 of "), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("first (1, 3)"), std::string::npos) << r.detail;
}

TEST(SmokeGate, AZeroOfTheOtherSignFailsIt) {
  // The first zero output of the reference, in problem order, with its sign flipped: the only
  // difference is the zero's sign.
  std::string changed_problem;
  std::size_t changed_index = 0;
  const GateResult r = smoke_gate(spec(), [&](const GateProblem& p, std::uint32_t* out) {
    const auto want = reference_bits(spec(), p);
    std::memcpy(out, want.data(), want.size() * sizeof(std::uint32_t));
    for (std::size_t i = 0; i < want.size() && changed_problem.empty(); ++i) {
      if ((want[i] & 0x7FFFFFFFu) == 0u) {
        out[i] ^= 0x80000000u;
        changed_problem = p.what;
        changed_index = i;
      }
    }
  });
  ASSERT_FALSE(changed_problem.empty()) << "no smoke problem has a zero output";
  EXPECT_FALSE(r.passed) << r.detail;
  EXPECT_NE(r.detail.find(changed_problem), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("1 of "), std::string::npos)
      << r.detail << " (index " << changed_index << ")";
}

TEST(SmokeGate, ItsVerdictIsKeyedOnTheDeviceTheDriverAndTheImage) {
  driver::Device d;
  d.uuid = "00112233445566778899aabbccddeeff";
  d.cc = 89;
  d.driver_version = 13000;
  LoadedModule m;
  m.image_sha256 = std::string(64, 'a');
  const VerdictKeyFields f = smoke_verdict_fields(m, d);
  EXPECT_EQ(f.gpu_uuid, d.uuid);
  EXPECT_EQ(f.cc, 89);
  EXPECT_EQ(f.driver_version, 13000);
  EXPECT_EQ(f.image_sha256, m.image_sha256);
  EXPECT_EQ(f.gate, std::string(kSmokeGate));
  EXPECT_EQ(f.gate_version, kSmokeGateVersion);
  // Another GPU of the same model, another capability, another driver, another image: each
  // is another key, so no verdict is reused across them.
  const std::string key = verdict_key(f);
  driver::Device other = d;
  other.uuid = "ffeeddccbbaa99887766554433221100";
  EXPECT_NE(verdict_key(smoke_verdict_fields(m, other)), key);
  other = d;
  other.cc = 90;
  EXPECT_NE(verdict_key(smoke_verdict_fields(m, other)), key);
  other = d;
  other.driver_version = 13010;
  EXPECT_NE(verdict_key(smoke_verdict_fields(m, other)), key);
  LoadedModule m2 = m;
  m2.image_sha256 = std::string(64, 'b');
  EXPECT_NE(verdict_key(smoke_verdict_fields(m2, d)), key);
}

} // namespace
} // namespace mmaemu::kernels
