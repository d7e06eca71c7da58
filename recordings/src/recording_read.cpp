// SPDX-License-Identifier: BSD-2-Clause
// Reading mmaemu-recording/1 files: the format's layout (docs/recordings.md) walked set by set
// (mma batches, gemm cases, gemm_call calls) on the checked access of recording_read_hdf5.cpp;
// and the entry points, which parse in a child process first (hdf5_guard.cpp) and take back
// what it read through recording_wire.cpp, so that libhdf5 never runs on the bytes here.

#include "mmaemu/recordings/recording.hpp"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "hdf5_guard.hpp"
#include "mmaemu/recordings/budget.hpp"
#include "mmaemu/support/input_file.hpp"
#include "mmaemu/support/text.hpp"
#include "recording_layout.hpp"
#include "recording_reader.hpp"
#include "recording_wire.hpp"

namespace mmaemu::recordings {

namespace fs = std::filesystem;
using support::printable;

namespace detail {

namespace {

constexpr std::uint64_t kMaxShapeRank = 8;

} // namespace

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

} // namespace detail

using detail::Reader;

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
