// SPDX-License-Identifier: BSD-2-Clause
// mmaemu: the command line of the emulator and its harness.

#include "commands.hpp"
#include "mmaemu/kernels/registry.hpp"
#include "mmaemu/kernels/splitk_live_query.hpp"

int main(int argc, char** argv) {
  using namespace mmaemu::cli;
  CLI::App app{"mmaemu: bit-exact FP8 tensor-core GEMM emulator and validation harness"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mmaemu ") + MMAEMU_VERSION);
  int exit_code = kOk;
  // Backend selection may use the CUDA kernels, and splitk="auto" may ask the device's
  // cuBLASLt; installing either opens nothing (the driver and cuBLASLt are opened when a call
  // first needs them).
  mmaemu::kernels::install_cuda_backend();
  mmaemu::kernels::install_splitk_live_query();
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
  add_cluster(app, exit_code);
  add_evidence(app, exit_code);
  return run_app(app, std::vector<std::string>(argv, argv + argc), exit_code);
}
