// SPDX-License-Identifier: BSD-2-Clause
#include "recording_wire.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

namespace mmaemu::recordings::detail {

namespace {

constexpr std::string_view kMagic = "mmaemu-recording-wire/1\n";

class Writer {
public:
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
  }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void bytes(const std::vector<std::uint8_t>& v) {
    u64(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size());
  }
  void words(const std::vector<std::uint32_t>& v) {
    u64(v.size());
    for (std::uint32_t w : v) {
      for (int i = 0; i < 4; ++i)
        out_.push_back(static_cast<char>((w >> (8 * i)) & 0xFFu));
    }
  }
  void attrs(const Attributes& a) {
    u64(a.size());
    for (const auto& [k, v] : a) {
      str(k);
      str(v);
    }
  }
  void format(Format f) { str(format_name(f)); }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

class Cursor {
public:
  Cursor(std::string_view in, const std::string& name) : in_(in), name_(name) {}

  [[noreturn]] void bad() const {
    throw RecordingError(name_ + ": the reading process sent a malformed result");
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
    }
    pos_ += 8;
    return v;
  }
  // A count of items of at least `min_size` bytes each: never more than what is left.
  std::uint64_t count(std::uint64_t min_size) {
    const std::uint64_t n = u64();
    if (n > (in_.size() - pos_) / min_size)
      bad();
    return n;
  }
  std::string str() {
    const std::uint64_t n = count(1);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::vector<std::uint8_t> bytes() {
    const std::uint64_t n = count(1);
    std::vector<std::uint8_t> v(n);
    if (n)
      std::memcpy(v.data(), in_.data() + pos_, n);
    pos_ += n;
    return v;
  }
  std::vector<std::uint32_t> words() {
    const std::uint64_t n = count(4);
    std::vector<std::uint32_t> v(n);
    for (auto& w : v) {
      w = 0;
      for (int i = 0; i < 4; ++i) {
        w |= static_cast<std::uint32_t>(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
      }
      pos_ += 4;
    }
    return v;
  }
  Attributes attrs() {
    Attributes a;
    const std::uint64_t n = count(16);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string k = str();
      a[std::move(k)] = str();
    }
    return a;
  }
  Format format() {
    const auto f = parse_format(str());
    if (!f)
      bad();
    return *f;
  }
  bool flag() {
    const std::uint64_t v = u64();
    if (v > 1)
      bad();
    return v == 1;
  }
  void magic() {
    need(kMagic.size());
    if (in_.substr(0, kMagic.size()) != kMagic)
      bad();
    pos_ = kMagic.size();
  }
  void end() const {
    if (pos_ != in_.size())
      bad();
  }

private:
  void need(std::uint64_t n) const {
    if (in_.size() - pos_ < n)
      bad();
  }
  std::string_view in_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

} // namespace

std::string encode_recording(const Recording& rec) {
  std::string out = std::string(kMagic);
  Writer body;
  body.attrs(rec.attrs);
  body.u64(rec.mma.size());
  for (const MmaBatch& b : rec.mma) {
    body.str(b.name);
    body.format(b.fmt_a);
    body.format(b.fmt_b);
    body.str(b.preset);
    body.u64(b.K);
    body.str(b.c_policy);
    body.u64(b.ids.size());
    for (const auto& id : b.ids)
      body.str(id);
    body.bytes(b.a);
    body.bytes(b.b);
    body.words(b.c);
    body.words(b.expect);
    body.attrs(b.attrs);
    body.words(b.a_wide);
    body.words(b.b_wide);
    body.format(b.acc);
  }
  body.u64(rec.gemm.size());
  for (const GemmBatch& g : rec.gemm) {
    body.str(g.name);
    body.attrs(g.attrs);
    body.u64(g.cases.size());
    for (const GemmCase& c : g.cases) {
      body.str(c.id);
      body.str(c.api);
      body.str(c.profile);
      body.format(c.fmt_a);
      body.format(c.fmt_b);
      body.format(c.out_dtype);
      body.u64(c.fast ? 1 : 0);
      body.u64(c.scale_a_bits);
      body.u64(c.scale_b_bits);
      body.u64(c.scale_result_bits ? 1 : 0);
      body.u64(c.scale_result_bits.value_or(0));
      body.str(c.splitk);
      body.u64(c.M);
      body.u64(c.N);
      body.u64(c.K);
      body.bytes(c.a);
      body.bytes(c.b);
      body.words(c.expect);
      body.str(c.expect_error);
      body.attrs(c.attrs);
    }
  }
  body.u64(rec.gemm_call.size());
  for (const GemmCallBatch& g : rec.gemm_call) {
    body.str(g.name);
    body.attrs(g.attrs);
    body.u64(g.calls.size());
    for (const GemmCall& c : g.calls) {
      body.str(c.id);
      body.str(c.call_json);
      body.bytes(c.input_storage);
      body.bytes(c.mat2_storage);
      body.attrs(c.attrs);
      body.u64(c.outputs.size());
      for (const GemmCallOutput& o : c.outputs) {
        body.str(o.name);
        body.u64(o.out_dtype ? 1 : 0);
        if (o.out_dtype)
          body.format(*o.out_dtype);
        body.u64(o.fast ? 1 : 0);
        body.str(o.splitk);
        body.u64(o.shape.size());
        for (std::int64_t d : o.shape)
          body.u64(static_cast<std::uint64_t>(d));
        body.words(o.expect);
        body.str(o.expect_error);
      }
    }
  }
  out += body.take();
  return out;
}

Recording decode_recording(std::string_view bytes, const std::string& name) {
  Cursor in(bytes, name);
  in.magic();
  Recording rec;
  rec.attrs = in.attrs();
  for (std::uint64_t n = in.count(8), i = 0; i < n; ++i) {
    MmaBatch b;
    b.name = in.str();
    b.fmt_a = in.format();
    b.fmt_b = in.format();
    b.preset = in.str();
    const std::uint64_t K = in.u64();
    if (K > kMaxDim)
      in.bad();
    b.K = static_cast<std::uint32_t>(K);
    b.c_policy = in.str();
    for (std::uint64_t m = in.count(8), j = 0; j < m; ++j)
      b.ids.push_back(in.str());
    b.a = in.bytes();
    b.b = in.bytes();
    b.c = in.words();
    b.expect = in.words();
    b.attrs = in.attrs();
    b.a_wide = in.words();
    b.b_wide = in.words();
    b.acc = in.format();
    check_batch(b, name);
    rec.mma.push_back(std::move(b));
  }
  for (std::uint64_t n = in.count(8), i = 0; i < n; ++i) {
    GemmBatch g;
    g.name = in.str();
    g.attrs = in.attrs();
    for (std::uint64_t m = in.count(8), j = 0; j < m; ++j) {
      GemmCase c;
      c.id = in.str();
      c.api = in.str();
      c.profile = in.str();
      c.fmt_a = in.format();
      c.fmt_b = in.format();
      c.out_dtype = in.format();
      c.fast = in.flag();
      const std::uint64_t sa = in.u64(), sb = in.u64();
      const bool has_sr = in.flag();
      const std::uint64_t sr = in.u64();
      if (sa > 0xFFFFFFFFu || sb > 0xFFFFFFFFu || sr > 0xFFFFFFFFu)
        in.bad();
      c.scale_a_bits = static_cast<std::uint32_t>(sa);
      c.scale_b_bits = static_cast<std::uint32_t>(sb);
      if (has_sr)
        c.scale_result_bits = static_cast<std::uint32_t>(sr);
      c.splitk = in.str();
      c.M = in.u64();
      c.N = in.u64();
      c.K = in.u64();
      if (c.M > kMaxDim || c.N > kMaxDim || c.K > kMaxDim)
        in.bad();
      c.a = in.bytes();
      c.b = in.bytes();
      c.expect = in.words();
      c.expect_error = in.str();
      c.attrs = in.attrs();
      // The sizes the reader checked against the declared shapes.
      if (c.a.size() != c.M * c.K || c.b.size() != c.N * c.K ||
          (c.expect_error.empty() && c.expect.size() != c.M * c.N)) {
        in.bad();
      }
      g.cases.push_back(std::move(c));
    }
    rec.gemm.push_back(std::move(g));
  }
  for (std::uint64_t n = in.count(8), i = 0; i < n; ++i) {
    GemmCallBatch g;
    g.name = in.str();
    g.attrs = in.attrs();
    for (std::uint64_t m = in.count(8), j = 0; j < m; ++j) {
      GemmCall c;
      c.id = in.str();
      c.call_json = in.str();
      c.input_storage = in.bytes();
      c.mat2_storage = in.bytes();
      c.attrs = in.attrs();
      for (std::uint64_t k = in.count(8), o = 0; o < k; ++o) {
        GemmCallOutput out;
        out.name = in.str();
        if (in.flag())
          out.out_dtype = in.format();
        out.fast = in.flag();
        out.splitk = in.str();
        for (std::uint64_t r = in.count(8), d = 0; d < r; ++d) {
          const std::uint64_t v = in.u64();
          if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            in.bad();
          out.shape.push_back(static_cast<std::int64_t>(v));
        }
        out.expect = in.words();
        out.expect_error = in.str();
        c.outputs.push_back(std::move(out));
      }
      g.calls.push_back(std::move(c));
    }
    rec.gemm_call.push_back(std::move(g));
  }
  in.end();
  return rec;
}

} // namespace mmaemu::recordings::detail
