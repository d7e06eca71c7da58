// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Backend selection as seen by the emulator (seed 000, "Selection"): a backend only supplies
// the chain function; plans, non-finite inputs and the epilogue stay shared. The emulator
// knows only the reference; a CUDA backend library (libmmaemu_kernels) installs a selector
// at start-up, so the emulator never includes or loads anything of CUDA.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mmaemu/emulator/chain_gemm.hpp"
#include "mmaemu/emulator/preset.hpp"

namespace mmaemu {

// What a call asks for: the backend name ("auto", "reference", "cuda", "cuda:<kernel>"),
// and what the chain must compute.
struct BackendRequest {
  std::string requested = "auto";
  const Preset* preset = nullptr;
  model::FormatPair fmt;
};

// The chain function of a backend: chain_gemm's contract (finite codes; out[m * ldo + n] =
// the preset's chain over k in [k0, k1) from +0).
using ChainFn = std::function<void(const model::GemmOperands& op, std::size_t k0, std::size_t k1,
                                   std::uint32_t* out, std::size_t ldo)>;

struct ChainBackend {
  std::string name = "reference";     // "reference" or "cuda:<kernel>"
  std::vector<std::string> fallbacks; // why each backend tried before it was not used
  ChainFn chain;                      // empty: the reference (model::chain_gemm)
};

// A selector: the backend for a request after $MMAEMU_BACKEND was applied to "auto".
// Throws BackendUnavailableError for an explicit request it cannot serve and ValueError for
// an unknown name.
using BackendSelector = std::function<ChainBackend(const BackendRequest&)>;

// Installs the process-wide selector (nullptr: the reference-only selector); returns the
// previous one.
BackendSelector set_backend_selector(BackendSelector selector);

// Selects the backend of a request: "auto" is replaced by $MMAEMU_BACKEND when that is set,
// then the installed selector decides. Without one: "auto" and "reference" give the
// reference; "cuda" and "cuda:<v1|v4|v9|tc3|h1|h4>" raise BackendUnavailableError (no CUDA
// backend in this build); anything else raises ValueError.
ChainBackend choose_backend(const BackendRequest& request);

// The reference-only selection above (a CUDA selector falls back to it for names it does
// not handle).
ChainBackend reference_only_backend(const BackendRequest& request);

// "auto" with $MMAEMU_BACKEND applied.
std::string effective_backend_name(const std::string& requested);

} // namespace mmaemu
