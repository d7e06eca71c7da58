// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// Test support: small valid recordings, and surgery on them with the HDF5 C API (attributes
// replaced, datasets replaced by ones of another type or storage, links added), to make the
// hostile files the reader must refuse.

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "mmaemu/recordings/recording.hpp"

namespace hostile {

namespace fs = std::filesystem;

// A valid recording of one mma batch "set_one": n cases of K = 4 with known codes.
inline mmaemu::recordings::Recording small_recording(std::size_t n = 3, std::uint32_t K = 4) {
  mmaemu::recordings::Recording rec;
  rec.attrs["source"] = "hostile_h5.hpp";
  mmaemu::recordings::MmaBatch b;
  b.name = "set_one";
  b.preset = "hopper";
  b.K = K;
  b.c_policy = "zero";
  for (std::size_t i = 0; i < n; ++i) {
    b.ids.push_back("set_one/" + std::to_string(i + 1));
    for (std::uint32_t k = 0; k < K; ++k) {
      b.a.push_back(static_cast<std::uint8_t>(0x38 + i + k));
      b.b.push_back(static_cast<std::uint8_t>(0x30 + i));
    }
    b.c.push_back(0u);
    b.expect.push_back(0x3f800000u + static_cast<std::uint32_t>(i));
  }
  rec.mma.push_back(b);
  return rec;
}

// Closes an HDF5 identifier at scope end; throws if it is invalid (the test set-up failed).
class Id {
public:
  Id(hid_t id, herr_t (*close)(hid_t), const char* what) : id_(id), close_(close) {
    if (id < 0)
      throw std::runtime_error(std::string("HDF5 test set-up failed: ") + what);
  }
  ~Id() { close_(id_); }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  operator hid_t() const { return id_; }

private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

inline void check(herr_t r, const char* what) {
  if (r < 0)
    throw std::runtime_error(std::string("HDF5 test set-up failed: ") + what);
}

inline hid_t vlen_string_type() {
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  return t;
}

// Replaces (or adds) the scalar variable-length string attribute `key` of object `obj`.
inline void set_string_attr(const fs::path& file, const std::string& obj, const std::string& key,
                            const std::string& value) {
  Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
  Id o(H5Oopen(f, obj.c_str(), H5P_DEFAULT), H5Oclose, "open object");
  if (H5Aexists(o, key.c_str()) > 0)
    check(H5Adelete(o, key.c_str()), "delete attribute");
  Id t(vlen_string_type(), H5Tclose, "type");
  Id s(H5Screate(H5S_SCALAR), H5Sclose, "space");
  Id a(H5Acreate2(o, key.c_str(), t, s, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attribute");
  const char* p = value.c_str();
  check(H5Awrite(a, t, &p), "write attribute");
}

// Replaces (or adds) attribute `key` of `obj` by one of type `type`, shape `dims` (empty:
// scalar), written from `data`.
inline void set_raw_attr(const fs::path& file, const std::string& obj, const std::string& key,
                         hid_t type, const std::vector<hsize_t>& dims, const void* data) {
  Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
  Id o(H5Oopen(f, obj.c_str(), H5P_DEFAULT), H5Oclose, "open object");
  if (H5Aexists(o, key.c_str()) > 0)
    check(H5Adelete(o, key.c_str()), "delete attribute");
  Id s(dims.empty() ? H5Screate(H5S_SCALAR)
                    : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
       H5Sclose, "space");
  Id a(H5Acreate2(o, key.c_str(), type, s, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attribute");
  check(H5Awrite(a, type, data), "write attribute");
}

// Replaces dataset `path` by one of file type `type` and shape `dims`, made with `dcpl`
// (H5P_DEFAULT: contiguous), written from `data` (nullptr: not written) in memory type
// `mem`.
inline void replace_dataset(const fs::path& file, const std::string& path, hid_t type,
                            const std::vector<hsize_t>& dims, hid_t dcpl = H5P_DEFAULT,
                            hid_t mem = -1, const void* data = nullptr) {
  Id f(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open");
  if (H5Lexists(f, path.c_str(), H5P_DEFAULT) > 0) {
    check(H5Ldelete(f, path.c_str(), H5P_DEFAULT), "unlink");
  }
  Id s(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose, "space");
  Id d(H5Dcreate2(f, path.c_str(), type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose,
       "create dataset");
  if (data)
    check(H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write dataset");
}

} // namespace hostile
