// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The evidence registry (emulator/data/evidence.json) and the status of every modelling
// decision computed from it. A status is never typed: it follows from the evidence entries,
// the profile's data and the latest committed T4 log (its extract emulator/data/evidence_t4.json):
//   confirmed by <recording>    every mutant of the decision is killed by T1 (the replay of the
//                               committed hardware recordings), a unit test not counting;
//   consistent with <source>    else, a published measurement of the profile's platform and
//                               accumulation mode states the profile's choice;
//   contradicted by <source>    such a measurement states another choice (a shipped profile
//                               must never be left so: a test checks it);
//   unverified                  otherwise.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/profile.hpp"

namespace mmaemu::evidence {

enum class Level { instruction, gemm, api };
enum class Status { confirmed, consistent, contradicted, unverified };
enum class Mode { fast, slow }; // use_fast_accum True / False

const char* level_name(Level l);   // "instruction", "GEMM", "API"
const char* status_name(Status s); // "confirmed", "consistent", "contradicted", "unverified"
const char* mode_name(Mode m);     // "use_fast_accum=True" / "use_fast_accum=False"

struct Source {
  std::string id;
  std::string kind; // "hardware_recording" or "published_measurement"
  std::string short_name;
  std::string file;        // recording: its path in the repository
  std::string case_family; // recording: what its cases are
  std::string reference;   // measurement: where it is published
  std::string gpu, architecture, cublaslt;
  std::string measured, size, covered, not_covered;
  std::vector<Mode> modes;                     // measurement: the accumulation modes it measured
  std::map<std::string, std::string> profiles; // measurement: profile -> why it is covered
};

struct EvidenceRef {
  std::string source;
  std::string states; // a measurement's choice (compared with the profile's), or ""
  std::string shows;  // what it shows, in words
};

struct Decision {
  std::string id;
  Level level = Level::instruction;
  std::vector<std::string> presets; // instruction level: the presets it belongs to
  std::string formats = "any";      // "any", "e5m2" (an operand is E5M2), "mixed" (a != b)
  std::vector<Mode> modes;          // GEMM level: the accumulation modes it applies to
  std::string when = "always";      // GEMM level: "always", "split" (S > 1), "scale_result"
  std::string title;
  std::string choice;  // the shipped choice in words ("" when the profile's data gives it)
  std::string shipped; // the shipped choice as a measurement would state it ("": from data)
  std::vector<std::string> mutants;
  std::vector<EvidenceRef> evidence;
  std::string note;
};

struct ProfileChoice {
  std::vector<std::string> profiles;
  std::string values; // "measured", "adopted", "kept", "none"
  std::string why;
};

struct Registry {
  std::vector<Source> sources;
  std::vector<ProfileChoice> profile_choices;
  std::vector<Decision> decisions;
  std::map<std::string, std::string> not_decisions; // mutant group -> why it is no decision

  const Source* source(const std::string& id) const;
  const Decision* decision(const std::string& id) const;
  const ProfileChoice* choice_of(const std::string& profile) const;
};

// How each mutant of the latest committed T4 log ended.
struct MutantRun {
  std::string outcome; // "killed", "survived", "crash", "timeout", "error"
  std::string by;      // the first failing test: "T1" or a test name; "" when none
};

struct T4Runs {
  std::string log;          // docs/validation_logs/<date>/<file>, or "" when there is none
  std::string log_sha256;   // of the log file
  std::string finished_utc; // the log's durations.finished_utc
  std::string commit;       // the log's git.commit
  std::string catalogue_sha256;
  std::map<std::string, MutantRun> mutants;
};

// The registry and T4 extract compiled into the library, and their JSON texts.
const Registry& registry();
const T4Runs& committed_t4();
const char* registry_json_text();
const char* t4_json_text();

// Parsers (ValueError naming the field); t4_from_log reads a T4 validation log.
Registry parse_registry(const std::string& json_text);
T4Runs parse_t4(const std::string& json_text);
T4Runs t4_from_log(const std::string& log_text, const std::string& log_path,
                   const std::string& log_sha256);
std::string t4_json(const T4Runs& runs); // the text of evidence_t4.json

// The verdict on one decision, on a profile and (GEMM level) an accumulation mode.
struct Verdict {
  Status status = Status::unverified;
  std::string text;                 // "confirmed by Ada_E4M3.h5, Ada_E5M2.h5", "unverified", ...
  std::vector<std::string> sources; // the ids behind the status
  std::string choice;               // the choice on this profile, in words
  std::string why;                  // what the status rests on, or what is missing
};

// The choice of a decision on a profile: in words, and as a measurement would state it.
std::string choice_text(const Decision& d, const Profile& p);
std::string shipped_token(const Decision& d, const Profile& p);

// Whether a decision applies on a profile (and mode): the preset's decisions, the modes the
// profile characterises (no slow mode without a slow block; no split without split schemes).
bool applies(const Decision& d, const Profile& p, std::optional<Mode> mode);

Verdict judge(const Decision& d, const Profile& p, std::optional<Mode> mode,
              const Registry& reg = registry(), const T4Runs& t4 = committed_t4());

// One call's decisions and their verdicts.
struct CallShape {
  Format a = Format::e4m3, b = Format::e4m3, out = Format::bf16;
  bool fast = false;
  std::optional<int> S; // the split, when it is known
  bool scale_result = false;
};

struct DecisionUse {
  const Decision* decision = nullptr;
  Verdict verdict;
};

std::vector<DecisionUse> decisions_for_call(const Profile& p, const CallShape& call,
                                            const Registry& reg = registry(),
                                            const T4Runs& t4 = committed_t4());

// The counts of a list of verdicts at one level, and their one-line summary:
// "GEMM level: 6 consistent with bitequiv (H100, cuBLASLt 13.1.1), 2 unverified".
struct Counts {
  std::size_t confirmed = 0, consistent = 0, contradicted = 0, unverified = 0;
  std::vector<std::string> confirmed_by, consistent_with, contradicted_by; // source short names
  std::size_t total() const { return confirmed + consistent + contradicted + unverified; }
};
Counts count(const std::vector<DecisionUse>& uses, Level level, const Registry& reg = registry());
std::string summary_line(Level level, const Counts& c);

// Every decision of a profile at every level (GEMM level: the given mode), as the tier logs
// and the release report count them.
std::vector<DecisionUse> profile_decisions(const Profile& p, Mode mode,
                                           const Registry& reg = registry(),
                                           const T4Runs& t4 = committed_t4());

// Every shipped profile's counts, per accumulation mode and level: the field "evidence" of the
// tier logs, as JSON text: {"t4_log": LOG, "profiles": {NAME: {"use_fast_accum=False":
// {"instruction": {"confirmed": n, "consistent": n, "contradicted": n, "unverified": n,
// "summary": LINE}, "GEMM": {...}, "API": {...}}, "use_fast_accum=True": {...}}}}.
std::string counts_json_text();

// The same as one line per profile and mode (the release report):
// "h100-sxm, use_fast_accum=False: instruction level: ...; GEMM level: ...; API level: ...".
std::vector<std::string> counts_lines();

} // namespace mmaemu::evidence
