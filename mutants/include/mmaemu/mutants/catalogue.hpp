// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The mutant catalogue (mutants/catalogue.json, format mmaemu-mutants/1, docs/testing.md): each
// mutant is one modelling decision flipped by exact source rewrites, with the tier that must
// kill it and what its run is expected to show.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace mmaemu::mutants {

inline constexpr const char* kCatalogueFormat = "mmaemu-mutants/1";

// A catalogue that cannot be read or breaks the format; the message names the file, the mutant
// and the key.
class CatalogueError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// What a mutant's run must show.
enum class Expect {
  killed,     // some test of its tier fails
  survives,   // identity_*: the injection itself changes nothing
  equivalent, // unobservable by construction; `evidence` says why
};

// How the schema build (several mutants in one build, chosen at run time) wraps an edit:
// expr: `original` and `replacement` are C++ expressions; stmt: sequences of statements.
enum class Form { expr, stmt };

struct Edit {
  std::string file; // relative to the repository root, '/'-separated, no "..", no leading '/'
  std::string original;
  std::string replacement;
  Form form = Form::expr;
};

struct Mutant {
  std::string id;    // "<group>.<name>" or identity_* / control_sign_flip: [a-z0-9_.]
  std::string group; // one of catalogue_groups()
  std::string description;
  std::string source; // where the decision comes from (a label in the report, never read)
  std::string tier;   // "cpu" or "gpu"
  Expect expect = Expect::killed;
  std::string evidence; // required for equivalent and survives
  std::vector<Edit> edits;
};

struct Catalogue {
  std::filesystem::path file;
  std::vector<Mutant> mutants;
};

const char* expect_name(Expect e);
const char* form_name(Form f);

// The layer a group belongs to: what its mutants edit, and so the kill target its score is held
// to (kill_target_percent).
enum class Layer {
  control,   // identity_* and control_sign_flip: the injection itself
  modelling, // the modelling decisions (instruction model, plan, epilogue, API, fast paths,
             // kernels)
  harness,   // the code that judges and records them (replay, gates, manifest, recordings,
             // profiles, signing, tiers)
};

const char* layer_name(Layer l);

// The least share of a group's non-equivalent mutants that must be killed, in percent: 100 for
// the control and modelling layers, 95 for the harness layer (docs/testing.md, "Mutation score").
unsigned kill_target_percent(Layer l);

struct GroupInfo {
  std::string name;
  Layer layer;
};

// The groups a mutant may name, with their layers, in report order.
const std::vector<GroupInfo>& catalogue_group_info();

// Their names, in the same order.
const std::vector<std::string>& catalogue_groups();

// The layer of a group of catalogue_groups(); std::invalid_argument for another name.
Layer group_layer(const std::string& group);

// Parses catalogue text strictly: unknown or missing keys, wrong types, duplicate ids, a bad
// id, group, tier, expect or form, an edit whose original is empty or equal to its replacement
// (except identity_* mutants, which must keep the behaviour), a file path that leaves the
// tree, an equivalent or survives mutant without evidence: CatalogueError naming `name`.
Catalogue parse_catalogue(const std::string& text, const std::string& name);

// Reads and parses a catalogue file (at most 4 MiB, a regular file).
Catalogue load_catalogue(const std::filesystem::path& path);

} // namespace mmaemu::mutants
