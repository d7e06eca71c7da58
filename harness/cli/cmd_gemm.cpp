// SPDX-License-Identifier: BSD-2-Clause
// mmaemu gemm: runs a scaled_mm on operands generated from a seed or read from a gemm case of
// a recording, prints the result's sha256, and optionally writes operands and result.
//
//   mmaemu gemm --M 64 --N 64 --K 256 [--seed 1] [call options] [--threads T]
//               [--from FILE.h5 [--case ID]] [--write OUT.h5] [--json PATH]

#include <chrono>
#include <cstdio>
#include <new>
#include <nlohmann/json.hpp>
#include <random>

#include "call_args.hpp"
#include "commands.hpp"
#include "mmaemu/emulator/block_fma.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct GemmArgs {
  CallArgs call;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  std::string from, case_id, write;
  JsonOption json;
  bool sizes_given = false; // --M, --N and --K all given
  bool any_size = false;    // one of them given
};

constexpr unsigned kMaxThreads = 4096;

// A size of a recorded case, within the emulator's limit per dimension.
std::int64_t recorded_dim(std::uint64_t v, const char* name, const std::string& where) {
  if (v > static_cast<std::uint64_t>(kMaxGemmDim)) {
    throw ValueError(where + ": " + name + " = " + std::to_string(v) +
                     " is over the emulator's limit of " + std::to_string(kMaxGemmDim) +
                     " (2^31-1)");
  }
  return static_cast<std::int64_t>(v);
}

// Uniformly random finite codes of an FP8 format.
Tensor random_codes(Format f, std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  const auto& table = model::fp8_operand_table(f);
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(rows * cols));
  for (auto& b : bits) {
    std::uint8_t c;
    do
      c = static_cast<std::uint8_t>(rng());
    while (table[c].cls > static_cast<std::uint8_t>(ValueClass::finite));
    b = c;
  }
  return Tensor::from_bits(f, {rows, cols}, bits);
}

std::string result_sha256(const Tensor& t) {
  const int es = t.element_size();
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(t.numel() * es));
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const std::uint32_t v = t.bits_flat(i);
    for (int k = 0; k < es; ++k)
      bytes.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  return support::sha256_hex(bytes.data(), bytes.size());
}

int run_gemm(GemmArgs args) {
  // Usage first: sizes from the command line or from a recording, never neither or both.
  if (args.from.empty() && !args.sizes_given) {
    error_line("gemm: give --M, --N and --K (or --from FILE.h5)");
    return kUsage;
  }
  if (!args.from.empty() && args.any_size) {
    error_line("gemm: --from takes M, N and K from the recording; leave out --M, --N and --K");
    return kUsage;
  }
  if (args.threads > kMaxThreads) {
    error_line("--threads: " + std::to_string(args.threads) + " is over " +
               std::to_string(kMaxThreads));
    return kUsage;
  }
  // Every output is checked before any work: none may be a special file, a symlink to one,
  // the input recording, or the other output.
  std::vector<std::filesystem::path> inputs;
  if (!args.from.empty())
    inputs.push_back(args.from);
  try {
    if (!args.from.empty()) {
      support::check_input_file(args.from, support::kMaxRecordingBytes, "recording");
    }
    if (!args.write.empty())
      check_output_option("--write", args.write, inputs);
    if (args.json.given() && args.json.path() == args.write) {
      error_line("--json and --write name the same file '" + shown(args.write) + "'");
      return kUsage;
    }
    auto in = inputs;
    if (!args.write.empty())
      in.push_back(args.write);
    args.json.check(in);
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  }
  Tensor a_rows, b_rows;
  std::string source;
  try {
    if (args.from.empty())
      check_gemm_size(args.call.M, args.call.N, args.call.K);
    if (!args.from.empty()) {
      const recordings::Recording rec = recordings::read_recording(args.from);
      const recordings::GemmCase* found = nullptr;
      for (const auto& batch : rec.gemm) {
        for (const auto& c : batch.cases) {
          if (!found && (args.case_id.empty() || c.id == args.case_id))
            found = &c;
        }
      }
      if (!found) {
        error_line(shown(args.from) + ": no gemm case" +
                   (args.case_id.empty() ? "" : " with id '" + shown(args.case_id) + "'"));
        return kUsage;
      }
      const std::string where = shown(args.from) + ": gemm case '" + shown(found->id) + "'";
      args.call.M = recorded_dim(found->M, "M", where);
      args.call.N = recorded_dim(found->N, "N", where);
      args.call.K = recorded_dim(found->K, "K", where);
      try {
        check_gemm_size(args.call.M, args.call.N, args.call.K);
      } catch (const ValueError& e) {
        throw ValueError(where + ": " + e.what());
      }
      args.call.a = format_name(found->fmt_a);
      args.call.b = format_name(found->fmt_b);
      std::vector<std::uint32_t> a(found->a.begin(), found->a.end()),
          b(found->b.begin(), found->b.end());
      a_rows = Tensor::from_bits(found->fmt_a, {args.call.M, args.call.K}, a);
      b_rows = Tensor::from_bits(found->fmt_b, {args.call.N, args.call.K}, b);
      source = args.from + " case " + found->id;
    } else {
      std::mt19937_64 rng(args.seed);
      a_rows = random_codes(parse_dtype(args.call.a, "--a"), args.call.M, args.call.K, rng);
      b_rows = random_codes(parse_dtype(args.call.b, "--b"), args.call.N, args.call.K, rng);
      source = "uniform random finite codes, seed " + std::to_string(args.seed);
    }
  } catch (const recordings::RecordingError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const MmaemuError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const std::bad_alloc&) {
    error_line(
        "gemm: out of memory for the operands (M*K = " + std::to_string(args.call.M * args.call.K) +
        ", N*K = " + std::to_string(args.call.N * args.call.K) + " codes)");
    return kUsage;
  }
  ScaledMmCall call;
  try {
    call = make_call(args.call, &a_rows, &b_rows);
  } catch (const BackendUnavailableError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUnavailable;
  } catch (const MmaemuError& e) {
    error_line(e.what());
    return kUsage;
  }
  call.threads = args.threads;
  std::string backend_used;
  call.backend_used = &backend_used;
  Tensor result;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    result = scaled_mm(call);
  } catch (const BackendUnavailableError& e) {
    // The backend or device asked for is not here: unavailable (4), not a call that raises.
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUnavailable;
  } catch (const SplitKUnknownError& e) {
    error_line(std::string(e.class_name()) + ": " + splitk_unknown_message(e.what()));
    return kFailed;
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kFailed;
  } catch (const std::bad_alloc&) {
    error_line("gemm: out of memory for M*N = " + std::to_string(args.call.M * args.call.N) +
               " outputs");
    return kUsage;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string sha = result_sha256(result);
  std::printf("operands  %s\n", support::printable(source, 4096).c_str());
  std::printf("result    %s[%lld, %lld]\n", spec(result.dtype()).torch_name,
              static_cast<long long>(result.size(0)), static_cast<long long>(result.size(1)));
  std::printf("backend   %s\n", backend_used.empty() ? "-" : backend_used.c_str());
  std::printf("seconds   %.3f\n", seconds);
  std::printf("sha256    %s\n", sha.c_str());
  try {
    if (!args.write.empty()) {
      recordings::Recording rec;
      rec.attrs["created_by"] = "mmaemu gemm";
      rec.attrs["computed_by"] = "mmaemu " +
                                 (backend_used.empty() ? std::string("reference") : backend_used) +
                                 " backend (not a hardware recording)";
      recordings::GemmBatch batch;
      batch.name = "mmaemu_gemm";
      recordings::GemmCase c;
      c.id = "mmaemu_gemm/0";
      c.profile = call.profile.empty() ? get_profile_or_default().name : call.profile;
      c.fmt_a = a_rows.dtype();
      c.fmt_b = b_rows.dtype();
      c.out_dtype = result.dtype();
      c.fast = call.use_fast_accum;
      c.scale_a_bits = call.scale_a.bits_flat(0);
      c.scale_b_bits = call.scale_b.bits_flat(0);
      if (call.scale_result)
        c.scale_result_bits = call.scale_result->bits_flat(0);
      c.splitk = args.call.splitk;
      c.M = static_cast<std::uint64_t>(args.call.M);
      c.N = static_cast<std::uint64_t>(args.call.N);
      c.K = static_cast<std::uint64_t>(args.call.K);
      for (auto v : a_rows.to_bits())
        c.a.push_back(static_cast<std::uint8_t>(v));
      for (auto v : b_rows.to_bits())
        c.b.push_back(static_cast<std::uint8_t>(v));
      c.expect = result.to_bits();
      batch.cases.push_back(std::move(c));
      rec.gemm.push_back(std::move(batch));
      support::check_output_path(args.write, inputs);
      recordings::write_recording(args.write, rec);
      std::printf("written   %s\n", shown(args.write).c_str());
    }
    if (args.json.given()) {
      nlohmann::json j = {{"operands", source},
                          {"dtype", spec(result.dtype()).torch_name},
                          {"shape", result.shape()},
                          {"use_fast_accum", call.use_fast_accum},
                          {"profile", get_profile_or_default(call.profile).name},
                          {"splitk", args.call.splitk},
                          {"backend", backend_used},
                          {"seconds", seconds},
                          {"sha256", sha}};
      auto in = inputs;
      if (!args.write.empty())
        in.push_back(args.write);
      args.json.write(j, in);
    }
  } catch (const std::exception& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_gemm(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GemmArgs>();
  CLI::App* cmd =
      app.add_subcommand("gemm", "Run a scaled_mm (the CPU reference unless --backend or --device "
                                 "says otherwise) and hash the result");
  cmd->add_option("--M", args->call.M, "rows of input");
  cmd->add_option("--N", args->call.N, "columns of mat2");
  cmd->add_option("--K", args->call.K, "inner dimension");
  add_call_options(*cmd, args->call);
  cmd->add_option("--seed", args->seed, "seed of the generated operands")->capture_default_str();
  cmd->add_option("--threads", args->threads, "worker threads (0: all cores)")
      ->capture_default_str();
  cmd->add_option("--from", args->from, "take the operands of a gemm case of this recording");
  cmd->add_option("--case", args->case_id, "the case id in --from (default: the first)");
  cmd->add_option("--write", args->write, "write operands and result as a gemm recording (.h5)");
  args->json.add(*cmd, "write the summary");
  cmd->callback([cmd, args, &exit_code] {
    const auto given = [cmd](const char* name) { return cmd->get_option(name)->count() > 0; };
    args->sizes_given = given("--M") && given("--N") && given("--K");
    args->any_size = given("--M") || given("--N") || given("--K");
    exit_code = run_gemm(*args);
  });
}

} // namespace mmaemu::cli
