// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/recordings/recording.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace mmaemu::recordings {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCasesGroup = "cases";

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
  for (const auto& [k, v] : attrs) write_str_attr(obj, k, v);
}

Attributes read_attrs(const H5::H5Object& obj) {
  Attributes out;
  const int n = obj.getNumAttrs();
  for (int i = 0; i < n; ++i) {
    H5::Attribute attr = obj.openAttribute(static_cast<unsigned>(i));
    if (attr.getTypeClass() != H5T_STRING) continue;
    std::string value;
    attr.read(attr.getStrType(), value);
    out[attr.getName()] = value;
  }
  return out;
}

H5::DSetCreatPropList chunked(const std::vector<hsize_t>& dims) {
  H5::DSetCreatPropList plist;
  std::vector<hsize_t> chunk = dims;
  chunk[0] = std::min<hsize_t>(std::max<hsize_t>(dims[0], 1), 4096);
  for (auto& c : chunk) c = std::max<hsize_t>(c, 1);
  plist.setChunk(static_cast<int>(chunk.size()), chunk.data());
  plist.setShuffle();
  plist.setDeflate(6);
  return plist;
}

template <class T>
void write_array(H5::Group& g, const char* name, const H5::PredType& type,
                 const std::vector<T>& data, std::vector<hsize_t> dims) {
  H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
  H5::DataSet ds = g.createDataSet(name, type, space, chunked(dims));
  if (!data.empty()) ds.write(data.data(), type);
}

void write_strings(H5::Group& g, const char* name, const std::vector<std::string>& v) {
  std::vector<const char*> ptrs;
  ptrs.reserve(v.size());
  for (const auto& s : v) ptrs.push_back(s.c_str());
  hsize_t dims[1] = {v.size()};
  H5::DataSpace space(1, dims);
  H5::DataSet ds = g.createDataSet(name, vlen_str(), space, chunked({v.size()}));
  if (!v.empty()) ds.write(ptrs.data(), vlen_str());
}

std::vector<hsize_t> dims_of(const H5::DataSet& ds) {
  H5::DataSpace space = ds.getSpace();
  std::vector<hsize_t> dims(static_cast<std::size_t>(space.getSimpleExtentNdims()));
  space.getSimpleExtentDims(dims.data());
  return dims;
}

std::string join_dims(const std::vector<hsize_t>& dims) {
  std::ostringstream os;
  for (std::size_t i = 0; i < dims.size(); ++i) os << (i ? "x" : "") << dims[i];
  return os.str();
}

template <class T>
std::vector<T> read_array(const H5::Group& g, const std::string& where, const char* name,
                          const H5::PredType& type, const std::vector<hsize_t>& want) {
  if (!g.nameExists(name)) throw RecordingError(where + ": dataset '" + name + "' is missing");
  H5::DataSet ds = g.openDataSet(name);
  const auto dims = dims_of(ds);
  if (dims != want) {
    throw RecordingError(where + ": dataset '" + name + "' has shape [" + join_dims(dims) +
                         "], expected [" + join_dims(want) + "]");
  }
  if (ds.getDataType().getSize() != sizeof(T)) {
    throw RecordingError(where + ": dataset '" + name + "' has elements of " +
                         std::to_string(ds.getDataType().getSize()) + " bytes, expected " +
                         std::to_string(sizeof(T)));
  }
  std::size_t n = 1;
  for (auto d : want) n *= d;
  std::vector<T> out(n);
  if (n) ds.read(out.data(), type);
  return out;
}

std::vector<std::string> read_strings(const H5::Group& g, const std::string& where,
                                      const char* name, hsize_t n) {
  if (!g.nameExists(name)) throw RecordingError(where + ": dataset '" + name + "' is missing");
  H5::DataSet ds = g.openDataSet(name);
  if (dims_of(ds) != std::vector<hsize_t>{n}) {
    throw RecordingError(where + ": dataset '" + std::string(name) + "' has the wrong length");
  }
  std::vector<char*> ptrs(n, nullptr);
  std::vector<std::string> out;
  out.reserve(n);
  if (n) {
    ds.read(ptrs.data(), vlen_str());
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5::DataSet::vlenReclaim(ptrs.data(), vlen_str(), ds.getSpace());
  }
  return out;
}

std::string attr_or_throw(const Attributes& a, const std::string& where, const char* key) {
  auto it = a.find(key);
  if (it == a.end()) throw RecordingError(where + ": attribute '" + key + "' is missing");
  return it->second;
}

MmaBatch read_mma(const H5::Group& g, const std::string& where, const std::string& name) {
  MmaBatch b;
  b.name = name;
  Attributes attrs = read_attrs(g);
  const auto fa = parse_format(attr_or_throw(attrs, where, "fmt_a"));
  const auto fb = parse_format(attr_or_throw(attrs, where, "fmt_b"));
  if (!fa || !is_fp8(*fa)) throw RecordingError(where + ": fmt_a '" + attrs["fmt_a"] + "' is not FP8");
  if (!fb || !is_fp8(*fb)) throw RecordingError(where + ": fmt_b '" + attrs["fmt_b"] + "' is not FP8");
  b.fmt_a = *fa;
  b.fmt_b = *fb;
  b.preset = attr_or_throw(attrs, where, "preset");
  b.c_policy = attr_or_throw(attrs, where, "c_policy");
  const std::string k = attr_or_throw(attrs, where, "K");
  try {
    b.K = static_cast<std::uint32_t>(std::stoul(k));
  } catch (const std::exception&) {
    throw RecordingError(where + ": attribute K = '" + k + "' is not a number");
  }
  for (const char* key : {"kind", "fmt_a", "fmt_b", "preset", "c_policy", "K", "count"}) attrs.erase(key);
  b.attrs = std::move(attrs);
  if (!g.nameExists("expect")) throw RecordingError(where + ": dataset 'expect' is missing");
  const auto edims = dims_of(g.openDataSet("expect"));
  if (edims.size() != 1) throw RecordingError(where + ": dataset 'expect' is not one-dimensional");
  const hsize_t n = edims[0];
  b.ids = read_strings(g, where, "id", n);
  b.a = read_array<std::uint8_t>(g, where, "a", H5::PredType::NATIVE_UINT8, {n, b.K});
  b.b = read_array<std::uint8_t>(g, where, "b", H5::PredType::NATIVE_UINT8, {n, b.K});
  b.c = read_array<std::uint32_t>(g, where, "c", H5::PredType::NATIVE_UINT32, {n});
  b.expect = read_array<std::uint32_t>(g, where, "expect", H5::PredType::NATIVE_UINT32, {n});
  return b;
}

}  // namespace

std::size_t Recording::case_count() const {
  std::size_t n = 0;
  for (const auto& b : mma) n += b.size();
  return n;
}

void check_batch(const MmaBatch& b, const std::string& where) {
  const std::size_t n = b.ids.size();
  if (b.name.empty() || b.name.find('/') != std::string::npos) {
    throw RecordingError(where + ": batch name '" + b.name + "' must be non-empty without '/'");
  }
  if (b.a.size() != n * b.K || b.b.size() != n * b.K || b.c.size() != n || b.expect.size() != n) {
    throw RecordingError(where + ": batch '" + b.name + "' has inconsistent sizes");
  }
  if (b.c_policy != "from_file" && b.c_policy != "zero") {
    throw RecordingError(where + ": batch '" + b.name + "' has c_policy '" + b.c_policy +
                         "' (expected from_file or zero)");
  }
  std::set<std::string> seen;
  for (const auto& id : b.ids) {
    if (!seen.insert(id).second) throw RecordingError(where + ": duplicate case id '" + id + "'");
  }
}

void write_recording(const fs::path& path, const Recording& rec) {
  const std::string where = path.string();
  std::set<std::string> names;
  for (const auto& b : rec.mma) {
    check_batch(b, where);
    if (!names.insert(b.name).second) throw RecordingError(where + ": duplicate batch '" + b.name + "'");
  }
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir)) throw RecordingError(where + ": folder " + dir.string() + " does not exist");
  const fs::path tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  H5::Exception::dontPrint();
  try {
    {
      H5::H5File file(tmp.string(), H5F_ACC_TRUNC);
      Attributes root = rec.attrs;
      root["format"] = kFormatName;
      if (!root.count("created_by")) root["created_by"] = "mmaemu";
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
        write_attrs(g, attrs);
        const hsize_t n = b.size();
        write_strings(g, "id", b.ids);
        write_array(g, "a", H5::PredType::STD_U8LE, b.a, {n, b.K});
        write_array(g, "b", H5::PredType::STD_U8LE, b.b, {n, b.K});
        write_array(g, "c", H5::PredType::STD_U32LE, b.c, {n});
        write_array(g, "expect", H5::PredType::STD_U32LE, b.expect, {n});
      }
    }
    fs::rename(tmp, path);
  } catch (const H5::Exception& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw RecordingError(where + ": cannot write (" + e.getDetailMsg() + ")");
  } catch (const fs::filesystem_error& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw RecordingError(where + ": cannot write (" + e.what() + ")");
  }
}

Recording read_recording(const fs::path& path) {
  const std::string where = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw RecordingError(where + ": no such file");
  if (!fs::is_regular_file(path, ec)) throw RecordingError(where + ": not a regular file");
  H5::Exception::dontPrint();
  Recording rec;
  try {
    if (!H5::H5File::isHdf5(where)) throw RecordingError(where + ": not an HDF5 file");
    H5::H5File file(where, H5F_ACC_RDONLY);
    Attributes root = read_attrs(file);
    auto it = root.find("format");
    if (it == root.end() || it->second != kFormatName) {
      throw RecordingError(where + ": not an " + std::string(kFormatName) + " file (format = '" +
                           (it == root.end() ? std::string("none") : it->second) + "')");
    }
    rec.attrs = root;
    if (!file.nameExists(kCasesGroup)) throw RecordingError(where + ": group 'cases' is missing");
    H5::Group cases = file.openGroup(kCasesGroup);
    const hsize_t n = cases.getNumObjs();
    for (hsize_t i = 0; i < n; ++i) {
      const std::string name = cases.getObjnameByIdx(i);
      H5::Group g = cases.openGroup(name);
      const std::string gw = where + ": cases/" + name;
      const Attributes a = read_attrs(g);
      const std::string kind = attr_or_throw(a, gw, "kind");
      if (kind != "mma") throw RecordingError(gw + ": case kind '" + kind + "' is not supported");
      MmaBatch b = read_mma(g, gw, name);
      check_batch(b, where);
      rec.mma.push_back(std::move(b));
    }
  } catch (const H5::Exception& e) {
    throw RecordingError(where + ": unreadable HDF5 (truncated or corrupt?): " + e.getFuncName() +
                         ": " + e.getDetailMsg());
  }
  return rec;
}

}  // namespace mmaemu::recordings
