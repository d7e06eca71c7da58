// SPDX-License-Identifier: BSD-2-Clause
// mmaemu recordings import-public SET_DIR --out FILE.h5 [--preset NAME] [--json PATH]
// mmaemu recordings show FILE.h5 [--json PATH]
// mmaemu recordings fill FILE.h5 --json PATH [--digest-over N] (the reference's outputs for the
// recorder's fake device, tools/h200/record.py --fake-device, and its digest check)

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/scaled_mm.hpp"
#include "mmaemu/harness/gemm_call.hpp"
#include "mmaemu/recordings/import_public.hpp"
#include "mmaemu/recordings/recording.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/digest.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "output.hpp"

namespace mmaemu::cli {

namespace {

struct ImportArgs {
  std::string set_dir;
  std::string out;
  std::string preset;
  JsonOption json;
};

namespace fs = std::filesystem;

// Text from a recording or an argument, for stdout: escaped, bounded.
// The files of SET_DIR the importer may read ([abcd]_*.txt): each must be a regular file of at
// most kMaxTextBytes (a FIFO or a device must not block the import or fill the memory).
std::vector<fs::path> set_inputs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return out; // the importer names a missing folder
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool vector_file = name.size() > 6 && name[1] == '_' &&
                             std::string("abcdABCD").find(name[0]) != std::string::npos &&
                             name.compare(name.size() - 4, 4, ".txt") == 0;
    if (!vector_file)
      continue;
    support::check_input_file(it->path(), support::kMaxTextBytes, "vector file");
    out.push_back(it->path());
  }
  if (ec)
    throw support::FileError(shown(dir) + ": cannot be listed (" + ec.message() + ")");
  return out;
}

int run_import(const ImportArgs& args) {
  recordings::ImportOptions opt;
  if (!args.preset.empty())
    opt.preset = args.preset;
  try {
    // The output may not replace an input, a special file or a symlink to one.
    check_output_option("--out", args.out, set_inputs(args.set_dir));
    auto inputs = set_inputs(args.set_dir);
    inputs.push_back(args.out);
    args.json.check(inputs);
    const recordings::Recording rec = recordings::import_public_set(args.set_dir, opt);
    support::check_output_path(args.out, set_inputs(args.set_dir));
    recordings::write_recording(args.out, rec, set_inputs(args.set_dir));
    nlohmann::json sets = nlohmann::json::array();
    for (const auto& b : rec.mma) {
      std::printf("imported %s: %zu cases, K = %u, %s x %s, preset %s, c %s -> %s\n",
                  shown(b.name, 512).c_str(), b.size(), b.K, format_name(b.fmt_a),
                  format_name(b.fmt_b), shown(b.preset, 512).c_str(),
                  shown(b.c_policy, 512).c_str(), shown(args.out, 512).c_str());
      sets.push_back({{"set", b.name},
                      {"cases", b.size()},
                      {"K", b.K},
                      {"fmt_a", format_name(b.fmt_a)},
                      {"fmt_b", format_name(b.fmt_b)},
                      {"preset", b.preset},
                      {"c_policy", b.c_policy}});
    }
    args.json.write({{"out", args.out}, {"sets", sets}}, inputs);
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const recordings::ImportError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const recordings::RecordingError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const MmaemuError& e) {
    error_line(std::string(e.class_name()) + ": " + e.what());
    return kUsage;
  }
  return kOk;
}

// What `show` says of a gemm set: its cases' distinct profiles, APIs and output dtypes.
struct GemmSummary {
  std::set<std::string> profiles, apis, out_dtypes;
  std::size_t expect_error = 0;
};

GemmSummary summarise(const recordings::GemmBatch& b) {
  GemmSummary s;
  for (const auto& c : b.cases) {
    s.profiles.insert(c.profile);
    s.apis.insert(c.api);
    s.out_dtypes.insert(format_name(c.out_dtype));
    s.expect_error += !c.expect_error.empty();
  }
  return s;
}

std::size_t output_count(const recordings::GemmCallBatch& b) {
  std::size_t n = 0;
  for (const auto& c : b.calls)
    n += c.outputs.size();
  return n;
}

// "a, b" of the (escaped) names.
std::string listed(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ", ") + shown(n, 512);
  return out.empty() ? "-" : out;
}

nlohmann::json show_json(const std::string& file, const recordings::Recording& rec) {
  nlohmann::json j;
  j["file"] = file;
  j["attrs"] = rec.attrs;
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& b : rec.mma) {
    sets.push_back({{"set", b.name},
                    {"kind", "mma"},
                    {"cases", b.size()},
                    {"K", b.K},
                    {"fmt_a", format_name(b.fmt_a)},
                    {"fmt_b", format_name(b.fmt_b)},
                    {"preset", b.preset},
                    {"c_policy", b.c_policy},
                    {"acc", format_name(b.acc)},
                    {"attrs", b.attrs}});
  }
  for (const auto& b : rec.gemm) {
    const GemmSummary g = summarise(b);
    sets.push_back({{"set", b.name},
                    {"kind", "gemm"},
                    {"cases", b.cases.size()},
                    {"profiles", g.profiles},
                    {"apis", g.apis},
                    {"out_dtypes", g.out_dtypes},
                    {"expect_error", g.expect_error},
                    {"attrs", b.attrs}});
  }
  for (const auto& b : rec.gemm_call) {
    sets.push_back({{"set", b.name},
                    {"kind", "gemm_call"},
                    {"calls", b.calls.size()},
                    {"outputs", output_count(b)},
                    {"attrs", b.attrs}});
  }
  j["sets"] = sets;
  return j;
}

// The text, and the JSON when --json is given (invalid UTF-8 from the file's strings is
// replaced, never thrown on).
int run_show(const std::string& file, const JsonOption& json) {
  try {
    support::check_input_file(file, support::kMaxRecordingBytes, "recording");
    json.check({file});
    const recordings::Recording rec = recordings::read_recording(file);
    const auto format = rec.attrs.find("format");
    std::printf("%s: %s, %zu cases\n", shown(file, 512).c_str(),
                format == rec.attrs.end() ? "?" : shown(format->second, 512).c_str(),
                rec.case_count());
    for (const auto& [k, v] : rec.attrs)
      std::printf("  %s: %s\n", shown(k, 512).c_str(), shown(v, 512).c_str());
    for (const auto& b : rec.mma) {
      std::printf("set %s: mma, %zu cases, K = %u, %s x %s, preset %s, c %s, accumulator %s\n",
                  shown(b.name, 512).c_str(), b.size(), b.K, format_name(b.fmt_a),
                  format_name(b.fmt_b), shown(b.preset, 512).c_str(),
                  shown(b.c_policy, 512).c_str(), format_name(b.acc));
      for (const auto& [k, v] : b.attrs)
        std::printf("  %s: %s\n", shown(k, 512).c_str(), shown(v, 512).c_str());
    }
    for (const auto& b : rec.gemm) {
      const GemmSummary g = summarise(b);
      std::printf("set %s: gemm, %zu cases, profile %s, api %s, out %s, %zu expecting an error\n",
                  shown(b.name, 512).c_str(), b.cases.size(), listed(g.profiles).c_str(),
                  listed(g.apis).c_str(), listed(g.out_dtypes).c_str(), g.expect_error);
      for (const auto& [k, v] : b.attrs)
        std::printf("  %s: %s\n", shown(k, 512).c_str(), shown(v, 512).c_str());
    }
    for (const auto& b : rec.gemm_call) {
      std::printf("set %s: gemm_call, %zu calls, %zu outputs\n", shown(b.name, 512).c_str(),
                  b.calls.size(), output_count(b));
      for (const auto& [k, v] : b.attrs)
        std::printf("  %s: %s\n", shown(k, 512).c_str(), shown(v, 512).c_str());
    }
    json.write(show_json(file, rec), {file});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const recordings::RecordingError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

// The reference's output of every gemm_call output of FILE, by id "<call id>/<output name>":
// {"shape": [..], "bits": ["0x..", ..]} or {"error": class, "message": text}; an output of more
// than `digest_over` elements has "sha256" (of its codes, little-endian in the dtype's width,
// as torch holds them) instead of "bits". The recorder's
// fake device (tools/h200/record.py) reads it and writes the recording itself, so that its own
// HDF5 code path is tested without a GPU. A malformed call description exits 2.
int run_fill(const std::string& file, const JsonOption& json_out, std::int64_t digest_over) {
  try {
    support::check_input_file(file, support::kMaxRecordingBytes, "recording");
    json_out.check({file});
    const recordings::Recording rec = recordings::read_recording(file);
    // The budget of every call is the one a replay of this file has (budget.hpp).
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(file, ec);
    const std::uint64_t file_bytes = ec ? 0 : static_cast<std::uint64_t>(size);
    nlohmann::json out = nlohmann::json::object();
    for (const auto& batch : rec.gemm_call) {
      // Every description parsed once (a malformed one stops the fill before any output).
      const std::vector<harness::GemmCallDesc> calls =
          harness::parse_gemm_calls(batch, file, file_bytes);
      for (std::size_t ci = 0; ci < batch.calls.size(); ++ci) {
        const recordings::GemmCall& c = batch.calls[ci];
        for (const auto& o : c.outputs) {
          harness::GemmCallArgs a;
          try {
            harness::prepare_output_call(c, calls[ci], o, "reference", a);
          } catch (const MmaemuError& e) {
            // A recorded split that is none (parse_splitk): the file's fault, named as such.
            error_line(support::printable(file, 256) + ": gemm_call '" + support::printable(c.id) +
                       "' output '" + support::printable(o.name) + "': " + e.class_name() + ": " +
                       e.what());
            return kUsage;
          }
          ScaledMmCall& sc = a.call;
          nlohmann::json j;
          try {
            const Tensor r = scaled_mm(sc);
            j["shape"] = r.shape();
            if (r.numel() > digest_over) {
              const int bytes = spec(r.dtype()).width / 8;
              std::string raw;
              raw.reserve(static_cast<std::size_t>(r.numel() * bytes));
              for (std::int64_t i = 0; i < r.numel(); ++i) {
                const std::uint32_t v = r.bits_flat(i);
                for (int k = 0; k < bytes; ++k)
                  raw.push_back(static_cast<char>((v >> (8 * k)) & 0xFFu));
              }
              j["sha256"] = support::sha256_hex(raw);
              out[c.id + "/" + o.name] = std::move(j);
              continue;
            }
            nlohmann::json bits = nlohmann::json::array();
            char buf[16];
            for (std::int64_t i = 0; i < r.numel(); ++i) {
              std::snprintf(buf, sizeof buf, "0x%08x", r.bits_flat(i));
              bits.push_back(buf);
            }
            j["bits"] = std::move(bits);
          } catch (const MmaemuError& e) {
            j["error"] = e.class_name();
            j["message"] = support::printable(e.what(), 512);
          }
          out[c.id + "/" + o.name] = std::move(j);
        }
      }
    }
    json_out.write_text(out.dump(), {file});
  } catch (const support::FileError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const recordings::RecordingError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const harness::GemmCallError& e) {
    error_line(e.what());
    return kUsage;
  } catch (const std::bad_alloc&) {
    // The budgets should make this unreachable; if not, the line still names the file.
    error_line(support::printable(file, 256) + ": out of memory computing its gemm_call outputs");
    return kUsage;
  }
  return kOk;
}

} // namespace

void add_recordings(CLI::App& app, int& exit_code) {
  CLI::App* rec = app.add_subcommand("recordings", "Import and inspect HDF5 recordings");
  rec->require_subcommand(1);

  auto args = std::make_shared<ImportArgs>();
  CLI::App* imp =
      rec->add_subcommand("import-public", "Convert a set in the layout of the public hardware "
                                           "vectors (docs/recordings.md) into a recording");
  imp->add_option("set_dir", args->set_dir, "Folder with a_/b_/c_/d_ files of one set")->required();
  imp->add_option("--out", args->out, "Recording to write (.h5)")->required();
  imp->add_option("--preset", args->preset,
                  "Preset to record (default: from the GPU name in the file names)");
  args->json.add(*imp, "Also write what was imported");
  imp->callback([args, &exit_code] { exit_code = run_import(*args); });

  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<JsonOption>();
  CLI::App* show = rec->add_subcommand("show", "Print a recording's sets and provenance");
  show->add_option("file", *file, "Recording (.h5)")->required();
  json->add(*show, "Also write the sets and provenance");
  show->callback([file, json, &exit_code] { exit_code = run_show(*file, *json); });

  auto fill_file = std::make_shared<std::string>();
  auto fill_json = std::make_shared<JsonOption>();
  auto digest_over = std::make_shared<std::int64_t>(std::numeric_limits<std::int64_t>::max());
  CLI::App* fill = rec->add_subcommand(
      "fill", "Compute every gemm_call output of a recording with the reference, as JSON (the "
              "fake device of tools/h200/record.py)");
  fill->add_option("file", *fill_file, "Recording (.h5) of gemm_call cases")->required();
  fill_json->add(*fill, "Write the outputs")->required();
  fill->add_option("--digest-over", *digest_over,
                   "outputs of more elements: their sha256 instead of their bits")
      ->check(CLI::NonNegativeNumber);
  fill->callback([fill_file, fill_json, digest_over, &exit_code] {
    exit_code = run_fill(*fill_file, *fill_json, *digest_over);
  });
}

} // namespace mmaemu::cli
