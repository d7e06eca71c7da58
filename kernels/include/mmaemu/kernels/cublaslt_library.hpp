// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// libcublasLt, opened with dlopen only (no link-time dependency), for the split-K live query.
//
// Library ladder: when MMAEMU_CUBLASLT_PATH is set, only that path is tried, and only if it is
// a path to a regular file (a bare name, a FIFO, a device or a folder is refused before
// dlopen). Otherwise, in order:
//   1. a libcublasLt this process has mapped already (/proc/self/maps: torch's, once torch
//      ran a CUDA matmul), so the query asks the very library torch calls;
//   2. torch's wheel: <site>/nvidia/cu13/lib/libcublasLt.so* and
//      <site>/nvidia/cublas/lib/libcublasLt.so* (highest name first) for each site folder:
//      those the Python module passes (sys.path), then $VIRTUAL_ENV, $CONDA_PREFIX,
//      $PYTHONPATH, ~/.local and the system's python3 site-packages / dist-packages;
//   3. the system library: libcublasLt.so.13, libcublasLt.so.12, libcublasLt.so (the loader's
//      search path), then $CUDA_HOME/lib64/libcublasLt.so* and /usr/local/cuda/lib64/
//      libcublasLt.so*.
// A candidate is taken when every required entry point resolves. Nothing is opened before the
// first call that needs it; a failed load is not remembered (the next call reads the
// environment again), a successful one is kept for the life of the process, and the library is
// never closed.

#include <cstddef>
#include <string>
#include <vector>

#include "mmaemu/kernels/cublaslt_api.hpp"

namespace mmaemu::kernels::cublaslt {

struct Library {
  Api api;
  std::string path;         // the candidate dlopen accepted
  std::size_t version = 0;  // cublasLtGetVersion
  std::string version_text; // "13.1.0"
};

// Whether this process has dlopen'ed a libcublasLt through this ladder.
bool cublaslt_loaded();

// The ladder's candidates now, in order (paths from the environment not yet checked).
std::vector<std::string> candidates();

// The loaded library, or nullptr with `why` naming every candidate tried and why it was
// refused. Thread-safe.
const Library* try_library(std::string* why = nullptr);

// Site folders to search for torch's wheel before the ones derived from the environment (the
// Python module passes sys.path). Opens nothing.
void set_site_dirs(std::vector<std::string> dirs);

// Why `path` (from an environment variable) may not be given to dlopen: empty when it is a
// regular file (symlinks followed), otherwise "not found", "a folder", "a FIFO", ...
std::string not_a_regular_file(const std::string& path);

} // namespace mmaemu::kernels::cublaslt
