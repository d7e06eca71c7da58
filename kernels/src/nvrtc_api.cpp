// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/kernels/nvrtc_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "library_ladder.hpp"
#include "mmaemu/support/text.hpp"

// NVRTC's opaque program type, under nvrtc.h's name: an instrumented callee (the tests' fake
// NVRTC under UBSan) checks the pointer's function type, which includes this name.
struct _nvrtcProgram;

namespace mmaemu::kernels::nvrtc {

namespace {

namespace fs = std::filesystem;

using nvrtcResult = int;
using nvrtcProgram = _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;
// How much of a compile log goes into an exception's message (log() has all of it).
constexpr std::size_t kLogInMessage = 4000;

struct Api {
  nvrtcResult (*nvrtcVersion)(int* major, int* minor) = nullptr;
  const char* (*nvrtcGetErrorString)(nvrtcResult r) = nullptr;
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* prog, const char* src, const char* name,
                                    int num_headers, const char* const* headers,
                                    const char* const* include_names) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* prog) = nullptr;
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram prog, int num_options,
                                     const char* const* options) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram prog, std::size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram prog, char* log) = nullptr;
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram prog, std::size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram prog, char* cubin) = nullptr;
  std::string library;
  int major = 0;
  int minor = 0;
};

struct State {
  std::mutex mu;
  std::atomic<bool> loaded{false};
  std::unique_ptr<Api> api;
};

State& state() {
  static State* s = new State;
  return *s;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// libnvrtc.so* in `dir`, newest-looking name first (libnvrtc.so.13.0.48 before libnvrtc.so).
void add_glob(const fs::path& dir, std::vector<std::string>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("libnvrtc.so", 0) == 0)
      found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  out.insert(out.end(), found.begin(), found.end());
}

std::vector<std::string> candidates() {
  const std::string forced = env_or_empty("MMAEMU_NVRTC_PATH");
  if (!forced.empty())
    return {forced};
  std::vector<std::string> out{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  const std::string conda = env_or_empty("CONDA_PREFIX");
  if (!conda.empty())
    add_glob(fs::path(conda) / "lib", out);
  const std::string cuda_home = env_or_empty("CUDA_HOME");
  if (!cuda_home.empty())
    add_glob(fs::path(cuda_home) / "lib64", out);
  out.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return out;
}

template <class Fn> void resolve(void* lib, const char* symbol, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
  if (!out)
    missing += (missing.empty() ? "" : ", ") + std::string(symbol);
}

const Api* load(std::string* why) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.api)
    return s.api.get();
  std::string tried;
  const bool found = detail::open_first_library(
      candidates(), tried, [&] { s.loaded = true; },
      [&](void* lib, const std::string& path) -> std::string {
        auto a = std::make_unique<Api>();
        std::string missing;
        resolve(lib, "nvrtcVersion", a->nvrtcVersion, missing);
        resolve(lib, "nvrtcGetErrorString", a->nvrtcGetErrorString, missing);
        resolve(lib, "nvrtcCreateProgram", a->nvrtcCreateProgram, missing);
        resolve(lib, "nvrtcDestroyProgram", a->nvrtcDestroyProgram, missing);
        resolve(lib, "nvrtcCompileProgram", a->nvrtcCompileProgram, missing);
        resolve(lib, "nvrtcGetProgramLogSize", a->nvrtcGetProgramLogSize, missing);
        resolve(lib, "nvrtcGetProgramLog", a->nvrtcGetProgramLog, missing);
        resolve(lib, "nvrtcGetCUBINSize", a->nvrtcGetCUBINSize, missing);
        resolve(lib, "nvrtcGetCUBIN", a->nvrtcGetCUBIN, missing);
        if (!missing.empty())
          return "missing symbols " + missing;
        if (a->nvrtcVersion(&a->major, &a->minor) != kNvrtcSuccess)
          return "nvrtcVersion failed";
        a->library = path;
        s.api = std::move(a);
        return {};
      });
  if (found)
    return s.api.get();
  if (why)
    *why = "no usable NVRTC library (" + tried + ")";
  return nullptr;
}

const Api& api() {
  std::string why;
  const Api* a = load(&why);
  if (!a)
    throw BackendUnavailableError("NVRTC unavailable: " + why);
  return *a;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// The option name without its value ("--fmad" for "--fmad=true").
std::string option_name(const std::string& o) {
  const auto eq = o.find('=');
  return eq == std::string::npos ? o : o.substr(0, eq);
}

struct Program {
  const Api& a;
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p)
      a.nvrtcDestroyProgram(&p);
  }
};

std::string error_text(const Api& a, nvrtcResult r) {
  const char* s = a.nvrtcGetErrorString ? a.nvrtcGetErrorString(r) : nullptr;
  return s ? std::string(s) : "nvrtcResult " + std::to_string(r);
}

} // namespace

NvrtcError::NvrtcError(const std::string& message, std::string log)
    : MmaemuError(message), log_(std::move(log)) {}

bool nvrtc_loaded() {
  return state().loaded.load();
}

bool nvrtc_available(std::string* why) {
  return load(why) != nullptr;
}

std::string nvrtc_library() {
  return api().library;
}

std::pair<int, int> nvrtc_version() {
  const Api& a = api();
  return {a.major, a.minor};
}

std::vector<std::string> fixed_options(int arch) {
  if (arch < 30 || arch > 199)
    throw ValueError("NVRTC arch " + std::to_string(arch) + " is not a compute capability");
  return {"--fmad=false", "-default-device", "--std=c++17",
          "--gpu-architecture=sm_" + std::to_string(arch)};
}

void check_extra_options(const std::vector<std::string>& extra) {
  static const std::vector<std::string> kFixed{
      "--fmad", "-fmad", "--gpu-architecture", "-arch",
      "--std",  "-std",  "-use_fast_math",     "--use_fast_math"};
  for (const std::string& o : extra) {
    if (o.empty())
      throw ValueError("NVRTC option is empty");
    const std::string n = option_name(o);
    for (const std::string& f : kFixed) {
      // "-arch" also covers "-arch=sm_80" and "-archsm_80"-style spellings.
      if (n == f || (f == "-arch" && starts_with(n, "-arch"))) {
        throw ValueError("NVRTC option '" + support::printable(o, 128) +
                         "' contradicts the fixed options (--fmad=false -default-device "
                         "--std=c++17 --gpu-architecture=sm_XY)");
      }
    }
  }
}

CompileResult compile(const std::string& name, const std::string& source,
                      const std::vector<Header>& headers, int arch,
                      const std::vector<std::string>& extra) {
  check_extra_options(extra);
  std::vector<std::string> options = fixed_options(arch);
  options.insert(options.end(), extra.begin(), extra.end());
  const Api& a = api();

  std::vector<const char*> header_text;
  std::vector<const char*> header_names;
  for (const Header& h : headers) {
    header_text.push_back(h.content.c_str());
    header_names.push_back(h.name.c_str());
  }
  std::vector<const char*> opts;
  for (const std::string& o : options)
    opts.push_back(o.c_str());

  Program prog{a};
  nvrtcResult r =
      a.nvrtcCreateProgram(&prog.p, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                           header_text.data(), header_names.data());
  if (r != kNvrtcSuccess) {
    throw NvrtcError("nvrtcCreateProgram for " + support::printable(name, 128) +
                         " failed: " + error_text(a, r),
                     "");
  }
  const nvrtcResult compiled =
      a.nvrtcCompileProgram(prog.p, static_cast<int>(opts.size()), opts.data());
  CompileResult out;
  std::size_t log_size = 0;
  if (a.nvrtcGetProgramLogSize(prog.p, &log_size) == kNvrtcSuccess && log_size > 1) {
    std::string log(log_size, '\0');
    if (a.nvrtcGetProgramLog(prog.p, log.data()) == kNvrtcSuccess) {
      log.resize(log_size - 1); // drop the terminating NUL
      out.log = std::move(log);
    }
  }
  if (compiled != kNvrtcSuccess) {
    std::string shown = out.log.substr(0, kLogInMessage);
    if (out.log.size() > kLogInMessage)
      shown += "\n...(" + std::to_string(out.log.size()) + " bytes of log)";
    throw NvrtcError("NVRTC " + std::to_string(a.major) + "." + std::to_string(a.minor) +
                         " failed to compile " + support::printable(name, 128) + " for sm_" +
                         std::to_string(arch) + ": " + error_text(a, compiled) + "; log:\n" + shown,
                     out.log);
  }
  std::size_t cubin_size = 0;
  r = a.nvrtcGetCUBINSize(prog.p, &cubin_size);
  if (r != kNvrtcSuccess || cubin_size == 0) {
    throw NvrtcError("nvrtcGetCUBINSize for " + support::printable(name, 128) +
                         " failed: " + error_text(a, r),
                     out.log);
  }
  out.cubin.assign(cubin_size, '\0');
  r = a.nvrtcGetCUBIN(prog.p, out.cubin.data());
  if (r != kNvrtcSuccess) {
    throw NvrtcError("nvrtcGetCUBIN for " + support::printable(name, 128) +
                         " failed: " + error_text(a, r),
                     out.log);
  }
  return out;
}

} // namespace mmaemu::kernels::nvrtc
