// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Environments of the CLI tests that run mmaemu on the CUDA backend without a GPU: no driver
// at all, or the fake libcuda and NVRTC of kernels/tests (the kernels run on the CPU through
// the host shim; MMAEMU_FAKE_CUDA_PATH and MMAEMU_FAKE_NVRTC_PATH come from CMake).

#include <filesystem>
#include <string>

#include "cli_run.hpp"

namespace mmaemu::testing {

// A driver library that does not exist; the cache in `dir`/cache.
inline CliEnv no_driver_env(const std::filesystem::path& dir) {
  return {{"MMAEMU_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"},
          {"MMAEMU_CACHE_DIR", (dir / "cache").string()}};
}

// The fake driver (one sm_90 device) and the fake NVRTC, an empty fatbin folder (the kernels
// are then compiled by the fake NVRTC), the cache in `dir`/cache.
inline CliEnv fake_cuda_env(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "fatbins");
  return {{"MMAEMU_LIBCUDA_PATH", MMAEMU_FAKE_CUDA_PATH},
          {"MMAEMU_NVRTC_PATH", MMAEMU_FAKE_NVRTC_PATH},
          {"MMAEMU_FATBIN_DIR", (dir / "fatbins").string()},
          {"MMAEMU_CACHE_DIR", (dir / "cache").string()}};
}

// `env` with k = v.
inline CliEnv with_var(CliEnv env, const std::string& k, const std::string& v) {
  env[k] = v;
  return env;
}

} // namespace mmaemu::testing
