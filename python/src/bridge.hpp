// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The glue between Python objects and the C++ core: arrays as mmaemu::Tensor views, results as
// arrays that own the result's storage, warnings collected per call, errors as data.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <vector>

#include "mmaemu/emulator/format.hpp"
#include "mmaemu/emulator/tensor.hpp"
#include "mmaemu/emulator/warnings.hpp"

namespace mmaemu::py_bridge {

namespace py = pybind11;

// A tensor argument from Python: None, or (format name, integer array of the format's element
// size, requires_grad). The array's strides must be non-negative multiples of its item size
// (the Python side copies other layouts). Only the bytes the view touches are copied, once:
// mmaemu::Tensor keeps its storage in a std::vector. ValueError naming `what`.
Tensor tensor_from_spec(py::handle desc, const char* what);

// An integer array (uint8, uint16 or uint32 by element size) over the tensor's own storage,
// with its shape, strides and offset: no copy; the array keeps the storage alive.
py::array array_of(const Tensor& t);

// Installs the process-wide warning sink that feeds the collectors below.
void install_warning_sink();

// Runs `prepare` (with the GIL: it reads Python objects), then `compute` with the GIL released,
// then `convert` (with the GIL), collecting the warnings the C++ core emits on this thread (and
// any emitted elsewhere since the last call). Returns ("ok", convert(), warnings) or ("error",
// (class name, message), warnings) for a C++ exception of prepare or compute: the Python side
// emits the warnings first, with the GIL held, then raises, so that -W error and
// warnings.catch_warnings work.
py::tuple guarded(const std::function<void()>& prepare, const std::function<void()>& compute,
                  const std::function<py::object()>& convert);

} // namespace mmaemu::py_bridge
