// SPDX-License-Identifier: BSD-2-Clause
#include "output.hpp"

#include <unistd.h>

#include <iostream>

#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "read_inputs.hpp"

namespace mmaemu::cli {

namespace fs = std::filesystem;

namespace {

int g_real_stdout = -1; // the real stdout while fd 1 points at stderr, else -1

void flush_all() {
  std::cout.flush();
  std::fflush(stdout);
  std::cerr.flush();
  std::fflush(stderr);
}

void stdout_to_stderr() {
  if (g_real_stdout >= 0)
    return;
  flush_all();
  g_real_stdout = ::dup(STDOUT_FILENO);
  if (g_real_stdout < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw support::FileError("--json -: stdout cannot be set aside for the JSON");
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      throw support::FileError("--json -: stdout cannot be written");
    done += static_cast<std::size_t>(n);
  }
}

} // namespace

void restore_stdout() {
  if (g_real_stdout < 0)
    return;
  flush_all();
  ::dup2(g_real_stdout, STDOUT_FILENO);
  ::close(g_real_stdout);
  g_real_stdout = -1;
}

void check_output_option(const std::string& option, const fs::path& path,
                         const std::vector<fs::path>& inputs) {
  if (path.empty())
    throw support::FileError(option + ": the file name is empty");
  const fs::path parent = fs::absolute(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    throw support::FileError(option + ": '" + support::printable(path.string(), 256) +
                             "': its folder does not exist");
  }
  try {
    support::check_output_path(path, joined(inputs, standard_inputs()));
  } catch (const support::FileError& e) {
    const std::string what = e.what();
    // The messages of check_output_path name the file; say which option gave it.
    throw support::FileError(what.rfind(option, 0) == 0 ? what : option + ": " + what);
  }
}

CLI::Option* JsonOption::add(CLI::App& cmd, const std::string& what) {
  return cmd.add_option("--json", path_, what + " as JSON to PATH ('-': stdout)")
      ->type_name("PATH");
}

void JsonOption::check(const std::vector<fs::path>& inputs) const {
  if (!given())
    return;
  if (to_stdout())
    stdout_to_stderr();
  else
    check_output_option("--json", path_, inputs);
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonOption::write(const nlohmann::json& j, const std::vector<fs::path>& inputs) const {
  if (given())
    write_text(json_text(j), inputs);
}

void JsonOption::write_text(const std::string& text, const std::vector<fs::path>& inputs) const {
  if (!given())
    return;
  const std::string body = text.empty() || text.back() != '\n' ? text + "\n" : text;
  if (to_stdout()) {
    flush_all();
    write_all(g_real_stdout >= 0 ? g_real_stdout : STDOUT_FILENO, body);
    return;
  }
  try {
    support::write_file_atomic(path_, body, 0644, joined(inputs, standard_inputs()));
  } catch (const support::FileError& e) {
    const std::string what = e.what();
    throw support::FileError(what.rfind("--json", 0) == 0 ? what : "--json: " + what);
  }
}

} // namespace mmaemu::cli
