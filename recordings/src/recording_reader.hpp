// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// The reader of mmaemu-recording/1 files (private to the recordings library): one file image,
// read through the HDF5 C API. recording_read_hdf5.cpp is its checked access to the file
// (groups, attributes, datasets, each checked before it is read, every allocation charged to
// the file's budget); recording_read.cpp walks the format's layout with it (read()).

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mmaemu/recordings/recording.hpp"

namespace mmaemu::recordings::detail {

// An HDF5 identifier, closed with the function of its kind.
class Handle {
public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0 && close_)
      close_(id_);
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// The innermost message of the HDF5 error stack (where the problem was found), printable; the
// stack is cleared.
std::string hdf5_error_text();

// A canonical decimal: digits only (no sign, space or leading zero), within uint64.
std::optional<std::uint64_t> parse_decimal(std::string_view s);

// A read-only file image that the core driver uses in place (recording_read_hdf5.cpp hands
// HDF5 the caller's buffer instead of copies, and refuses to grow it).
struct ImageRef {
  void* data;
  std::size_t size;
};

enum class Elem { u8, u16, u32, str };

// An open group with its members, all of them hard links (checked when it is opened).
struct Group {
  Handle id;
  std::string where;                                       // "cases/<set>", printable
  std::vector<std::pair<std::string, H5L_type_t>> members; // by name, increasing
  bool has(const std::string& name) const {
    for (const auto& m : members) {
      if (m.first == name)
        return true;
    }
    return false;
  }
};

// Reads one file image; every failure is a RecordingError "<file>: <where>: <what>".
class Reader {
public:
  Reader(std::string_view bytes, std::string name) : bytes_(bytes), file_(std::move(name)) {}

  Recording read();

private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw RecordingError(file_ + ": " + (where.empty() ? std::string() : where + ": ") + what);
  }
  [[noreturn]] void hdf5_fail(const std::string& where, const std::string& what) const {
    fail(where, what + " failed (HDF5: " + hdf5_error_text() + ")");
  }

  void open_file();
  Group open_group(const Group& parent, const std::string& name);
  void list_members(Group& g);
  Attributes read_attrs(hid_t obj, const std::string& where);
  std::string read_attr(hid_t obj, const std::string& where, const std::string& key);
  std::uint64_t decimal_attr(const Attributes& a, const std::string& where, const char* key,
                             std::uint64_t max);
  bool bool_attr(const Attributes& a, const std::string& where, const char* key);
  std::uint32_t hex_attr(const Attributes& a, const std::string& where, const char* key);
  Format format_attr(const Attributes& a, const std::string& where, const char* key);
  std::string attr(const Attributes& a, const std::string& where, const char* key);

  struct Dataset {
    Handle id;
    Handle type; // the file's element type
    std::vector<hsize_t> dims;
    std::uint64_t count = 0;
    std::size_t fixed_str_size = 0; // > 0: fixed-length strings of this many bytes
  };
  Dataset open_dataset(const Group& g, const std::string& name, Elem elem, int rank);
  void check_shape(const Group& g, const std::string& name, const Dataset& ds,
                   const std::vector<hsize_t>& want);
  template <class T>
  std::vector<T> read_numbers(const Group& g, const std::string& name, const Dataset& ds);
  template <class T>
  std::vector<T> read_array(const Group& g, const std::string& name, Elem elem,
                            const std::vector<hsize_t>& want);
  std::vector<std::string> read_strings(const Group& g, const std::string& name, hsize_t n);
  void account(const std::string& where, std::uint64_t bytes);

  MmaBatch read_mma(const Group& g, Attributes attrs, const std::string& name);
  GemmCase read_gemm_case(const Group& g);
  GemmCall read_gemm_call(const Group& g);
  void check_count(const Attributes& a, const std::string& where, std::uint64_t n);

  std::string_view bytes_;
  std::string file_;
  ImageRef image_{}; // the image callbacks' data: outlives the handles below
  Handle fapl_;
  Handle lapl_;
  Handle file_id_;
  std::uint64_t decoded_ = 0;
};

} // namespace mmaemu::recordings::detail
