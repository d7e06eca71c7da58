// SPDX-License-Identifier: BSD-2-Clause
// mmaemu: the command line of the emulator and its harness.

#include <iostream>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/registry.hpp"

namespace mmaemu::cli {

// One line whatever the message holds: the callers escape what they echo (support::printable),
// this is the net under them: control and non-ASCII bytes as \xNN (backslashes kept, so that
// text escaped before is not escaped twice), at most kMaxErrorLine bytes.
void error_line(const std::string& message) {
  constexpr std::size_t kMaxErrorLine = 2048;
  std::string line;
  std::size_t i = 0;
  for (; i < message.size() && line.size() < kMaxErrorLine; ++i) {
    const auto c = static_cast<unsigned char>(message[i]);
    if (c < 0x20 || c >= 0x7F) {
      static const char* hex = "0123456789abcdef";
      line += "\\x";
      line += hex[c >> 4];
      line += hex[c & 15];
    } else {
      line += static_cast<char>(c);
    }
  }
  if (i < message.size())
    line += "...(" + std::to_string(message.size()) + " bytes)";
  std::cerr << "mmaemu: " << line << '\n';
}

} // namespace mmaemu::cli

int main(int argc, char** argv) {
  using namespace mmaemu::cli;
  CLI::App app{"mmaemu: bit-exact FP8 tensor-core GEMM emulator and validation harness"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mmaemu ") + MMAEMU_VERSION);
  int exit_code = kOk;
  // Backend selection may use the CUDA kernels; installing the selector touches no driver.
  mmaemu::kernels::install_cuda_backend();
  add_info(app, exit_code);
  add_dot(app, exit_code);
  add_explain(app, exit_code);
  add_gemm(app, exit_code);
  add_bench(app, exit_code);
  add_recordings(app, exit_code);
  add_replay(app, exit_code);
  add_tier(app, exit_code);
  add_report(app, exit_code);
  add_selftest(app, exit_code);
  add_fatbin(app, exit_code);
  add_mutants(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const mmaemu::MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUsage;
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return exit_code;
}
