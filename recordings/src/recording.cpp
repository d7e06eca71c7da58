// SPDX-License-Identifier: BSD-2-Clause
// Writing (the HDF5 C++ API) and reading (the C API, every object checked before it is read)
// of mmaemu-recording/1 files. The reader never trusts the file: it opens it from memory, follows
// only hard links, refuses storage outside the file, checks classes, shapes and sizes before
// allocating, and parses numbers strictly; hdf5_guard.cpp runs it in a child process first.

#include "mmaemu/recordings/recording.hpp"

#include <H5Cpp.h>
#include <hdf5.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "hdf5_guard.hpp"
#include "mmaemu/emulator/decode_bits.hpp"
#include "mmaemu/emulator/encode_bits.hpp"
#include "mmaemu/recordings/budget.hpp"
#include "mmaemu/support/atomic_write.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "recording_wire.hpp"

namespace mmaemu::recordings {

namespace fs = std::filesystem;
using support::printable;

namespace {

constexpr const char* kCasesGroup = "cases";
constexpr std::uint64_t kMaxShapeRank = 8;
constexpr hsize_t kChunkRows = 4096;
constexpr std::uint64_t kChunkTargetBytes = 1u << 20;

// ---------------------------------------------------------------------------------------------
// Writing

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

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
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

// ---------------------------------------------------------------------------------------------
// Reading: the HDF5 C API, so that every property is checked before anything is read.

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

// The innermost message of the HDF5 error stack (where the problem was found), cleared.
herr_t innermost_error(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (n == 0 && err) {
    *out = std::string(err->func_name ? err->func_name : "?") + ": " +
           (err->desc ? err->desc : "error");
  }
  return 0;
}

std::string hdf5_error_text() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? std::string("no detail") : printable(text, 200);
}

const char* class_name(H5T_class_t c) {
  switch (c) {
  case H5T_INTEGER:
    return "integer";
  case H5T_FLOAT:
    return "float";
  case H5T_TIME:
    return "time";
  case H5T_STRING:
    return "string";
  case H5T_BITFIELD:
    return "bitfield";
  case H5T_OPAQUE:
    return "opaque";
  case H5T_COMPOUND:
    return "compound";
  case H5T_REFERENCE:
    return "reference";
  case H5T_ENUM:
    return "enum";
  case H5T_VLEN:
    return "variable-length sequence";
  case H5T_ARRAY:
    return "array";
  default:
    return "unknown";
  }
}

const char* link_kind(H5L_type_t t) {
  switch (t) {
  case H5L_TYPE_SOFT:
    return "a soft link";
  case H5L_TYPE_EXTERNAL:
    return "an external link";
  default:
    return "a user-defined link";
  }
}

bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// A canonical decimal: digits only (no sign, space or leading zero), within uint64.
std::optional<std::uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 20 || s[0] < '0' || s[0] > '9')
    return std::nullopt;
  if (s.size() > 1 && s[0] == '0')
    return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// "0x" and exactly 8 hex digits, as the writer writes them.
std::optional<std::uint32_t> parse_hex32(std::string_view s) {
  if (s.size() != 10 || s[0] != '0' || s[1] != 'x')
    return std::nullopt;
  for (char ch : s.substr(2)) {
    if (!std::isxdigit(static_cast<unsigned char>(ch)))
      return std::nullopt;
  }
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::string join_dims(const std::vector<hsize_t>& dims) {
  std::ostringstream os;
  for (std::size_t i = 0; i < dims.size(); ++i)
    os << (i ? "x" : "") << dims[i];
  return os.str();
}

// A read-only file image that the core driver uses in place: these callbacks hand HDF5 the
// caller's buffer instead of copies (a recording may be up to 1 GiB), and refuse to grow it.
struct ImageRef {
  void* data;
  std::size_t size;
};

void* image_malloc(std::size_t size, H5FD_file_image_op_t, void* udata) {
  auto* img = static_cast<ImageRef*>(udata);
  return size == img->size ? img->data : nullptr;
}
void* image_memcpy(void* dest, const void* src, std::size_t size, H5FD_file_image_op_t,
                   void* udata) {
  auto* img = static_cast<ImageRef*>(udata);
  return dest == img->data && src == img->data && size <= img->size ? dest : nullptr;
}
void* image_realloc(void*, std::size_t, H5FD_file_image_op_t, void*) {
  return nullptr;
}
herr_t image_free(void*, H5FD_file_image_op_t, void*) {
  return 0;
}
void* udata_copy(void* udata) {
  return udata;
}
herr_t udata_free(void*) {
  return 0;
}

// External links are refused before they are traversed; this callback makes sure that the
// library never opens another file even if one were traversed.
herr_t refuse_external_link(const char*, const char*, const char*, const char*, unsigned*, hid_t,
                            void*) {
  return -1;
}

struct LinkList {
  std::vector<std::pair<std::string, H5L_type_t>> links;
  bool too_many = false;
  bool failed = false;
};

herr_t collect_link(hid_t, const char* name, const H5L_info_t* info, void* data) {
  auto* out = static_cast<LinkList*>(data);
  try {
    if (out->links.size() >= kMaxLinksPerGroup) {
      out->too_many = true;
      return 1;
    }
    out->links.emplace_back(name ? name : "", info ? info->type : H5L_TYPE_ERROR);
    return 0;
  } catch (...) {
    out->failed = true;
    return -1;
  }
}

struct NameList {
  std::vector<std::string> names;
  bool too_many = false;
  bool failed = false;
};

herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  auto* out = static_cast<NameList*>(data);
  try {
    if (out->names.size() >= kMaxAttributesPerObject) {
      out->too_many = true;
      return 1;
    }
    out->names.emplace_back(name ? name : "");
    return 0;
  } catch (...) {
    out->failed = true;
    return -1;
  }
}

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

void Reader::open_file() {
  // The signature at 0 or at a power of two from 512 on (a user block), as HDF5 looks for it.
  static const char kSignature[8] = {'\211', 'H', 'D', 'F', '\r', '\n', '\032', '\n'};
  bool signed_ok = false;
  for (std::uint64_t at = 0; at + 8 <= bytes_.size(); at = at ? at * 2 : 512) {
    if (std::memcmp(bytes_.data() + at, kSignature, 8) == 0) {
      signed_ok = true;
      break;
    }
  }
  if (!signed_ok)
    fail("", "not an HDF5 file");

  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  fapl_ = Handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl_.valid())
    hdf5_fail("", "creating a file access list");
  image_ = ImageRef{const_cast<char*>(bytes_.data()), bytes_.size()};
  H5FD_file_image_callbacks_t callbacks{image_malloc, image_memcpy, image_realloc, image_free,
                                        udata_copy,   udata_free,   &image_};
  if (H5Pset_fapl_core(fapl_.get(), 1 << 20, 0) < 0 ||
      H5Pset_file_image_callbacks(fapl_.get(), &callbacks) < 0 ||
      H5Pset_file_image(fapl_.get(), image_.data, image_.size) < 0 ||
      H5Pset_fclose_degree(fapl_.get(), H5F_CLOSE_STRONG) < 0) {
    hdf5_fail("", "setting up the in-memory file");
  }
  lapl_ = Handle(H5Pcreate(H5P_LINK_ACCESS), H5Pclose);
  if (!lapl_.valid() || H5Pset_elink_cb(lapl_.get(), refuse_external_link, nullptr) < 0 ||
      H5Pset_nlinks(lapl_.get(), 1) < 0) {
    hdf5_fail("", "setting up link access");
  }
  // The name is never opened (the image is the file), and cannot name a file: the core
  // driver refuses an image whose name exists on disk, and each open needs its own name.
  static std::atomic<unsigned long> counter{0};
  const std::string image_name = "/dev/null/mmaemu-recording-image-" + std::to_string(counter++);
  file_id_ = Handle(H5Fopen(image_name.c_str(), H5F_ACC_RDONLY, fapl_.get()), H5Fclose);
  if (!file_id_.valid()) {
    fail("", "unreadable HDF5 (truncated or corrupt?): " + hdf5_error_text());
  }
}

void Reader::list_members(Group& g) {
  LinkList list;
  hsize_t idx = 0;
  const herr_t r = H5Literate(g.id.get(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &list);
  if (list.too_many) {
    fail(g.where, "more than " + std::to_string(kMaxLinksPerGroup) + " members");
  }
  if (r < 0 || list.failed)
    hdf5_fail(g.where, "listing the members");
  for (const auto& [name, type] : list.links) {
    const std::string w = g.where.empty() ? printable(name) : g.where + "/" + printable(name);
    if (name.empty() || name == "." || name.find('/') != std::string::npos) {
      fail(g.where, "member name '" + printable(name) + "' is not a plain name");
    }
    if (type != H5L_TYPE_HARD) {
      fail(w, std::string("is ") + link_kind(type) +
                  "; only hard links to objects inside the file are read");
    }
  }
  g.members = std::move(list.links);
}

Group Reader::open_group(const Group& parent, const std::string& name) {
  Group g;
  g.where = parent.where.empty() ? printable(name) : parent.where + "/" + printable(name);
  if (!parent.has(name))
    fail(parent.where, "group '" + printable(name) + "' is missing");
  Handle obj(H5Oopen(parent.id.get(), name.c_str(), lapl_.get()), H5Oclose);
  if (!obj.valid())
    hdf5_fail(g.where, "opening");
  if (H5Iget_type(obj.get()) != H5I_GROUP)
    fail(g.where, "is not a group");
  g.id = std::move(obj);
  list_members(g);
  return g;
}

std::string Reader::read_attr(hid_t obj, const std::string& where, const std::string& key) {
  const std::string w = where + (where.empty() ? "" : ": ") + "attribute '" + printable(key) + "'";
  Handle a(H5Aopen(obj, key.c_str(), H5P_DEFAULT), H5Aclose);
  if (!a.valid())
    hdf5_fail(w, "opening");
  Handle space(H5Aget_space(a.get()), H5Sclose);
  if (!space.valid())
    hdf5_fail(w, "reading the shape");
  if (H5Sget_simple_extent_type(space.get()) != H5S_SCALAR)
    fail("", w + " is not a scalar");
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (!type.valid())
    hdf5_fail(w, "reading the type");
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_STRING) {
    fail("", w + " is of class " + class_name(cls) + ", not a string");
  }
  const htri_t is_vlen = H5Tis_variable_str(type.get());
  const H5T_cset_t cset = H5Tget_cset(type.get());
  if (is_vlen < 0 || cset < 0)
    hdf5_fail(w, "reading the string type");
  std::string value;
  if (is_vlen) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    if (!mem.valid() || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
        H5Tset_cset(mem.get(), cset) < 0) {
      hdf5_fail(w, "making a string type");
    }
    char* p = nullptr;
    if (H5Aread(a.get(), mem.get(), &p) < 0)
      hdf5_fail(w, "reading");
    if (p) {
      const std::size_t len = std::strlen(p);
      if (len <= kMaxAttributeBytes)
        value.assign(p, len);
      H5free_memory(p);
      if (len > kMaxAttributeBytes) {
        fail("", w + " is over the limit of " + std::to_string(kMaxAttributeBytes) + " bytes");
      }
    }
  } else {
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0 || size > kMaxAttributeBytes) {
      fail("", w + " declares " + std::to_string(size) + "-byte strings (limit " +
                   std::to_string(kMaxAttributeBytes) + ")");
    }
    const H5T_str_t pad = H5Tget_strpad(type.get());
    std::string buf(size, '\0');
    if (H5Aread(a.get(), type.get(), buf.data()) < 0)
      hdf5_fail(w, "reading");
    if (pad == H5T_STR_SPACEPAD) {
      while (!buf.empty() && buf.back() == ' ')
        buf.pop_back();
    } else {
      buf.resize(std::strlen(buf.c_str()));
    }
    value = std::move(buf);
  }
  account(w, value.size());
  return value;
}

Attributes Reader::read_attrs(hid_t obj, const std::string& where) {
  NameList list;
  hsize_t idx = 0;
  const herr_t r = H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &list);
  if (list.too_many) {
    fail(where, "more than " + std::to_string(kMaxAttributesPerObject) + " attributes");
  }
  if (r < 0 || list.failed)
    hdf5_fail(where, "listing the attributes");
  Attributes out;
  for (const auto& key : list.names)
    out[key] = read_attr(obj, where, key);
  return out;
}

std::string Reader::attr(const Attributes& a, const std::string& where, const char* key) {
  auto it = a.find(key);
  if (it == a.end())
    fail(where, std::string("attribute '") + key + "' is missing");
  return it->second;
}

std::uint64_t Reader::decimal_attr(const Attributes& a, const std::string& where, const char* key,
                                   std::uint64_t max) {
  const std::string v = attr(a, where, key);
  const auto x = parse_decimal(v);
  if (!x) {
    fail(where, std::string("attribute ") + key + " = '" + printable(v) +
                    "' is not a decimal number (digits only, no sign, space or leading zero)");
  }
  if (*x > max) {
    fail(where, std::string("attribute ") + key + " = " + v + " is over the limit of " +
                    std::to_string(max));
  }
  return *x;
}

bool Reader::bool_attr(const Attributes& a, const std::string& where, const char* key) {
  const std::string v = attr(a, where, key);
  if (v == "true")
    return true;
  if (v == "false")
    return false;
  fail(where, std::string("attribute ") + key + " = '" + printable(v) + "' is not true or false");
}

std::uint32_t Reader::hex_attr(const Attributes& a, const std::string& where, const char* key) {
  const std::string v = attr(a, where, key);
  const auto x = parse_hex32(v);
  if (!x) {
    fail(where, std::string("attribute ") + key + " = '" + printable(v) +
                    "' is not 0x and 8 hex digits (binary32 bits)");
  }
  return *x;
}

Format Reader::format_attr(const Attributes& a, const std::string& where, const char* key) {
  const std::string v = attr(a, where, key);
  const auto f = parse_format(v);
  if (!f)
    fail(where, std::string("attribute ") + key + " = '" + printable(v) + "' is not a format");
  return *f;
}

void Reader::account(const std::string& where, std::uint64_t bytes) {
  // Charged before the bytes are allocated: the budget is a bounded multiple of the file's
  // size (budget.hpp), so a compressed dataset of zeros cannot expand a small file 1000-fold.
  const std::uint64_t limit = decoded_budget(bytes_.size());
  if (bytes > limit || decoded_ + bytes > limit) {
    fail(where, "the file's datasets and attributes total over the limit of " +
                    std::to_string(limit) + " bytes in memory (" +
                    std::to_string(kDecodedBudgetBaseBytes >> 20) + " MiB plus the file's " +
                    std::to_string(bytes_.size()) + " bytes)");
  }
  decoded_ += bytes;
}

Reader::Dataset Reader::open_dataset(const Group& g, const std::string& name, Elem elem, int rank) {
  const std::string w = g.where + ": dataset '" + printable(name) + "'";
  if (!g.has(name))
    fail(g.where, "dataset '" + printable(name) + "' is missing");
  Dataset ds;
  Handle obj(H5Oopen(g.id.get(), name.c_str(), lapl_.get()), H5Oclose);
  if (!obj.valid())
    hdf5_fail(w, "opening");
  if (H5Iget_type(obj.get()) != H5I_DATASET)
    fail("", w + " is not a dataset");

  // Storage first: nothing of a dataset that reads other files is touched.
  Handle dcpl(H5Dget_create_plist(obj.get()), H5Pclose);
  if (!dcpl.valid())
    hdf5_fail(w, "reading the creation properties");
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_VIRTUAL) {
    fail("", w + " is a virtual dataset (it maps other files); refused");
  }
  if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT) {
    fail("", w + " has an unknown storage layout");
  }
  const int external = H5Pget_external_count(dcpl.get());
  if (external < 0)
    hdf5_fail(w, "reading the storage");
  if (external > 0)
    fail("", w + " has external storage (files outside the recording); refused");
  const int nfilters = H5Pget_nfilters(dcpl.get());
  if (nfilters < 0)
    hdf5_fail(w, "reading the filters");
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    char fname[64] = {};
    const H5Z_filter_t f = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues,
                                          nullptr, sizeof fname, fname, &config);
    if (f < 0)
      hdf5_fail(w, "reading filter " + std::to_string(i));
    if (f != H5Z_FILTER_DEFLATE && f != H5Z_FILTER_SHUFFLE) {
      fail("", w + " uses filter " + std::to_string(f) + " ('" +
                   printable(std::string_view(fname, strnlen(fname, sizeof fname))) +
                   "'); only deflate and shuffle are read");
    }
  }

  ds.type = Handle(H5Dget_type(obj.get()), H5Tclose);
  if (!ds.type.valid())
    hdf5_fail(w, "reading the type");
  const hid_t t = ds.type.get();
  const H5T_class_t cls = H5Tget_class(t);
  const std::size_t size = H5Tget_size(t);
  std::uint64_t mem_size = 0;
  if (elem == Elem::str) {
    if (cls != H5T_STRING)
      fail("", w + " is of class " + class_name(cls) + ", not strings");
    const htri_t vlen = H5Tis_variable_str(t);
    if (vlen < 0)
      hdf5_fail(w, "reading the string type");
    if (!vlen) {
      if (size == 0 || size > kMaxIdBytes) {
        fail("", w + " declares " + std::to_string(size) + "-byte strings (limit " +
                     std::to_string(kMaxIdBytes) + ")");
      }
      ds.fixed_str_size = size;
    }
    mem_size = vlen ? sizeof(char*) : size;
  } else {
    const std::size_t want = elem == Elem::u8 ? 1 : elem == Elem::u16 ? 2 : 4;
    const char* what = elem == Elem::u8 ? "uint8" : elem == Elem::u16 ? "uint16" : "uint32";
    if (cls != H5T_INTEGER) {
      fail("", w + " is of class " + class_name(cls) + ", expected " + what);
    }
    const H5T_sign_t sign = H5Tget_sign(t);
    if (sign != H5T_SGN_NONE)
      fail("", w + " is signed, expected " + what);
    if (size != want) {
      fail("", w + " has elements of " + std::to_string(size) + " bytes, expected " +
                   std::to_string(want) + " (" + what + ")");
    }
    if (H5Tget_precision(t) != 8 * want || H5Tget_offset(t) != 0) {
      fail("", w + " has a partial precision or bit offset, expected a plain " + what);
    }
    mem_size = want;
  }

  Handle space(H5Dget_space(obj.get()), H5Sclose);
  if (!space.valid())
    hdf5_fail(w, "reading the shape");
  if (H5Sget_simple_extent_type(space.get()) != H5S_SIMPLE)
    fail("", w + " is not an array");
  const int nd = H5Sget_simple_extent_ndims(space.get());
  if (nd < 0)
    hdf5_fail(w, "reading the rank");
  if (nd != rank) {
    fail("", w + " has " + std::to_string(nd) + " dimensions, expected " + std::to_string(rank));
  }
  ds.dims.assign(static_cast<std::size_t>(rank), 0);
  if (H5Sget_simple_extent_dims(space.get(), ds.dims.data(), nullptr) < 0) {
    hdf5_fail(w, "reading the shape");
  }
  std::uint64_t count = 1, bytes = 0;
  for (hsize_t d : ds.dims) {
    if (!checked_mul(count, d, count))
      count = std::numeric_limits<std::uint64_t>::max();
  }
  if (!checked_mul(count, mem_size, bytes) || bytes > kMaxDatasetBytes) {
    fail("", w + " has shape [" + join_dims(ds.dims) + "], over the limit of " +
                 std::to_string(kMaxDatasetBytes) + " bytes a dataset");
  }
  if (layout == H5D_CHUNKED) {
    hsize_t chunk[H5S_MAX_RANK] = {};
    const int cr = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk);
    if (cr != rank)
      fail("", w + " has chunks of another rank than its shape");
    std::uint64_t cbytes = std::max<std::uint64_t>(size, 1);
    for (int i = 0; i < cr; ++i) {
      if (!checked_mul(cbytes, chunk[i], cbytes))
        cbytes = std::numeric_limits<std::uint64_t>::max();
    }
    // libhdf5 allocates a whole chunk to decompress it, whatever the dataset's size.
    const std::uint64_t climit = std::min(kMaxChunkBytes, decoded_budget(bytes_.size()));
    if (cbytes > climit) {
      fail("", w + " declares chunks of " + std::to_string(cbytes) + " bytes (limit " +
                   std::to_string(climit) + ")");
    }
  }
  if (count > 0) {
    // Storage that was never written reads as fill values: data the file does not hold (and a
    // few bytes of header could declare the limit). Every dataset the writer makes is whole.
    bool whole = true;
    if (layout == H5D_CHUNKED) {
      hsize_t chunk[H5S_MAX_RANK] = {};
      H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk);
      std::uint64_t want = 1;
      for (int i = 0; i < rank; ++i) {
        if (chunk[i] == 0 || !checked_mul(want, (ds.dims[i] + chunk[i] - 1) / chunk[i], want)) {
          fail("", w + " has an invalid chunk shape");
        }
      }
      hsize_t have = 0;
      if (H5Dget_num_chunks(obj.get(), space.get(), &have) < 0)
        hdf5_fail(w, "counting the chunks");
      whole = have == want;
    } else if (layout == H5D_CONTIGUOUS) {
      H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
      if (H5Dget_space_status(obj.get(), &status) < 0)
        hdf5_fail(w, "reading the storage status");
      whole = status == H5D_SPACE_STATUS_ALLOCATED;
    }
    if (!whole) {
      fail("", w + " is not completely written (its values would be fill values); refused");
    }
  }
  account(w, bytes);
  ds.count = count;
  ds.id = std::move(obj);
  return ds;
}

void Reader::check_shape(const Group& g, const std::string& name, const Dataset& ds,
                         const std::vector<hsize_t>& want) {
  if (ds.dims != want) {
    fail(g.where, "dataset '" + printable(name) + "' has shape [" + join_dims(ds.dims) +
                      "], expected [" + join_dims(want) + "]");
  }
}

template <class T>
std::vector<T> Reader::read_numbers(const Group& g, const std::string& name, const Dataset& ds) {
  std::vector<T> out(ds.count);
  const hid_t mem = sizeof(T) == 1   ? H5T_NATIVE_UINT8
                    : sizeof(T) == 2 ? H5T_NATIVE_UINT16
                                     : H5T_NATIVE_UINT32;
  if (ds.count && H5Dread(ds.id.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
    hdf5_fail(g.where + ": dataset '" + printable(name) + "'", "reading");
  }
  return out;
}

template <class T>
std::vector<T> Reader::read_array(const Group& g, const std::string& name, Elem elem,
                                  const std::vector<hsize_t>& want) {
  const Dataset ds = open_dataset(g, name, elem, static_cast<int>(want.size()));
  check_shape(g, name, ds, want);
  return read_numbers<T>(g, name, ds);
}

std::vector<std::string> Reader::read_strings(const Group& g, const std::string& name, hsize_t n) {
  const std::string w = g.where + ": dataset '" + printable(name) + "'";
  const Dataset ds = open_dataset(g, name, Elem::str, 1);
  check_shape(g, name, ds, {n});
  // Each case's ID and replay result, charged before the vector of IDs is made: a file of
  // 2^24 tiny cases costs far more in memory than on disk.
  std::uint64_t overhead = 0;
  if (!checked_mul(static_cast<std::uint64_t>(n), kCaseOverheadBytes, overhead))
    overhead = std::numeric_limits<std::uint64_t>::max();
  account(w, overhead);
  std::vector<std::string> out;
  out.reserve(n);
  if (n == 0)
    return out;
  const auto too_long = [&](std::size_t i) {
    fail("", w + " element " + std::to_string(i) + " is over the limit of " +
                 std::to_string(kMaxIdBytes) + " bytes");
  };
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  const H5T_cset_t cset = H5Tget_cset(ds.type.get());
  if (!mem.valid() || cset < 0 || H5Tset_cset(mem.get(), cset) < 0) {
    hdf5_fail(w, "making a string type");
  }
  if (ds.fixed_str_size) {
    if (H5Tset_size(mem.get(), ds.fixed_str_size) < 0 ||
        H5Tset_strpad(mem.get(), H5T_STR_NULLPAD) < 0) {
      hdf5_fail(w, "making a string type");
    }
    std::string buf(n * ds.fixed_str_size, '\0');
    if (H5Dread(ds.id.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0) {
      hdf5_fail(w, "reading");
    }
    for (hsize_t i = 0; i < n; ++i) {
      const char* p = buf.data() + i * ds.fixed_str_size;
      out.emplace_back(p, strnlen(p, ds.fixed_str_size));
    }
    return out;
  }
  if (H5Tset_size(mem.get(), H5T_VARIABLE) < 0)
    hdf5_fail(w, "making a string type");
  Handle space(H5Dget_space(ds.id.get()), H5Sclose);
  if (!space.valid())
    hdf5_fail(w, "reading the shape");
  std::vector<char*> ptrs(n, nullptr);
  if (H5Dread(ds.id.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0) {
    hdf5_fail(w, "reading");
  }
  struct Reclaim {
    hid_t mem, space;
    std::vector<char*>& ptrs;
    ~Reclaim() { H5Dvlen_reclaim(mem, space, H5P_DEFAULT, ptrs.data()); }
  } reclaim{mem.get(), space.get(), ptrs};
  std::uint64_t total = 0;
  for (hsize_t i = 0; i < n; ++i) {
    const char* p = ptrs[i];
    const std::size_t len = p ? strnlen(p, kMaxIdBytes + 1) : 0;
    if (len > kMaxIdBytes)
      too_long(i);
    total += len;
    out.emplace_back(p ? p : "", len);
  }
  account(w, total);
  return out;
}

void Reader::check_count(const Attributes& a, const std::string& where, std::uint64_t n) {
  if (!a.count("count"))
    return;
  const std::uint64_t count =
      decimal_attr(a, where, "count", std::numeric_limits<std::uint64_t>::max());
  if (count != n) {
    fail(where, "attribute count = " + std::to_string(count) + " but there are " +
                    std::to_string(n) + " cases");
  }
}

MmaBatch Reader::read_mma(const Group& g, Attributes attrs, const std::string& name) {
  const std::string& where = g.where;
  MmaBatch b;
  b.name = name;
  b.fmt_a = format_attr(attrs, where, "fmt_a");
  b.fmt_b = format_attr(attrs, where, "fmt_b");
  const bool wide = is_hmma_input(b.fmt_a);
  if (wide) {
    if (b.fmt_b != b.fmt_a) {
      fail(where, "fmt_b '" + printable(attrs["fmt_b"]) + "' is not fmt_a '" +
                      printable(attrs["fmt_a"]) + "' (fp16, bf16 and tf32 operands pair alike)");
    }
  } else {
    if (!is_fp8(b.fmt_a))
      fail(where, "fmt_a '" + printable(attrs["fmt_a"]) + "' is not FP8, fp16, bf16 or tf32");
    if (!is_fp8(b.fmt_b))
      fail(where, "fmt_b '" + printable(attrs["fmt_b"]) + "' is not FP8");
  }
  if (attrs.count("acc")) {
    b.acc = format_attr(attrs, where, "acc");
    if (b.acc != Format::fp32 && !(b.acc == Format::fp16 && b.fmt_a == Format::fp16)) {
      fail(where, "acc '" + printable(attrs["acc"]) + "' is not fp32 (or fp16 for fp16 operands)");
    }
  }
  b.preset = attr(attrs, where, "preset");
  b.c_policy = attr(attrs, where, "c_policy");
  b.K = static_cast<std::uint32_t>(decimal_attr(attrs, where, "K", kMaxDim));

  const Dataset expect = open_dataset(g, "expect", Elem::u32, 1);
  const hsize_t n = expect.dims[0];
  check_count(attrs, where, n);
  for (const char* key : {"kind", "fmt_a", "fmt_b", "preset", "c_policy", "K", "count", "acc"}) {
    attrs.erase(key);
  }
  b.attrs = std::move(attrs);
  b.ids = read_strings(g, "id", n);
  if (!wide) {
    b.a = read_array<std::uint8_t>(g, "a", Elem::u8, {n, b.K});
    b.b = read_array<std::uint8_t>(g, "b", Elem::u8, {n, b.K});
  } else if (spec(b.fmt_a).width <= 16) {
    const auto a16 = read_array<std::uint16_t>(g, "a", Elem::u16, {n, b.K});
    const auto b16 = read_array<std::uint16_t>(g, "b", Elem::u16, {n, b.K});
    b.a_wide.assign(a16.begin(), a16.end());
    b.b_wide.assign(b16.begin(), b16.end());
  } else {
    // tf32: 19-bit codes in uint32 (check_batch refuses wider ones).
    b.a_wide = read_array<std::uint32_t>(g, "a", Elem::u32, {n, b.K});
    b.b_wide = read_array<std::uint32_t>(g, "b", Elem::u32, {n, b.K});
  }
  b.c = read_array<std::uint32_t>(g, "c", Elem::u32, {n});
  b.expect = read_numbers<std::uint32_t>(g, "expect", expect);
  return b;
}

GemmCase Reader::read_gemm_case(const Group& g) {
  const std::string& where = g.where;
  Attributes a = read_attrs(g.id.get(), where);
  GemmCase c;
  c.id = attr(a, where, "id");
  c.api = attr(a, where, "api");
  if (c.api != "scaled_mm" && c.api != "accumulate") {
    fail(where, "api '" + printable(c.api) + "' is not scaled_mm or accumulate");
  }
  c.profile = attr(a, where, "profile");
  c.fmt_a = format_attr(a, where, "fmt_a");
  c.fmt_b = format_attr(a, where, "fmt_b");
  c.out_dtype = format_attr(a, where, "out_dtype");
  c.fast = bool_attr(a, where, "fast");
  c.scale_a_bits = hex_attr(a, where, "scale_a_bits");
  c.scale_b_bits = hex_attr(a, where, "scale_b_bits");
  if (attr(a, where, "scale_result_bits") != "none") {
    c.scale_result_bits = hex_attr(a, where, "scale_result_bits");
  }
  c.splitk = attr(a, where, "splitk");
  c.M = decimal_attr(a, where, "M", kMaxDim);
  c.N = decimal_attr(a, where, "N", kMaxDim);
  c.K = decimal_attr(a, where, "K", kMaxDim);
  std::uint64_t macs = c.M * c.N; // both under 2^24: no overflow
  if (!checked_mul(macs, c.K, macs) || macs > kMaxGemmMacs) {
    fail(where, "M * N * K = " + std::to_string(c.M) + " * " + std::to_string(c.N) + " * " +
                    std::to_string(c.K) + " is over the limit of " + std::to_string(kMaxGemmMacs));
  }
  // What the case allocates when it runs (the operands widened to 32-bit codes and their
  // tensors besides), against the budget of this file, before any of it is read.
  const std::string over = work_over_budget(c.M, c.N, c.K, split_parts(c.splitk),
                                            5 * (c.M * c.K + c.N * c.K), bytes_.size());
  if (!over.empty())
    fail(where, over);
  if (a.count("expect_error"))
    c.expect_error = a["expect_error"];
  for (const char* k :
       {"id", "api", "profile", "fmt_a", "fmt_b", "out_dtype", "fast", "scale_a_bits",
        "scale_b_bits", "scale_result_bits", "splitk", "M", "N", "K", "expect_error"}) {
    a.erase(k);
  }
  c.attrs = std::move(a);
  c.a = read_array<std::uint8_t>(g, "a", Elem::u8, {c.M, c.K});
  c.b = read_array<std::uint8_t>(g, "b", Elem::u8, {c.N, c.K});
  if (c.expect_error.empty()) {
    c.expect = read_array<std::uint32_t>(g, "expect", Elem::u32, {c.M, c.N});
  }
  return c;
}

GemmCall Reader::read_gemm_call(const Group& g) {
  const std::string& where = g.where;
  Attributes a = read_attrs(g.id.get(), where);
  GemmCall c;
  c.id = attr(a, where, "id");
  c.call_json = attr(a, where, "call");
  const std::uint64_t n = decimal_attr(a, where, "outputs", kMaxLinksPerGroup);
  for (const char* k : {"id", "call", "outputs"})
    a.erase(k);
  c.attrs = std::move(a);
  {
    const Dataset ds = open_dataset(g, "input_storage", Elem::u8, 1);
    c.input_storage = read_numbers<std::uint8_t>(g, "input_storage", ds);
  }
  {
    const Dataset ds = open_dataset(g, "mat2_storage", Elem::u8, 1);
    c.mat2_storage = read_numbers<std::uint8_t>(g, "mat2_storage", ds);
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "out%03llu", static_cast<unsigned long long>(i));
    if (!g.has(buf))
      fail(where, std::string("output group '") + buf + "' is missing");
    const Group og = open_group(g, buf);
    const std::string& ow = og.where;
    Attributes oa = read_attrs(og.id.get(), ow);
    GemmCallOutput o;
    o.name = attr(oa, ow, "name");
    if (attr(oa, ow, "out_dtype") != "default")
      o.out_dtype = format_attr(oa, ow, "out_dtype");
    o.fast = bool_attr(oa, ow, "fast");
    o.splitk = attr(oa, ow, "splitk");
    const std::string shape = attr(oa, ow, "shape");
    std::size_t pos = 0;
    while (pos < shape.size()) {
      const auto comma = shape.find(',', pos);
      const std::string_view part = std::string_view(shape).substr(
          pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const auto v = parse_decimal(part);
      if (!v || *v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
          o.shape.size() >= kMaxShapeRank) {
        fail(ow, "shape '" + printable(shape) + "' is not a list of at most " +
                     std::to_string(kMaxShapeRank) + " decimal sizes");
      }
      o.shape.push_back(static_cast<std::int64_t>(*v));
      if (comma == std::string::npos)
        break;
      pos = comma + 1;
      if (pos == shape.size())
        fail(ow, "shape '" + printable(shape) + "' ends with a comma");
    }
    if (oa.count("expect_error"))
      o.expect_error = oa["expect_error"];
    if (o.expect_error.empty()) {
      const Dataset ds = open_dataset(og, "expect", Elem::u32, 1);
      o.expect = read_numbers<std::uint32_t>(og, "expect", ds);
    }
    c.outputs.push_back(std::move(o));
  }
  return c;
}

Recording Reader::read() {
  open_file();
  Group root;
  root.id = Handle(H5Gopen2(file_id_.get(), "/", H5P_DEFAULT), H5Gclose);
  if (!root.id.valid())
    fail("", "unreadable HDF5 (truncated or corrupt?): " + hdf5_error_text());
  list_members(root);
  Recording rec;
  Attributes top = read_attrs(root.id.get(), "");
  auto it = top.find("format");
  if (it == top.end() || it->second != kFormatName) {
    fail("", "not an " + std::string(kFormatName) + " file (format = '" +
                 (it == top.end() ? std::string("none") : printable(it->second)) + "')");
  }
  rec.attrs = std::move(top);
  if (!root.has(kCasesGroup))
    fail("", "group 'cases' is missing");
  const Group cases = open_group(root, kCasesGroup);
  for (const auto& member : cases.members) {
    const std::string& name = member.first;
    const Group g = open_group(cases, name);
    Attributes a = read_attrs(g.id.get(), g.where);
    const std::string kind = attr(a, g.where, "kind");
    if (kind == "mma") {
      MmaBatch b = read_mma(g, std::move(a), name);
      check_batch(b, file_);
      rec.mma.push_back(std::move(b));
    } else if (kind == "gemm" || kind == "gemm_call") {
      check_count(a, g.where, g.members.size());
      a.erase("kind");
      a.erase("count");
      if (kind == "gemm") {
        GemmBatch b{name, {}, std::move(a)};
        for (const auto& c : g.members)
          b.cases.push_back(read_gemm_case(open_group(g, c.first)));
        rec.gemm.push_back(std::move(b));
      } else {
        GemmCallBatch b{name, {}, std::move(a)};
        for (const auto& c : g.members)
          b.calls.push_back(read_gemm_call(open_group(g, c.first)));
        rec.gemm_call.push_back(std::move(b));
      }
    } else {
      fail(g.where, "case kind '" + printable(kind) + "' is not supported (mma, gemm, gemm_call)");
    }
  }
  return rec;
}

} // namespace

std::size_t Recording::case_count() const {
  std::size_t n = 0;
  for (const auto& b : mma)
    n += b.size();
  for (const auto& g : gemm)
    n += g.cases.size();
  for (const auto& g : gemm_call) {
    for (const auto& c : g.calls)
      n += c.outputs.size();
  }
  return n;
}

void check_batch(const MmaBatch& b, const std::string& where) {
  const std::size_t n = b.ids.size();
  if (b.name.empty() || b.name.find('/') != std::string::npos) {
    throw RecordingError(where + ": batch name '" + printable(b.name) +
                         "' must be non-empty without '/'");
  }
  std::uint64_t nk = 0;
  const bool sizes =
      checked_mul(n, b.K, nk) && b.c.size() == n && b.expect.size() == n &&
      (b.wide() ? b.a_wide.size() == nk && b.b_wide.size() == nk && b.a.empty() && b.b.empty()
                : b.a.size() == nk && b.b.size() == nk && b.a_wide.empty() && b.b_wide.empty());
  if (!sizes) {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has inconsistent sizes");
  }
  // Operands are FP8 codes (any pair), or one of fp16, bf16, tf32 for both.
  const bool formats_ok =
      (is_fp8(b.fmt_a) && is_fp8(b.fmt_b)) || (is_hmma_input(b.fmt_a) && b.fmt_a == b.fmt_b);
  if (!formats_ok) {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has operand formats " +
                         format_name(b.fmt_a) + " x " + format_name(b.fmt_b) +
                         " (expected FP8, or fp16, bf16 or tf32 for both)");
  }
  if (b.acc != Format::fp32 && !(b.acc == Format::fp16 && b.fmt_a == Format::fp16)) {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has accumulator " +
                         format_name(b.acc) + " (expected fp32, or fp16 for fp16 operands)");
  }
  if (b.acc == Format::fp16) {
    // c and expect are binary32 patterns of fp16 values (any NaN is taken).
    for (const auto* v : {&b.c, &b.expect}) {
      for (std::uint32_t bits : *v) {
        const Exact x = decode_bits(Format::fp32, bits);
        if (x.cls == ValueClass::nan)
          continue;
        const std::uint32_t h = encode_exact_bits(Format::fp16, x, Overflow::infinity);
        if (encode_exact_bits(Format::fp32, decode_bits(Format::fp16, h), Overflow::infinity) !=
            bits) {
          throw RecordingError(where + ": batch '" + printable(b.name) +
                               "' has an fp16 accumulator but holds " + hex32(bits) +
                               ", not an fp16 value");
        }
      }
    }
  }
  if (b.wide()) {
    // Codes beyond the format's width would be silently masked by the model.
    const std::uint32_t mask = spec(b.fmt_a).code_mask();
    for (const auto* v : {&b.a_wide, &b.b_wide}) {
      for (std::uint32_t code : *v) {
        if ((code & ~mask) != 0) {
          throw RecordingError(where + ": batch '" + printable(b.name) + "' holds code " +
                               std::to_string(code) + ", wider than a " + format_name(b.fmt_a) +
                               " code");
        }
      }
    }
  }
  if (b.c_policy != "from_file" && b.c_policy != "zero") {
    throw RecordingError(where + ": batch '" + printable(b.name) + "' has c_policy '" +
                         printable(b.c_policy) + "' (expected from_file or zero)");
  }
  // IDs name cases in logs and reports: "<set>/<rest>", printable ASCII without spaces.
  const std::string prefix = b.name + "/";
  std::set<std::string> seen;
  for (const auto& id : b.ids) {
    const bool printable_id = std::all_of(id.begin(), id.end(), [](char ch) {
      return static_cast<unsigned char>(ch) > 0x20 && static_cast<unsigned char>(ch) < 0x7F;
    });
    if (id.size() <= prefix.size() || id.compare(0, prefix.size(), prefix) != 0 || !printable_id) {
      throw RecordingError(where + ": batch '" + printable(b.name) + "': case id '" +
                           printable(id) + "' is not '" + printable(b.name) +
                           "/...' in printable ASCII without spaces");
    }
    if (!seen.insert(id).second) {
      throw RecordingError(where + ": duplicate case id '" + printable(id) + "'");
    }
  }
}

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

Recording read_recording_image(std::string_view bytes, const std::string& name, ReadGuard guard,
                               double child_timeout_s) {
  const std::string file = printable(name, 256);
  const auto parse = [&] { return Reader(bytes, file).read(); };
  if (guard == ReadGuard::in_process)
    return parse();
  // Room for the decoded data twice over (libhdf5's buffers and ours), and for libhdf5's
  // own structures; a decompression bomb or a corrupt size runs into it in the child.
  const std::uint64_t budget = (4ull << 30) + 2 * static_cast<std::uint64_t>(bytes.size());
  const double timeout_s =
      child_timeout_s > 0 ? child_timeout_s : 20.0 + static_cast<double>(bytes.size()) / (2 << 20);
  // The child sends what it read; this process never runs libhdf5 on the bytes (in the
  // production mode), since libhdf5 is not even deterministic on corrupt files.
  const std::uint64_t max_result = 2 * kMaxDecodedBytes + (64ull << 20);
  const detail::GuardOutcome out = detail::run_in_child(
      file, [&] { return detail::encode_recording(parse()); }, budget, timeout_s, max_result);
  switch (out.kind) {
  case detail::GuardOutcome::ok:
    if (guard == ReadGuard::child_then_parent)
      return parse();
    return detail::decode_recording(out.result, file);
  case detail::GuardOutcome::clean_error:
    if (guard == ReadGuard::child_then_parent)
      (void)parse(); // throws the same error
    throw RecordingError(out.message);
  case detail::GuardOutcome::failed:
    break;
  }
  throw RecordingError(out.message);
}

Recording read_recording(const fs::path& path, ReadGuard guard) {
  std::string bytes;
  try {
    bytes = support::read_input_file(path, support::kMaxRecordingBytes, "recording");
  } catch (const support::FileError& e) {
    throw RecordingError(e.what());
  }
  return read_recording_image(bytes, path.string(), guard);
}

} // namespace mmaemu::recordings
