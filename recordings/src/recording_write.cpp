// SPDX-License-Identifier: BSD-2-Clause
// Writing mmaemu-recording/1 files with the HDF5 C++ API: the batches checked first (check_batch,
// unique names, gemm sizes), then every set written into a temporary file that is renamed into
// place when complete. The layout is the one recording_read.cpp expects (recording_layout.hpp).

#include "mmaemu/recordings/recording.hpp"

#include <H5Cpp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>

#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "recording_layout.hpp"

namespace mmaemu::recordings {

namespace fs = std::filesystem;
using detail::hex32;
using detail::kCasesGroup;
using support::printable;

namespace {

constexpr hsize_t kChunkRows = 4096;
constexpr std::uint64_t kChunkTargetBytes = 1u << 20;

const H5::StrType& vlen_str() {
  static const H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
  return t;
}

void write_str_attr(H5::H5Object& obj, const std::string& key, const std::string& value) {
  H5::DataSpace scalar(H5S_SCALAR);
  H5::Attribute attr = obj.createAttribute(key, vlen_str(), scalar);
  attr.write(vlen_str(), value);
}

void write_attrs(H5::H5Object& obj, const Attributes& attrs) {
  for (const auto& [k, v] : attrs)
    write_str_attr(obj, k, v);
}

// Up to 4096 rows a chunk, and about 1 MiB at most, so that a reader's chunk buffer stays
// small whatever K is.
H5::DSetCreatPropList chunked(const std::vector<hsize_t>& dims, std::size_t elem_size) {
  H5::DSetCreatPropList plist;
  std::vector<hsize_t> chunk = dims;
  std::uint64_t row_bytes = elem_size;
  for (std::size_t i = 1; i < dims.size(); ++i)
    row_bytes *= std::max<hsize_t>(dims[i], 1);
  const hsize_t rows_by_size = std::max<std::uint64_t>(kChunkTargetBytes / row_bytes, 1);
  chunk[0] = std::min({std::max<hsize_t>(dims[0], 1), kChunkRows, rows_by_size});
  for (auto& c : chunk)
    c = std::max<hsize_t>(c, 1);
  plist.setChunk(static_cast<int>(chunk.size()), chunk.data());
  plist.setShuffle();
  plist.setDeflate(6);
  return plist;
}

template <class T>
void write_array(H5::Group& g, const char* name, const H5::PredType& type,
                 const std::vector<T>& data, std::vector<hsize_t> dims) {
  H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
  H5::DataSet ds = g.createDataSet(name, type, space, chunked(dims, sizeof(T)));
  if (!data.empty())
    ds.write(data.data(), type);
}

// The 16-bit codes of fp16 and bf16 operands as their dataset holds them.
std::vector<std::uint16_t> narrow16(const std::vector<std::uint32_t>& v) {
  return std::vector<std::uint16_t>(v.begin(), v.end()); // check_batch: every code < 2^16
}

void write_strings(H5::Group& g, const char* name, const std::vector<std::string>& v) {
  std::vector<const char*> ptrs;
  ptrs.reserve(v.size());
  for (const auto& s : v)
    ptrs.push_back(s.c_str());
  hsize_t dims[1] = {v.size()};
  H5::DataSpace space(1, dims);
  H5::DataSet ds = g.createDataSet(name, vlen_str(), space, chunked({v.size()}, sizeof(char*)));
  if (!v.empty())
    ds.write(ptrs.data(), vlen_str());
}

void write_gemm_case(H5::Group& parent, const std::string& name, const GemmCase& c) {
  H5::Group g = parent.createGroup(name);
  Attributes attrs = c.attrs;
  attrs["id"] = c.id;
  attrs["api"] = c.api;
  attrs["profile"] = c.profile;
  attrs["fmt_a"] = format_name(c.fmt_a);
  attrs["fmt_b"] = format_name(c.fmt_b);
  attrs["out_dtype"] = format_name(c.out_dtype);
  attrs["fast"] = c.fast ? "true" : "false";
  attrs["scale_a_bits"] = hex32(c.scale_a_bits);
  attrs["scale_b_bits"] = hex32(c.scale_b_bits);
  attrs["scale_result_bits"] = c.scale_result_bits ? hex32(*c.scale_result_bits) : "none";
  attrs["splitk"] = c.splitk;
  attrs["M"] = std::to_string(c.M);
  attrs["N"] = std::to_string(c.N);
  attrs["K"] = std::to_string(c.K);
  if (!c.expect_error.empty())
    attrs["expect_error"] = c.expect_error;
  write_attrs(g, attrs);
  write_array(g, "a", H5::PredType::STD_U8LE, c.a, {c.M, c.K});
  write_array(g, "b", H5::PredType::STD_U8LE, c.b, {c.N, c.K});
  if (c.expect_error.empty()) {
    write_array(g, "expect", H5::PredType::STD_U32LE, c.expect, {c.M, c.N});
  }
}

void write_gemm_call(H5::Group& parent, const std::string& name, const GemmCall& c) {
  H5::Group g = parent.createGroup(name);
  Attributes attrs = c.attrs;
  attrs["id"] = c.id;
  attrs["call"] = c.call_json;
  attrs["outputs"] = std::to_string(c.outputs.size());
  write_attrs(g, attrs);
  write_array(g, "input_storage", H5::PredType::STD_U8LE, c.input_storage,
              {c.input_storage.size()});
  write_array(g, "mat2_storage", H5::PredType::STD_U8LE, c.mat2_storage, {c.mat2_storage.size()});
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const GemmCallOutput& o = c.outputs[i];
    char buf[32];
    std::snprintf(buf, sizeof buf, "out%03zu", i);
    H5::Group og = g.createGroup(buf);
    Attributes oa;
    oa["name"] = o.name;
    oa["out_dtype"] = o.out_dtype ? format_name(*o.out_dtype) : "default";
    oa["fast"] = o.fast ? "true" : "false";
    oa["splitk"] = o.splitk;
    std::string shape;
    for (std::size_t k = 0; k < o.shape.size(); ++k) {
      shape += (k ? "," : "") + std::to_string(o.shape[k]);
    }
    oa["shape"] = shape;
    if (!o.expect_error.empty())
      oa["expect_error"] = o.expect_error;
    write_attrs(og, oa);
    if (o.expect_error.empty()) {
      write_array(og, "expect", H5::PredType::STD_U32LE, o.expect, {o.expect.size()});
    }
  }
}

std::string case_group_name(std::size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06zu", i);
  return buf;
}

void write_file(const fs::path& tmp, const Recording& rec) {
  H5::H5File file(tmp.string(), H5F_ACC_TRUNC);
  Attributes root = rec.attrs;
  root["format"] = kFormatName;
  if (!root.count("created_by"))
    root["created_by"] = "mmaemu";
  write_attrs(file, root);
  H5::Group cases = file.createGroup(kCasesGroup);
  for (const auto& b : rec.mma) {
    H5::Group g = cases.createGroup(b.name);
    Attributes attrs = b.attrs;
    attrs["kind"] = "mma";
    attrs["fmt_a"] = format_name(b.fmt_a);
    attrs["fmt_b"] = format_name(b.fmt_b);
    attrs["preset"] = b.preset;
    attrs["c_policy"] = b.c_policy;
    attrs["K"] = std::to_string(b.K);
    attrs["count"] = std::to_string(b.size());
    if (b.acc != Format::fp32)
      attrs["acc"] = format_name(b.acc); // absent: fp32 (the files before it existed)
    write_attrs(g, attrs);
    const hsize_t n = b.size();
    write_strings(g, "id", b.ids);
    if (!b.wide()) {
      write_array(g, "a", H5::PredType::STD_U8LE, b.a, {n, b.K});
      write_array(g, "b", H5::PredType::STD_U8LE, b.b, {n, b.K});
    } else if (spec(b.fmt_a).width <= 16) {
      write_array(g, "a", H5::PredType::STD_U16LE, narrow16(b.a_wide), {n, b.K});
      write_array(g, "b", H5::PredType::STD_U16LE, narrow16(b.b_wide), {n, b.K});
    } else {
      write_array(g, "a", H5::PredType::STD_U32LE, b.a_wide, {n, b.K});
      write_array(g, "b", H5::PredType::STD_U32LE, b.b_wide, {n, b.K});
    }
    write_array(g, "c", H5::PredType::STD_U32LE, b.c, {n});
    write_array(g, "expect", H5::PredType::STD_U32LE, b.expect, {n});
  }
  for (const auto& b : rec.gemm) {
    H5::Group g = cases.createGroup(b.name);
    Attributes attrs = b.attrs;
    attrs["kind"] = "gemm";
    attrs["count"] = std::to_string(b.cases.size());
    write_attrs(g, attrs);
    for (std::size_t i = 0; i < b.cases.size(); ++i) {
      write_gemm_case(g, case_group_name(i), b.cases[i]);
    }
  }
  for (const auto& b : rec.gemm_call) {
    H5::Group g = cases.createGroup(b.name);
    Attributes attrs = b.attrs;
    attrs["kind"] = "gemm_call";
    attrs["count"] = std::to_string(b.calls.size());
    write_attrs(g, attrs);
    for (std::size_t i = 0; i < b.calls.size(); ++i) {
      write_gemm_call(g, case_group_name(i), b.calls[i]);
    }
  }
}

} // namespace

void write_recording(const fs::path& path, const Recording& rec,
                     const std::vector<fs::path>& inputs) {
  const std::string where = printable(path.string(), 256);
  std::set<std::string> names;
  for (const auto& b : rec.mma) {
    check_batch(b, where);
    if (!names.insert(b.name).second) {
      throw RecordingError(where + ": duplicate batch '" + printable(b.name) + "'");
    }
  }
  for (const auto& b : rec.gemm) {
    if (!names.insert(b.name).second) {
      throw RecordingError(where + ": duplicate batch '" + printable(b.name) + "'");
    }
    for (const auto& c : b.cases) {
      if (c.a.size() != c.M * c.K || c.b.size() != c.N * c.K ||
          (c.expect_error.empty() && c.expect.size() != c.M * c.N)) {
        throw RecordingError(where + ": gemm case '" + printable(c.id) +
                             "' has inconsistent sizes");
      }
    }
  }
  for (const auto& b : rec.gemm_call) {
    if (!names.insert(b.name).second) {
      throw RecordingError(where + ": duplicate batch '" + printable(b.name) + "'");
    }
  }
  H5::Exception::dontPrint();
  try {
    support::write_file_atomic_with(
        path, [&](const fs::path& tmp) { write_file(tmp, rec); }, inputs);
  } catch (const H5::Exception& e) {
    throw RecordingError(where + ": cannot write (" + printable(e.getDetailMsg(), 200) + ")");
  } catch (const support::FileError& e) {
    throw RecordingError(e.what());
  } catch (const fs::filesystem_error& e) {
    throw RecordingError(where + ": cannot write (" + printable(e.what(), 200) + ")");
  }
}

} // namespace mmaemu::recordings
