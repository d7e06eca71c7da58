// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the release report's inputs (the logs of a date folder) through
// reports::assemble_release_report and both renderings, release.md and release.html.
//
// Input: one or more logs separated by "\0LOG\0" (a NUL never occurs in a JSON log), each
// parsed and verified as `report release` does (no signature file: each fails to verify).
// The report is assembled for a fixed HEAD with --allow-other-commit (so that every log is
// rendered) and without it (a refusal, ReleaseRefused, is an answer).
//
// Findings: a crash, a sanitizer report, an exception other than ReleaseRefused (or
// std::bad_alloc); and what a log says becoming report structure: a CR, or a Markdown line
// that is not one of the report's own (headings, list items, table rows, its fixed
// paragraphs), or a table row whose unescaped cell separators differ from its header's, or
// raw "<script" or "<svg " with an attribute in release.html's copied text.

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "mmaemu/reports/canonical_json.hpp"
#include "mmaemu/reports/release_report.hpp"
#include "mmaemu/reports/verify_log.hpp"

namespace {

namespace r = mmaemu::reports;

constexpr std::string_view kSeparator("\0LOG\0", 5);

bool starts(const std::string& line, std::string_view p) {
  return line.compare(0, p.size(), p) == 0;
}

void check_markdown(const std::string& md) {
  std::size_t pos = 0, columns = 0;
  while (pos < md.size()) {
    std::size_t end = md.find('\n', pos);
    if (end == std::string::npos)
      end = md.size();
    const std::string line = md.substr(pos, end - pos);
    pos = end + 1;
    if (line.find('\r') != std::string::npos)
      __builtin_trap();
    if (line.empty())
      continue;
    if (line[0] == '|') {
      std::size_t pipes = 0;
      for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\\') {
          ++i;
          continue;
        }
        pipes += line[i] == '|';
      }
      if (columns == 0 || starts(line, "| ---"))
        columns = pipes;
      if (pipes != columns)
        __builtin_trap();
      continue;
    }
    columns = 0;
    if (!(starts(line, "# mmaemu release sign-off, ") || starts(line, "## ") ||
          starts(line, "- ") || starts(line, "Verdict: ") || starts(line, "Commit: ") ||
          starts(line, "PASS requires") || starts(line, "Logs NOT") ||
          starts(line, "Why not PASS") || starts(line, "The status")))
      __builtin_trap();
  }
}

void check_html(const std::string& html) {
  if (html.find("<script") != std::string::npos || html.find("<svg onload") != std::string::npos ||
      html.find('\r') != std::string::npos)
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const r::TrustedKeys keys; // none: no log verifies, every one is listed with its reason
  try {
    std::vector<r::ReleaseLog> logs;
    std::size_t from = 0;
    for (int n = 0; n < 16; ++n) {
      const auto at = input.find(kSeparator, from);
      const std::string bytes(input.substr(from, at == input.npos ? input.npos : at - from));
      r::ReleaseLog l;
      l.file = "2026-01-02/log" + std::to_string(n) + ".json";
      try {
        l.log = r::parse_json_text(bytes, l.file.string());
      } catch (const std::runtime_error&) {
        l.log = nullptr;
      }
      l.verification = r::verify_log_bytes(bytes, std::nullopt, keys, l.file);
      logs.push_back(std::move(l));
      if (at == input.npos)
        break;
      from = at + kSeparator.size();
    }
    const std::vector<r::ReleaseTier> tiers = {{"T0", "unit", true}, {"T1", "hw_mini", false}};
    for (bool allow : {true, false}) {
      try {
        const auto rep = r::assemble_release_report(logs, "2026-01-02", "2026-01-02", tiers, "keys",
                                                    {"0123456789abcdef", "", allow});
        check_markdown(r::release_markdown(rep));
        check_html(r::release_html(rep));
      } catch (const r::ReleaseRefused&) {
        if (allow)
          __builtin_trap(); // --allow-other-commit never refuses
      }
    }
  } catch (const std::bad_alloc&) {
  }
  return 0;
}
