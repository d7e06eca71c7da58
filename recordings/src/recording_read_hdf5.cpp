// SPDX-License-Identifier: BSD-2-Clause
// The reader's checked access to an HDF5 file image (the C API): the file opened from memory
// with no other file reachable, groups whose members are all hard links, string attributes read
// and parsed strictly (canonical decimals, "0x" and 8 hex digits, format names), datasets whose
// storage, filters, class, shape and chunks are checked before a byte is allocated, and every
// allocation charged to the file's decoding budget (budget.hpp).

#include "recording_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>

#include "mmaemu/recordings/budget.hpp"
#include "mmaemu/support/text.hpp"
#include "recording_layout.hpp"

namespace mmaemu::recordings::detail {

using support::printable;

namespace {

// The innermost message of the HDF5 error stack (where the problem was found), cleared.
herr_t innermost_error(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (n == 0 && err) {
    *out = std::string(err->func_name ? err->func_name : "?") + ": " +
           (err->desc ? err->desc : "error");
  }
  return 0;
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

// The core driver's callbacks for an ImageRef: they hand HDF5 the caller's buffer instead of
// copies (a recording may be up to 1 GiB), and refuse to grow it.
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

} // namespace

std::string hdf5_error_text() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? std::string("no detail") : printable(text, 200);
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

// The element types read_mma, read_gemm_case and read_gemm_call read (recording_read.cpp).
template std::vector<std::uint8_t>
Reader::read_numbers<std::uint8_t>(const Group&, const std::string&, const Dataset&);
template std::vector<std::uint32_t>
Reader::read_numbers<std::uint32_t>(const Group&, const std::string&, const Dataset&);
template std::vector<std::uint8_t> Reader::read_array<std::uint8_t>(const Group&,
                                                                    const std::string&, Elem,
                                                                    const std::vector<hsize_t>&);
template std::vector<std::uint16_t> Reader::read_array<std::uint16_t>(const Group&,
                                                                      const std::string&, Elem,
                                                                      const std::vector<hsize_t>&);
template std::vector<std::uint32_t> Reader::read_array<std::uint32_t>(const Group&,
                                                                      const std::string&, Elem,
                                                                      const std::vector<hsize_t>&);

} // namespace mmaemu::recordings::detail
