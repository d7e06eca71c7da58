// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// NVRTC, opened with dlopen only (no link-time dependency). Library ladder: when
// MMAEMU_NVRTC_PATH is set only that path; otherwise libnvrtc.so.13, libnvrtc.so.12,
// libnvrtc.so (the loader's search path), then $CONDA_PREFIX/lib/libnvrtc.so*,
// $CUDA_HOME/lib64/libnvrtc.so* (newest name first) and /usr/local/cuda/lib64/libnvrtc.so.
//
// Compile options are fixed (seed 000, "Loader ladder"): --fmad=false -default-device
// --std=c++17 --gpu-architecture=sm_XY. Callers may add options, never change these.

#include <string>
#include <utility>
#include <vector>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::kernels::nvrtc {

// A failed compile: the message names the program and carries its log; log() is the full
// log.
class NvrtcError : public MmaemuError {
public:
  NvrtcError(const std::string& message, std::string log);
  const char* class_name() const noexcept override { return "NvrtcError"; }
  const std::string& log() const noexcept { return log_; }

private:
  std::string log_;
};

// An in-memory header: the name a source #includes and its content.
struct Header {
  std::string name;
  std::string content;
};

struct CompileResult {
  std::string cubin; // nvrtcGetCUBIN
  std::string log;   // the program log (warnings), possibly empty
};

// Whether a library has been dlopen'ed by this process.
bool nvrtc_loaded();

// True when NVRTC can be opened; `why` (if given) names every library tried otherwise. A
// failed load is retried at the next call; a successful one is kept.
bool nvrtc_available(std::string* why = nullptr);

// The library that was opened ("libnvrtc.so.13" or a path). Throws BackendUnavailableError
// when none can be opened.
std::string nvrtc_library();

// nvrtcVersion() as {major, minor}. Throws BackendUnavailableError when none can be opened.
std::pair<int, int> nvrtc_version();

// The fixed options for sm_`arch` (arch = major * 10 + minor, e.g. 90). ValueError for an
// arch outside 30..199.
std::vector<std::string> fixed_options(int arch);

// Throws ValueError naming the first option of `extra` that contradicts the fixed ones
// (--fmad / -fmad, --gpu-architecture / -arch, --std / -std, -use_fast_math /
// --use_fast_math) or is empty.
void check_extra_options(const std::vector<std::string>& extra);

// Compiles `source` (program name `name`, e.g. "v1.cu") with `headers` for sm_`arch` with the
// fixed options followed by `extra`. Returns the cubin and the log. Throws
// BackendUnavailableError when NVRTC cannot be opened, ValueError for bad options,
// NvrtcError (naming the log) when the compile fails. Thread-safe.
CompileResult compile(const std::string& name, const std::string& source,
                      const std::vector<Header>& headers, int arch,
                      const std::vector<std::string>& extra = {});

} // namespace mmaemu::kernels::nvrtc
