// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the mutant catalogue parser (mutants::parse_catalogue, behind `mmaemu
// mutants` and tier T4) on arbitrary bytes.
//
// parse_catalogue documents that it throws CatalogueError and nothing else (std::bad_alloc
// aside); anything else escaping, a crash or a sanitizer report is a finding. So is an
// accepted catalogue with an edit whose file could leave the repository, an empty original,
// or a mutant without its control.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "mmaemu/mutants/catalogue.hpp"

namespace {

// Whether a '/'-separated path has a component that leaves or stays at its folder ("..", ".")
// or is empty: written here from the rule, not taken from the parser. A ".." inside a name
// ("preset..cpp") is a name like any other.
bool escapes(const std::string& path) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    const std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..")
      return true;
    if (slash == std::string::npos)
      return false;
    start = slash + 1;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mmaemu::mutants::Catalogue c;
  try {
    c = mmaemu::mutants::parse_catalogue(text, "fuzz/catalogue.json");
  } catch (const mmaemu::mutants::CatalogueError&) {
    return 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
  bool control = c.mutants.empty();
  for (const auto& m : c.mutants) {
    control = control || m.id == "control_sign_flip";
    if (m.edits.empty())
      std::abort();
    for (const auto& e : m.edits) {
      if (e.file.empty() || e.file[0] == '/' || escapes(e.file) || e.original.empty())
        std::abort(); // an edit that could leave the tree, or match nothing, was accepted
    }
  }
  if (!control)
    std::abort();
  return 0;
}
