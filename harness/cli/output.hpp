// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The command line's outputs, one rule for every subcommand (docs/api.md, "Conventions"):
//   - `--json PATH` everywhere, `-` meaning stdout; the text for a person then goes to stderr,
//     so that stdout holds only the JSON (file descriptor 1 is pointed at stderr from the
//     check until the JSON is written: every line a subcommand prints, also from a library,
//     goes there without each print naming its stream);
//   - every output path named on the command line (--json, --write, --out, --junit) is checked
//     by check_output_option before any work. A further rule on output paths belongs there,
//     and then holds for every subcommand at once.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mmaemu::cli {

// An output path given to `option`, checked before any work: its folder must exist, and it may
// not be a device, FIFO or folder, a symlink to one, or one of `inputs` or of
// standard_inputs() (read_inputs.hpp: keys, tier files, recordings, the catalogue), also under
// another name (support::check_output_path). Throws support::FileError; the message starts with the
// option.
void check_output_option(const std::string& option, const std::filesystem::path& path,
                         const std::vector<std::filesystem::path>& inputs = {});

// The `--json PATH` option of one subcommand.
class JsonOption {
public:
  // Adds --json PATH to `cmd`; `what` says what the JSON holds.
  CLI::Option* add(CLI::App& cmd, const std::string& what);
  bool given() const { return !path_.empty(); }
  bool to_stdout() const { return path_ == "-"; }
  const std::string& path() const { return path_; }
  // check_output_option("--json", ...) for a file. For "-": from here on, what the process
  // prints to stdout goes to stderr, until write() or restore_stdout(). Call it before any
  // output and any work.
  void check(const std::vector<std::filesystem::path>& inputs = {}) const;
  // Writes `j` (two-space indent, one trailing newline; invalid UTF-8 replaced, never thrown
  // on) to the real stdout or, atomically, to the file. Nothing when not given. Throws
  // support::FileError.
  void write(const nlohmann::json& j, const std::vector<std::filesystem::path>& inputs = {}) const;
  // The same with text that is JSON already.
  void write_text(const std::string& text,
                  const std::vector<std::filesystem::path>& inputs = {}) const;

private:
  std::string path_;
};

// JSON text for people and files: two-space indent, invalid UTF-8 replaced.
std::string json_text(const nlohmann::json& j);

// Points stdout back at the real stdout if a `--json -` had moved it (run_app calls it last,
// so that an error before the JSON was written leaves nothing moved).
void restore_stdout();

} // namespace mmaemu::cli
