// SPDX-License-Identifier: BSD-2-Clause
// The committed catalogue (mutants/catalogue.json): it parses, it is as large as T4 promises
// (every group of the model, five or more in each harness group),
// every edit finds its original exactly once in this tree, and its schema can be written.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "mmaemu/mutants/catalogue.hpp"
#include "mmaemu/mutants/rewriter.hpp"
#include "mmaemu/mutants/schema.hpp"
#include "mmaemu/support/input_file.hpp"

using namespace mmaemu::mutants;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = MMAEMU_SOURCE_DIR;

const Catalogue& committed() {
  static const Catalogue c = load_catalogue(kSource / "mutants" / "catalogue.json");
  return c;
}

} // namespace

TEST(CommittedCatalogue, HasTheMutantsT4Promises) {
  std::size_t cpu = 0, kernel_cpu = 0, identity = 0;
  std::map<std::string, std::size_t> groups;
  for (const auto& m : committed().mutants) {
    cpu += m.tier == "cpu";
    kernel_cpu += m.tier == "cpu" && m.group == "kernel";
    identity += m.expect == Expect::survives;
    ++groups[m.group];
  }
  EXPECT_GE(cpu, 60u);
  EXPECT_GE(kernel_cpu, 10u);
  EXPECT_GE(identity, 2u);
  // Every group has mutants; a harness group at least five (issue 19: written as carefully as
  // the modelling ones), and the harness layer at least 40 in all.
  std::size_t harness = 0;
  for (const auto& g : catalogue_group_info()) {
    if (g.layer == Layer::harness) {
      harness += groups[g.name];
      EXPECT_GE(groups[g.name], 5u) << "harness group " << g.name << " has too few mutants";
    } else {
      EXPECT_GE(groups[g.name], 1u) << "group " << g.name << " has no mutant";
    }
  }
  EXPECT_GE(harness, 40u);
  for (const auto& m : committed().mutants) {
    if (m.expect == Expect::equivalent) {
      EXPECT_GE(m.evidence.size(), 20u) << m.id << ": equivalence needs its evidence spelt out";
    }
  }
}

TEST(CommittedCatalogue, EveryEditFindsItsOriginalExactlyOnce) {
  const auto problems = check_catalogue_applies(kSource, committed());
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

TEST(CommittedCatalogue, ItsSchemaCanBeWritten) {
  std::map<std::string, std::vector<std::pair<int, const Edit*>>> by_file;
  int n = 0;
  for (const auto& m : committed().mutants) {
    ++n;
    if (m.tier != "cpu")
      continue;
    for (const auto& e : m.edits)
      by_file[e.file].push_back({n, &e});
  }
  for (const auto& [file, edits] : by_file) {
    const std::string text = mmaemu::support::read_input_file(kSource / file, 16u << 20, "source");
    EXPECT_NO_THROW(schema_text(text, edits, file)) << file;
  }
}
