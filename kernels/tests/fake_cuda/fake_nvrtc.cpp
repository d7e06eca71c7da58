// SPDX-License-Identifier: BSD-2-Clause
// libmmaemu_fake_nvrtc.so: the NVRTC entry points libmmaemu_kernels uses, with NVRTC's C ABI,
// for fast loader tests. A "compile" checks that the fixed options are present and returns
// the test image "MMAEMU-FAKE-IMAGE nvrtc <program> <arch>" (the fake libcuda loads it).
// MMAEMU_FAKE_NVRTC_FAIL=1 makes every compile fail with a log. Counters for tests at the end.

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// nvrtc.h's opaque program type (the caller's function pointer types name it).
struct _nvrtcProgram {
  std::string name;
  std::string source;
  std::vector<std::string> header_names;
  std::string log;
  std::string cubin;
};

namespace {

using Program = _nvrtcProgram;

constexpr int kSuccess = 0;
constexpr int kInvalidInput = 3;
constexpr int kInvalidProgram = 4;
constexpr int kInvalidOption = 5;
constexpr int kCompilation = 6;

std::atomic<int> g_compiles{0};
std::string g_last_options; // written under the test's single compiling thread

} // namespace

extern "C" {

__attribute__((visibility("default"))) int nvrtcVersion(int* major, int* minor) {
  if (!major || !minor)
    return kInvalidInput;
  *major = 13;
  *minor = 0;
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvrtcGetErrorString(int r) {
  switch (r) {
  case kSuccess:
    return "NVRTC_SUCCESS";
  case kInvalidInput:
    return "NVRTC_ERROR_INVALID_INPUT";
  case kInvalidProgram:
    return "NVRTC_ERROR_INVALID_PROGRAM";
  case kInvalidOption:
    return "NVRTC_ERROR_INVALID_OPTION";
  case kCompilation:
    return "NVRTC_ERROR_COMPILATION";
  default:
    return "NVRTC_ERROR_INTERNAL_ERROR";
  }
}

__attribute__((visibility("default"))) int nvrtcCreateProgram(_nvrtcProgram** prog, const char* src,
                                                              const char* name, int num_headers,
                                                              const char* const* headers,
                                                              const char* const* include_names) {
  if (!prog || !src)
    return kInvalidInput;
  auto* p = new Program;
  p->name = name ? name : "default_program";
  p->source = src;
  for (int i = 0; i < num_headers; ++i) {
    if (!headers[i] || !include_names[i]) {
      delete p;
      return kInvalidInput;
    }
    p->header_names.emplace_back(include_names[i]);
  }
  *prog = p;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvrtcDestroyProgram(_nvrtcProgram** prog) {
  if (!prog || !*prog)
    return kInvalidProgram;
  delete *prog;
  *prog = nullptr;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvrtcCompileProgram(_nvrtcProgram* prog, int n,
                                                               const char* const* options) {
  if (!prog)
    return kInvalidProgram;
  Program* p = prog;
  std::string arch;
  bool fmad_off = false, default_device = false, std17 = false;
  g_last_options.clear();
  for (int i = 0; i < n; ++i) {
    const std::string o = options[i];
    g_last_options += (i ? " " : "") + o;
    if (o == "--fmad=false")
      fmad_off = true;
    else if (o == "-default-device")
      default_device = true;
    else if (o == "--std=c++17")
      std17 = true;
    else if (o.rfind("--gpu-architecture=sm_", 0) == 0)
      arch = o.substr(22);
  }
  ++g_compiles;
  if (!fmad_off || !default_device || !std17 || arch.empty()) {
    p->log = "fake nvrtc: a fixed option is missing: " + g_last_options;
    return kInvalidOption;
  }
  const char* fail = std::getenv("MMAEMU_FAKE_NVRTC_FAIL");
  if (fail && std::string(fail) == "1") {
    p->log = p->name + "(1): error: fake compile failure (MMAEMU_FAKE_NVRTC_FAIL=1)";
    return kCompilation;
  }
  p->log = "fake nvrtc: " + p->name + " for sm_" + arch;
  p->cubin = "MMAEMU-FAKE-IMAGE nvrtc " + p->name + " sm_" + arch;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvrtcGetProgramLogSize(_nvrtcProgram* prog,
                                                                  std::size_t* n) {
  if (!prog || !n)
    return kInvalidInput;
  *n = prog->log.size() + 1;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvrtcGetProgramLog(_nvrtcProgram* prog, char* log) {
  if (!prog || !log)
    return kInvalidInput;
  const std::string& l = prog->log;
  std::memcpy(log, l.c_str(), l.size() + 1);
  return kSuccess;
}

// The cubin is a NUL-terminated test image: its size includes the terminator, like a real
// cubin that the driver reads from the start.
__attribute__((visibility("default"))) int nvrtcGetCUBINSize(_nvrtcProgram* prog, std::size_t* n) {
  if (!prog || !n)
    return kInvalidInput;
  const Program* p = prog;
  if (p->cubin.empty())
    return kInvalidProgram;
  *n = p->cubin.size() + 1;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvrtcGetCUBIN(_nvrtcProgram* prog, char* cubin) {
  if (!prog || !cubin)
    return kInvalidInput;
  const std::string& c = prog->cubin;
  std::memcpy(cubin, c.c_str(), c.size() + 1);
  return kSuccess;
}

__attribute__((visibility("default"))) int mmaemu_fake_nvrtc_compiles() {
  return g_compiles.load();
}

__attribute__((visibility("default"))) const char* mmaemu_fake_nvrtc_last_options() {
  return g_last_options.c_str();
}

} // extern "C"
