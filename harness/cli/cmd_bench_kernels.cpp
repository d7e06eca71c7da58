// SPDX-License-Identifier: BSD-2-Clause
// mmaemu bench kernels [--kernels v1,v4,h1,h4] [--shape M,N,K] [--device N] [--warmup-s S]
//                      [--window-s S] [--windows W] [--seed S] [--data gauss40|uniform]
//                      [--allow-nvrtc] [--nvidia-smi PATH|none] [--json PATH]
// The raw CUDA kernels timed with CUDA events after an exactness gate (kernel_bench.hpp,
// docs/backends.md "Kernel benchmark"). Prints a table; progress goes to stderr. Exit 0 when
// the run finished (verdict PASS; the reason names kernels not timed), 1 on an exactness
// mismatch (FAIL) or a driver error (ERROR),
// 2 for bad options, 4 when no CUDA device (or no kernel) is usable: UNSUPPORTED and the reason.

#include <cstdio>
#include <memory>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/kernels/kernel_bench.hpp"
#include "mmaemu/kernels/kernel_spec.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct BenchKernelsArgs {
  kernels::BenchOptions options;
  std::vector<std::int64_t> shape;
  std::string device = "0";
  JsonOption json;
};

int run_bench_kernels(BenchKernelsArgs& args) {
  kernels::BenchOptions& o = args.options;
  if (!args.shape.empty()) {
    if (args.shape.size() != 3) {
      error_line("--shape: give M,N,K (three numbers), not " + std::to_string(args.shape.size()));
      return kUsage;
    }
    o.M = args.shape[0];
    o.N = args.shape[1];
    o.K = args.shape[2];
  }
  try {
    o.device = parse_cuda_device("--device", args.device);
    args.json.check(); // before the run
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  if (const std::string absent = absent_kernel_message(o.kernels); !absent.empty()) {
    error_line(absent);
    return kUnavailable;
  }
  o.progress = [](const std::string& line) {
    std::fprintf(stderr, "bench kernels: %s\n", support::printable(line, 600).c_str());
    std::fflush(stderr);
  };
  kernels::BenchReport report;
  try {
    report = kernels::run_kernel_bench(o);
  } catch (const MmaemuError& e) {
    error_line(std::string("bench kernels: ") + e.class_name() + ": " +
               support::printable(e.what(), 600));
    return kUsage;
  }
  if (report.verdict == outcome::Outcome::unsupported)
    std::printf("UNSUPPORTED: %s\n", support::printable(report.reason, 600).c_str());
  else
    std::fputs(kernels::bench_report_table(report).c_str(), stdout);
  std::fflush(stdout);
  if (args.json.given()) {
    try {
      args.json.write_text(kernels::bench_report_json(report));
    } catch (const std::exception& e) {
      error_line(e.what());
      return report.exit_code != kOk ? report.exit_code : kUsage;
    }
  }
  return report.exit_code;
}

} // namespace

void add_bench_kernels(CLI::App& bench, int& exit_code) {
  auto args = std::make_shared<BenchKernelsArgs>();
  kernels::BenchOptions& o = args->options;
  CLI::App* cmd = bench.add_subcommand(
      "kernels", "Time the CUDA kernels with CUDA events after an exactness gate");
  cmd->add_option("--kernels", o.kernels,
                  "kernels to time (default: all of " + kernels::kernel_names_text() + ")")
      ->delimiter(',');
  cmd->add_option("--shape", args->shape, "M,N,K (default: the Evo 2 1B projection 2048,5760,1920)")
      ->delimiter(',');
  cmd->add_option("--device", args->device, "CUDA device: cuda, cuda:N or N")
      ->capture_default_str();
  cmd->add_option("--warmup-s", o.warmup_s, "warm-up seconds per kernel")->capture_default_str();
  cmd->add_option("--window-s", o.window_s, "seconds per kernel and window")->capture_default_str();
  cmd->add_option("--windows", o.windows, "interleaved windows; the median is reported")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the operands")->capture_default_str();
  cmd->add_option("--data", o.data, "operand codes: gauss40 or uniform")->capture_default_str();
  cmd->add_flag("--allow-nvrtc", o.allow_nvrtc,
                "time kernels loaded through NVRTC too (marked nvrtc; acceptance needs a fatbin)");
  cmd->add_option(
      "--nvidia-smi", o.nvidia_smi,
      "nvidia-smi to sample clocks with (default: PATH, then WSL's; none: no sampling)");
  args->json.add(*cmd, "write the report");
  cmd->callback([args, &exit_code] { exit_code = run_bench_kernels(*args); });
}

} // namespace mmaemu::cli
