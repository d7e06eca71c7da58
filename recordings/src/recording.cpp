// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/recordings/recording.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
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


std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::uint32_t parse_hex32_attr(const std::string& s, const std::string& where, const char* key) {
  std::size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(s, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || v > 0xFFFFFFFFul) {
    throw RecordingError(where + ": attribute " + key + " = '" + s + "' is not 0x-hex bits");
  }
  return static_cast<std::uint32_t>(v);
}

std::uint64_t parse_u64_attr(const Attributes& a, const std::string& where, const char* key) {
  const std::string v = attr_or_throw(a, where, key);
  try {
    std::size_t used = 0;
    const auto x = std::stoull(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw RecordingError(where + ": attribute " + key + " = '" + v + "' is not a number");
}

Format format_attr(const Attributes& a, const std::string& where, const char* key) {
  const std::string v = attr_or_throw(a, where, key);
  const auto f = parse_format(v);
  if (!f) throw RecordingError(where + ": attribute " + key + " = '" + v + "' is not a format");
  return *f;
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
  if (!c.expect_error.empty()) attrs["expect_error"] = c.expect_error;
  write_attrs(g, attrs);
  write_array(g, "a", H5::PredType::STD_U8LE, c.a, {c.M, c.K});
  write_array(g, "b", H5::PredType::STD_U8LE, c.b, {c.N, c.K});
  if (c.expect_error.empty()) write_array(g, "expect", H5::PredType::STD_U32LE, c.expect, {c.M, c.N});
}

GemmCase read_gemm_case(const H5::Group& g, const std::string& where) {
  Attributes a = read_attrs(g);
  GemmCase c;
  c.id = attr_or_throw(a, where, "id");
  c.api = attr_or_throw(a, where, "api");
  if (c.api != "scaled_mm" && c.api != "accumulate") {
    throw RecordingError(where + ": api '" + c.api + "' is not scaled_mm or accumulate");
  }
  c.profile = attr_or_throw(a, where, "profile");
  c.fmt_a = format_attr(a, where, "fmt_a");
  c.fmt_b = format_attr(a, where, "fmt_b");
  c.out_dtype = format_attr(a, where, "out_dtype");
  c.fast = attr_or_throw(a, where, "fast") == "true";
  c.scale_a_bits = parse_hex32_attr(attr_or_throw(a, where, "scale_a_bits"), where, "scale_a_bits");
  c.scale_b_bits = parse_hex32_attr(attr_or_throw(a, where, "scale_b_bits"), where, "scale_b_bits");
  const std::string sr = attr_or_throw(a, where, "scale_result_bits");
  if (sr != "none") c.scale_result_bits = parse_hex32_attr(sr, where, "scale_result_bits");
  c.splitk = attr_or_throw(a, where, "splitk");
  c.M = parse_u64_attr(a, where, "M");
  c.N = parse_u64_attr(a, where, "N");
  c.K = parse_u64_attr(a, where, "K");
  if (a.count("expect_error")) c.expect_error = a["expect_error"];
  for (const char* k : {"id", "api", "profile", "fmt_a", "fmt_b", "out_dtype", "fast", "scale_a_bits",
                        "scale_b_bits", "scale_result_bits", "splitk", "M", "N", "K", "expect_error"}) {
    a.erase(k);
  }
  c.attrs = a;
  c.a = read_array<std::uint8_t>(g, where, "a", H5::PredType::NATIVE_UINT8, {c.M, c.K});
  c.b = read_array<std::uint8_t>(g, where, "b", H5::PredType::NATIVE_UINT8, {c.N, c.K});
  if (c.expect_error.empty()) {
    c.expect = read_array<std::uint32_t>(g, where, "expect", H5::PredType::NATIVE_UINT32, {c.M, c.N});
  }
  return c;
}

std::vector<std::uint8_t> read_bytes(const H5::Group& g, const std::string& where, const char* name) {
  if (!g.nameExists(name)) throw RecordingError(where + ": dataset '" + name + "' is missing");
  const auto dims = dims_of(g.openDataSet(name));
  if (dims.size() != 1) throw RecordingError(where + ": dataset '" + name + "' is not one-dimensional");
  return read_array<std::uint8_t>(g, where, name, H5::PredType::NATIVE_UINT8, dims);
}

void write_gemm_call(H5::Group& parent, const std::string& name, const GemmCall& c) {
  H5::Group g = parent.createGroup(name);
  Attributes attrs = c.attrs;
  attrs["id"] = c.id;
  attrs["call"] = c.call_json;
  attrs["outputs"] = std::to_string(c.outputs.size());
  write_attrs(g, attrs);
  write_array(g, "input_storage", H5::PredType::STD_U8LE, c.input_storage, {c.input_storage.size()});
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
    for (std::size_t k = 0; k < o.shape.size(); ++k) shape += (k ? "," : "") + std::to_string(o.shape[k]);
    oa["shape"] = shape;
    if (!o.expect_error.empty()) oa["expect_error"] = o.expect_error;
    write_attrs(og, oa);
    if (o.expect_error.empty()) write_array(og, "expect", H5::PredType::STD_U32LE, o.expect, {o.expect.size()});
  }
}

GemmCall read_gemm_call(const H5::Group& g, const std::string& where) {
  Attributes a = read_attrs(g);
  GemmCall c;
  c.id = attr_or_throw(a, where, "id");
  c.call_json = attr_or_throw(a, where, "call");
  const auto n = parse_u64_attr(a, where, "outputs");
  for (const char* k : {"id", "call", "outputs"}) a.erase(k);
  c.attrs = a;
  c.input_storage = read_bytes(g, where, "input_storage");
  c.mat2_storage = read_bytes(g, where, "mat2_storage");
  for (std::uint64_t i = 0; i < n; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "out%03llu", static_cast<unsigned long long>(i));
    if (!g.nameExists(buf)) throw RecordingError(where + ": output group '" + buf + "' is missing");
    H5::Group og = g.openGroup(buf);
    const std::string ow = where + "/" + buf;
    Attributes oa = read_attrs(og);
    GemmCallOutput o;
    o.name = attr_or_throw(oa, ow, "name");
    const std::string od = attr_or_throw(oa, ow, "out_dtype");
    if (od != "default") o.out_dtype = format_attr(oa, ow, "out_dtype");
    o.fast = attr_or_throw(oa, ow, "fast") == "true";
    o.splitk = attr_or_throw(oa, ow, "splitk");
    std::string shape = attr_or_throw(oa, ow, "shape");
    std::size_t pos = 0;
    while (pos < shape.size()) {
      const auto comma = shape.find(',', pos);
      const std::string part = shape.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      try {
        o.shape.push_back(std::stoll(part));
      } catch (const std::exception&) {
        throw RecordingError(ow + ": shape '" + shape + "' is not a list of numbers");
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    if (oa.count("expect_error")) o.expect_error = oa["expect_error"];
    if (o.expect_error.empty()) {
      if (!og.nameExists("expect")) throw RecordingError(ow + ": dataset 'expect' is missing");
      const auto dims = dims_of(og.openDataSet("expect"));
      o.expect = read_array<std::uint32_t>(og, ow, "expect", H5::PredType::NATIVE_UINT32, dims);
    }
    c.outputs.push_back(std::move(o));
  }
  return c;
}

std::string case_group_name(std::size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06zu", i);
  return buf;
}

}  // namespace

std::size_t Recording::case_count() const {
  std::size_t n = 0;
  for (const auto& b : mma) n += b.size();
  for (const auto& g : gemm) n += g.cases.size();
  for (const auto& g : gemm_call) {
    for (const auto& c : g.calls) n += c.outputs.size();
  }
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
  for (const auto& b : rec.gemm) {
    if (!names.insert(b.name).second) throw RecordingError(where + ": duplicate batch '" + b.name + "'");
    for (const auto& c : b.cases) {
      if (c.a.size() != c.M * c.K || c.b.size() != c.N * c.K ||
          (c.expect_error.empty() && c.expect.size() != c.M * c.N)) {
        throw RecordingError(where + ": gemm case '" + c.id + "' has inconsistent sizes");
      }
    }
  }
  for (const auto& b : rec.gemm_call) {
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
      for (const auto& b : rec.gemm) {
        H5::Group g = cases.createGroup(b.name);
        Attributes attrs = b.attrs;
        attrs["kind"] = "gemm";
        attrs["count"] = std::to_string(b.cases.size());
        write_attrs(g, attrs);
        for (std::size_t i = 0; i < b.cases.size(); ++i) write_gemm_case(g, case_group_name(i), b.cases[i]);
      }
      for (const auto& b : rec.gemm_call) {
        H5::Group g = cases.createGroup(b.name);
        Attributes attrs = b.attrs;
        attrs["kind"] = "gemm_call";
        attrs["count"] = std::to_string(b.calls.size());
        write_attrs(g, attrs);
        for (std::size_t i = 0; i < b.calls.size(); ++i) write_gemm_call(g, case_group_name(i), b.calls[i]);
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
      if (kind == "mma") {
        MmaBatch b = read_mma(g, gw, name);
        check_batch(b, where);
        rec.mma.push_back(std::move(b));
      } else if (kind == "gemm" || kind == "gemm_call") {
        Attributes ga = a;
        ga.erase("kind");
        ga.erase("count");
        const hsize_t nc = g.getNumObjs();
        if (kind == "gemm") {
          GemmBatch b{name, {}, ga};
          for (hsize_t c = 0; c < nc; ++c) {
            const std::string cn = g.getObjnameByIdx(c);
            b.cases.push_back(read_gemm_case(g.openGroup(cn), gw + "/" + cn));
          }
          rec.gemm.push_back(std::move(b));
        } else {
          GemmCallBatch b{name, {}, ga};
          for (hsize_t c = 0; c < nc; ++c) {
            const std::string cn = g.getObjnameByIdx(c);
            b.calls.push_back(read_gemm_call(g.openGroup(cn), gw + "/" + cn));
          }
          rec.gemm_call.push_back(std::move(b));
        }
      } else {
        throw RecordingError(gw + ": case kind '" + kind + "' is not supported (mma, gemm, gemm_call)");
      }
    }
  } catch (const H5::Exception& e) {
    throw RecordingError(where + ": unreadable HDF5 (truncated or corrupt?): " + e.getFuncName() +
                         ": " + e.getDetailMsg());
  }
  return rec;
}

}  // namespace mmaemu::recordings
