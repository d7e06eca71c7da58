// SPDX-License-Identifier: BSD-2-Clause
// The catalogue parser: a well-formed catalogue reads back field for field; every defect is
// refused with a message naming the mutant and the key.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mmaemu/mutants/catalogue.hpp"

using namespace mmaemu::mutants;
using nlohmann::json;
using ::testing::HasSubstr;

namespace {

// A mutant of group plan, or of the control group for the campaign's own ids.
json mutant(const std::string& id, const std::string& expect = "killed") {
  const bool control = id == "control_sign_flip" || id.rfind("identity_", 0) == 0;
  json m = {{"id", id},
            {"group", control ? "control" : "plan"},
            {"description", "d"},
            {"source", "s"},
            {"tier", "cpu"},
            {"expect", expect},
            {"edits", {{{"file", "emulator/src/x.cpp"}, {"original", "a"}, {"replacement", "b"}}}}};
  if (expect != "killed")
    m["evidence"] = "why";
  return m;
}

json doc(json list) {
  return {{"schema", "mmaemu-mutants/1"}, {"mutants", list}};
}

json valid() {
  return doc({mutant("control_sign_flip"), mutant("plan.a"), mutant("plan.b", "equivalent")});
}

std::string refusal(const json& j) {
  try {
    parse_catalogue(j.dump(), "cat.json");
  } catch (const CatalogueError& e) {
    return e.what();
  }
  return "accepted";
}

} // namespace

TEST(Catalogue, WellFormedCatalogueReadsBackFieldForField) {
  json j = valid();
  j["mutants"][1]["edits"][0]["form"] = "stmt";
  const Catalogue c = parse_catalogue(j.dump(), "cat.json");
  ASSERT_EQ(c.mutants.size(), 3u);
  EXPECT_EQ(c.mutants[1].id, "plan.a");
  EXPECT_EQ(c.mutants[1].group, "plan");
  EXPECT_EQ(c.mutants[1].tier, "cpu");
  EXPECT_EQ(c.mutants[1].expect, Expect::killed);
  ASSERT_EQ(c.mutants[1].edits.size(), 1u);
  EXPECT_EQ(c.mutants[1].edits[0].file, "emulator/src/x.cpp");
  EXPECT_EQ(c.mutants[1].edits[0].original, "a");
  EXPECT_EQ(c.mutants[1].edits[0].replacement, "b");
  EXPECT_EQ(c.mutants[1].edits[0].form, Form::stmt);
  EXPECT_EQ(c.mutants[0].edits[0].form, Form::expr);
  EXPECT_EQ(c.mutants[2].expect, Expect::equivalent);
  EXPECT_EQ(c.mutants[2].evidence, "why");
}

TEST(Catalogue, EachDefectIsRefusedAndNamed) {
  auto with = [](auto edit) {
    json j = valid();
    edit(j);
    return refusal(j);
  };
  EXPECT_THAT(refusal(json::array()), HasSubstr("must be a JSON object"));
  EXPECT_THAT(with([](json& j) { j["schema"] = "mmaemu-mutants/2"; }), HasSubstr("schema"));
  EXPECT_THAT(with([](json& j) { j["extra"] = 1; }),
              HasSubstr("cat.json: key 'extra': not a key of mmaemu-mutants/1"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["evidnce"] = "e"; }),
              HasSubstr("cat.json: mutant 'plan.a': key 'mutants[1].evidnce': not a key of"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["id"] = "Plan.A"; }), HasSubstr("id 'Plan.A'"));
  EXPECT_THAT(with([](json& j) { j["mutants"][2]["id"] = "plan.a"; }),
              HasSubstr("mutant 'plan.a': duplicate id"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["group"] = "misc"; }), HasSubstr("group 'misc'"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["tier"] = "tpu"; }), HasSubstr("tier 'tpu'"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["expect"] = "maybe"; }),
              HasSubstr("expect 'maybe'"));
  EXPECT_THAT(with([](json& j) { j["mutants"][2].erase("evidence"); }),
              HasSubstr("mutant 'plan.b': expect 'equivalent' needs 'evidence'"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1].erase("description"); }),
              HasSubstr("cat.json: mutant 'plan.a': key 'mutants[1].description': missing"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"] = json::array(); }),
              HasSubstr("'edits' is empty"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["file"] = "../etc/passwd"; }),
              HasSubstr("relative path inside the repository"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["file"] = "/etc/passwd"; }),
              HasSubstr("relative path inside the repository"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["original"] = ""; }),
              HasSubstr("mutant 'plan.a': key 'mutants[1].edits[0].original': must not be empty"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["replacement"] = "a"; }),
              HasSubstr("replacement equals original"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["form"] = "decl"; }),
              HasSubstr("form 'decl'"));
  // An expr edit must be an expression: the schema builds `(on ? (replacement) : (original))`.
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["original"] = "x += 1;"; }),
              HasSubstr("mutant 'plan.a': edits[0]: original ends with ';' (a statement)"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["replacement"] = "if (a) b"; }),
              HasSubstr("replacement begins with 'if' (a statement)"));
  EXPECT_EQ(with([](json& j) {
              j["mutants"][1]["edits"][0]["original"] = "x += 1;";
              j["mutants"][1]["edits"][0]["form"] = "stmt";
            }),
            "accepted");
  EXPECT_EQ(
      with([](json& j) { j["mutants"][1]["edits"][0]["replacement"] = "[] { return 1; }()"; }),
      "accepted");
  EXPECT_EQ(with([](json& j) { j["mutants"][1]["edits"][0]["replacement"] = "iffy(a)"; }),
            "accepted");
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["edits"][0]["original"] = 3; }),
              HasSubstr("mutant 'plan.a': key 'mutants[1].edits[0].original': expected a string, "
                        "got integer 3"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["expect"] = "survives"; }),
              HasSubstr("only identity_* mutants may have expect 'survives'"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["id"] = "identity_x"; }),
              HasSubstr("an identity_* mutant must have expect 'survives'"));
  EXPECT_THAT(with([](json& j) {
                j["mutants"][0]["expect"] = "equivalent";
                j["mutants"][0]["evidence"] = "e";
              }),
              HasSubstr("control_sign_flip must have expect 'killed'"));
  EXPECT_THAT(with([](json& j) { j["mutants"].erase(0); }), HasSubstr("no control_sign_flip"));
  // The id begins with its group's name; the control group holds only the campaign's own ids.
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["id"] = "model.a"; }),
              HasSubstr("mutant 'model.a': id must begin with its group's name ('plan.')"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["id"] = "planx.a"; }),
              HasSubstr("id must begin with its group's name ('plan.')"));
  EXPECT_THAT(with([](json& j) { j["mutants"][0]["group"] = "plan"; }),
              HasSubstr("mutant 'control_sign_flip': id must begin with its group's name"));
  EXPECT_THAT(with([](json& j) { j["mutants"][1]["group"] = "control"; }),
              HasSubstr("the control group holds only control_sign_flip and identity_*"));
}

TEST(Catalogue, NotJsonIsRefusedWithTheFileNameLineAndColumn) {
  try {
    // The text ends after its 11th byte: the parser stops at column 12 of line 1.
    parse_catalogue("{\"schema\": ", "mutants/catalogue.json");
    FAIL() << "accepted";
  } catch (const CatalogueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mutants/catalogue.json:1:12: not valid JSON ("));
  }
}

TEST(Catalogue, MissingFileIsACatalogueError) {
  EXPECT_THROW(load_catalogue("/nonexistent/catalogue.json"), CatalogueError);
}

TEST(Catalogue, DeepNestingIsRefusedBeforeItIsBuilt) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  try {
    parse_catalogue(deep, "deep.json");
    FAIL() << "accepted";
  } catch (const CatalogueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("deep.json: nested deeper than 8 levels"));
  }
}

// The harness groups of issue 19 parse like the modelling ones, and every group's layer is the
// table's: the model's groups are held to 100%, the harness's to 95%, the control to 100%.
TEST(Catalogue, HarnessGroupsAreAcceptedWithTheirLayer) {
  const std::vector<std::pair<std::string, Layer>> want = {
      {"control", Layer::control},    {"instruction_model", Layer::modelling},
      {"plan", Layer::modelling},     {"epilogue", Layer::modelling},
      {"api", Layer::modelling},      {"fast_reference", Layer::modelling},
      {"kernel", Layer::modelling},   {"replay", Layer::harness},
      {"gates", Layer::harness},      {"manifest", Layer::harness},
      {"recordings", Layer::harness}, {"profiles", Layer::harness},
      {"signing", Layer::harness},    {"tiers", Layer::harness}};
  ASSERT_EQ(catalogue_groups().size(), want.size());
  json list = json::array({mutant("control_sign_flip")});
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(catalogue_groups()[i], want[i].first);
    EXPECT_EQ(group_layer(want[i].first), want[i].second) << want[i].first;
    if (want[i].first == "control")
      continue; // control_sign_flip, first in the list
    json m = mutant(want[i].first + ".m");
    m["group"] = want[i].first;
    list.push_back(m);
  }
  const Catalogue c = parse_catalogue(doc(list).dump(), "cat.json");
  ASSERT_EQ(c.mutants.size(), want.size());
  EXPECT_EQ(c.mutants.back().group, "tiers");
  EXPECT_EQ(kill_target_percent(Layer::modelling), 100u);
  EXPECT_EQ(kill_target_percent(Layer::control), 100u);
  EXPECT_EQ(kill_target_percent(Layer::harness), 95u);
  EXPECT_STREQ(layer_name(Layer::harness), "harness");
  EXPECT_THROW(group_layer("misc"), std::invalid_argument);
}
