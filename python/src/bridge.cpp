// SPDX-License-Identifier: BSD-2-Clause
#include "bridge.hpp"

#include <memory>
#include <mutex>
#include <new>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu::py_bridge {

namespace {

// Warnings of the call running on this thread; null outside a call.
thread_local std::vector<Warning>* tl_collector = nullptr;

std::mutex& pending_mutex() {
  static std::mutex mu;
  return mu;
}

// Warnings emitted on a thread without a call (a worker thread of the core): handed to the
// next call that returns.
std::vector<Warning>& pending() {
  static std::vector<Warning> p;
  return p;
}

py::list warnings_list(std::vector<Warning>& own) {
  {
    std::lock_guard<std::mutex> lock(pending_mutex());
    own.insert(own.end(), pending().begin(), pending().end());
    pending().clear();
  }
  py::list out;
  for (const auto& w : own)
    out.append(py::make_tuple(warning_class_name(w.cls), w.message));
  return out;
}

} // namespace

Tensor tensor_from_spec(py::handle desc, const char* what) {
  if (!py::isinstance<py::tuple>(desc)) {
    throw py::type_error(std::string(what) + ": expected a torch tensor or a NumPy array, got " +
                         std::string(Py_TYPE(desc.ptr())->tp_name));
  }
  const auto t = desc.cast<py::tuple>();
  if (t.size() != 3)
    throw ValueError(std::string(what) + ": internal tensor description of wrong size");
  const auto fmt_name = t[0].cast<std::string>();
  const auto fmt = parse_format(fmt_name);
  if (!fmt)
    throw ValueError(std::string(what) + ": unknown format '" + fmt_name + "'");
  const auto arr = t[1].cast<py::array>();
  const auto item = static_cast<std::int64_t>(arr.itemsize());
  if (item != spec(*fmt).width / 8) {
    throw ValueError(std::string(what) + ": " + std::to_string(item) +
                     "-byte elements for format " + fmt_name);
  }
  const auto nd = static_cast<std::size_t>(arr.ndim());
  std::vector<std::int64_t> shape(nd), strides(nd);
  std::int64_t span = 1;
  bool empty = false;
  for (std::size_t d = 0; d < nd; ++d) {
    shape[d] = static_cast<std::int64_t>(arr.shape(static_cast<py::ssize_t>(d)));
    const auto sb = static_cast<std::int64_t>(arr.strides(static_cast<py::ssize_t>(d)));
    if (sb < 0 || sb % item != 0) {
      throw ValueError(std::string(what) + ": stride of " + std::to_string(sb) +
                       " bytes in dimension " + std::to_string(d));
    }
    strides[d] = sb / item;
    if (shape[d] == 0)
      empty = true;
    else
      span += (shape[d] - 1) * strides[d];
  }
  if (empty)
    span = 0;
  // The caller's memory, borrowed (no copy): the array is an argument of the Python call that
  // is running, so it outlives every tensor the call makes from it; the core only reads it.
  auto* data = static_cast<std::uint8_t*>(const_cast<void*>(arr.data()));
  Tensor out =
      Tensor::borrow(*fmt, std::move(shape), std::move(strides), 0, span > 0 ? data : nullptr,
                     static_cast<std::size_t>(span * item), nullptr);
  out.set_requires_grad(t[2].cast<bool>());
  return out;
}

py::array array_of(const Tensor& t) {
  const int item = t.element_size();
  py::dtype dt = item == 1   ? py::dtype::of<std::uint8_t>()
                 : item == 2 ? py::dtype::of<std::uint16_t>()
                             : py::dtype::of<std::uint32_t>();
  std::vector<py::ssize_t> shape, strides;
  for (int d = 0; d < t.dim(); ++d) {
    shape.push_back(static_cast<py::ssize_t>(t.size(d)));
    strides.push_back(static_cast<py::ssize_t>(t.stride(d) * item));
  }
  auto* holder = new std::shared_ptr<std::vector<std::uint8_t>>(t.storage());
  py::capsule owner(
      holder, [](void* p) { delete static_cast<std::shared_ptr<std::vector<std::uint8_t>>*>(p); });
  std::uint8_t* base = (*holder) ? (*holder)->data() : nullptr;
  return py::array(dt, shape, strides, base ? base + t.storage_offset() * item : nullptr, owner);
}

void install_warning_sink() {
  set_warning_sink([](const Warning& w) {
    if (tl_collector != nullptr) {
      tl_collector->push_back(w);
    } else {
      std::lock_guard<std::mutex> lock(pending_mutex());
      pending().push_back(w);
    }
  });
}

py::tuple guarded(const std::function<void()>& prepare, const std::function<void()>& compute,
                  const std::function<py::object()>& convert) {
  std::vector<Warning> collected;
  std::string error_class, error_message;
  {
    tl_collector = &collected;
    try {
      if (prepare)
        prepare();
      if (compute) {
        py::gil_scoped_release nogil;
        compute();
      }
    } catch (const MmaemuError& e) {
      error_class = e.class_name();
      error_message = e.what();
    } catch (const std::bad_alloc&) {
      error_class = "MemoryError";
      error_message = "out of memory";
    } catch (const py::type_error& e) {
      // An argument of the wrong type is Python's TypeError, not a RuntimeError about one.
      error_class = "TypeError";
      error_message = e.what();
    } catch (const py::cast_error& e) {
      error_class = "TypeError";
      error_message = e.what();
    } catch (const std::exception& e) {
      error_class = "RuntimeError";
      error_message = e.what();
    }
    tl_collector = nullptr;
  }
  py::list warns = warnings_list(collected);
  if (!error_class.empty())
    return py::make_tuple("error", py::make_tuple(error_class, error_message), warns);
  return py::make_tuple("ok", convert(), warns);
}

} // namespace mmaemu::py_bridge
