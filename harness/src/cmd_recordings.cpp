// SPDX-License-Identifier: BSD-2-Clause
// mmaemu recordings import-public SET_DIR --out FILE.h5 [--preset NAME]
// mmaemu recordings show FILE.h5 [--json]

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/recordings/import_public.hpp"
#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::cli {

namespace {

struct ImportArgs {
  std::string set_dir;
  std::string out;
  std::string preset;
};

int run_import(const ImportArgs& args) {
  recordings::ImportOptions opt;
  if (!args.preset.empty()) opt.preset = args.preset;
  try {
    const recordings::Recording rec = recordings::import_public_set(args.set_dir, opt);
    recordings::write_recording(args.out, rec);
    for (const auto& b : rec.mma) {
      std::printf("imported %s: %zu cases, K = %u, %s x %s, preset %s, c %s -> %s\n",
                  b.name.c_str(), b.size(), b.K, format_name(b.fmt_a), format_name(b.fmt_b),
                  b.preset.c_str(), b.c_policy.c_str(), args.out.c_str());
    }
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

int run_show(const std::string& file, bool json) {
  try {
    const recordings::Recording rec = recordings::read_recording(file);
    if (json) {
      nlohmann::json j;
      j["file"] = file;
      j["attrs"] = rec.attrs;
      nlohmann::json sets = nlohmann::json::array();
      for (const auto& b : rec.mma) {
        sets.push_back({{"set", b.name}, {"kind", "mma"}, {"cases", b.size()}, {"K", b.K},
                        {"fmt_a", format_name(b.fmt_a)}, {"fmt_b", format_name(b.fmt_b)},
                        {"preset", b.preset}, {"c_policy", b.c_policy}, {"attrs", b.attrs}});
      }
      j["sets"] = sets;
      std::cout << j.dump(2) << '\n';
      return kOk;
    }
    std::printf("%s: %s, %zu cases\n", file.c_str(), rec.attrs.at("format").c_str(),
                rec.case_count());
    for (const auto& [k, v] : rec.attrs) std::printf("  %s: %s\n", k.c_str(), v.c_str());
    for (const auto& b : rec.mma) {
      std::printf("set %s: mma, %zu cases, K = %u, %s x %s, preset %s, c %s\n", b.name.c_str(),
                  b.size(), b.K, format_name(b.fmt_a), format_name(b.fmt_b), b.preset.c_str(),
                  b.c_policy.c_str());
      for (const auto& [k, v] : b.attrs) std::printf("  %s: %s\n", k.c_str(), v.c_str());
    }
  } catch (const recordings::RecordingError& e) {
    error_line(e.what());
    return kUsage;
  }
  return kOk;
}

}  // namespace

void add_recordings(CLI::App& app, int& exit_code) {
  CLI::App* rec = app.add_subcommand("recordings", "Import and inspect HDF5 recordings");
  rec->require_subcommand(1);

  auto args = std::make_shared<ImportArgs>();
  CLI::App* imp = rec->add_subcommand(
      "import-public", "Convert a set in the layout of shared/truth-public/ into a recording");
  imp->add_option("set_dir", args->set_dir, "Folder with a_/b_/c_/d_ files of one set")->required();
  imp->add_option("--out", args->out, "Recording to write (.h5)")->required();
  imp->add_option("--preset", args->preset,
                  "Preset to record (default: from the GPU name in the file names)");
  imp->callback([args, &exit_code] { exit_code = run_import(*args); });

  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* show = rec->add_subcommand("show", "Print a recording's sets and provenance");
  show->add_option("file", *file, "Recording (.h5)")->required();
  show->add_flag("--json", *json, "Print JSON");
  show->callback([file, json, &exit_code] { exit_code = run_show(*file, *json); });
}

}  // namespace mmaemu::cli
