// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/mutants/schema.hpp"

#include <algorithm>

#include "mmaemu/mutants/rewriter.hpp"
#include "mmaemu/support/input_file.hpp"

namespace mmaemu::mutants {

namespace fs = std::filesystem;

namespace {

bool is_kernel_source(const std::string& file) {
  auto ends = [&](const char* s) {
    const std::string x = s;
    return file.size() >= x.size() && file.compare(file.size() - x.size(), x.size(), x) == 0;
  };
  return ends(".cu") || ends(".cuh");
}

// Defines MMAEMU_MUTANT_ON once per translation unit. Kernel sources read the variable only when
// compiled by the host shim (MMAEMU_HOST_SHIM); NVRTC and nvcc device code see no mutant.
std::string prologue(const std::string& file) {
  const std::string host_guard =
      is_kernel_source(file) ? "defined(MMAEMU_HOST_SHIM)" : "!defined(__CUDACC_RTC__)";
  return "#ifndef MMAEMU_MUTANT_ON /* mutant schema (mutants/): " + std::string(kSchemaEnv) +
         " selects one */\n"
         "#if " +
         host_guard +
         "\n"
         "#include <cstdlib>\n"
         "static const int mmaemu_mutant_schema_ = [] {\n"
         "  const char* v = std::getenv(\"" +
         kSchemaEnv +
         "\");\n"
         "  return v ? std::atoi(v) : 0;\n"
         "}();\n"
         "#define MMAEMU_MUTANT_ON(n) (mmaemu_mutant_schema_ == (n))\n"
         "#else\n"
         "#define MMAEMU_MUTANT_ON(n) false\n"
         "#endif\n"
         "#endif\n";
}

// Where the prologue goes: after a leading SPDX comment line, else at the top.
std::size_t prologue_at(const std::string& text) {
  if (text.rfind("//", 0) == 0 && text.find("SPDX-License-Identifier") < text.find('\n')) {
    const std::size_t nl = text.find('\n');
    return nl == std::string::npos ? text.size() : nl + 1;
  }
  return 0;
}

} // namespace

std::string schema_text(const std::string& text,
                        const std::vector<std::pair<int, const Edit*>>& edits,
                        const std::string& file) {
  struct Site {
    std::size_t at, len;
    Form form;
    std::vector<std::pair<int, const Edit*>> alts; // chained selections, in mutant order
  };
  std::vector<Site> sites;
  for (const auto& edit : edits) {
    const int n = edit.first;
    const Edit* e = edit.second;
    const std::size_t at = find_once(text, e->original, "mutant #" + std::to_string(n), file);
    const std::size_t len = e->original.size();
    auto same = std::find_if(sites.begin(), sites.end(),
                             [at, len](const Site& s) { return s.at == at && s.len == len; });
    if (same != sites.end()) {
      if (same->form != e->form)
        throw RewriteError(file + ": two mutants edit the same original with different forms");
      same->alts.push_back({n, e});
    } else {
      sites.push_back({at, e->original.size(), e->form, {{n, e}}});
    }
  }
  std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) { return a.at < b.at; });
  for (std::size_t i = 1; i < sites.size(); ++i) {
    if (sites[i].at < sites[i - 1].at + sites[i - 1].len) {
      throw RewriteError(file + ": the originals of mutants #" +
                         std::to_string(sites[i - 1].alts[0].first) + " and #" +
                         std::to_string(sites[i].alts[0].first) +
                         " overlap without being equal (the schema cannot select between them)");
    }
  }
  std::string out = text;
  for (auto it = sites.rbegin(); it != sites.rend(); ++it) {
    const std::string original = text.substr(it->at, it->len);
    std::string code;
    if (it->form == Form::expr) {
      code = "(";
      for (const auto& [n, e] : it->alts)
        code += "MMAEMU_MUTANT_ON(" + std::to_string(n) + ") ? (" + e->replacement + ") : ";
      code += "(" + original + "))";
    } else {
      // One compound statement, so that it stands wherever the original statement stood.
      code = "{ ";
      for (const auto& [n, e] : it->alts)
        code +=
            "if (MMAEMU_MUTANT_ON(" + std::to_string(n) + ")) {\n" + e->replacement + "\n} else ";
      code += "{\n" + original + "\n} }";
    }
    out.replace(it->at, it->len, code);
  }
  out.insert(prologue_at(out), prologue(file));
  return out;
}

Schema make_schema(const fs::path& root, const std::vector<const Mutant*>& mutants) {
  Schema out;
  std::map<std::string, std::vector<std::pair<int, const Edit*>>> by_file;
  int n = 0;
  for (const Mutant* m : mutants) {
    out.numbers[m->id] = ++n;
    for (const auto& e : m->edits)
      by_file[e.file].push_back({n, &e});
  }
  for (const auto& [file, edits] : by_file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(root / file, ec)))
      throw RewriteError(file + ": file missing (or not a regular file) under " + root.string());
    std::string text;
    try {
      text = support::read_input_file(root / file, 16u << 20, "mutated source");
    } catch (const support::FileError& e) {
      throw RewriteError(file + ": " + e.what());
    }
    out.files[file] = schema_text(text, edits, file);
  }
  return out;
}

} // namespace mmaemu::mutants
