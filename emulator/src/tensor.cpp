// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/tensor.hpp"

#include <sstream>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu {

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<std::int64_t>(shape[i], 1);
  }
  return s;
}

namespace {

std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) throw ValueError("tensor: negative dimension " + std::to_string(d));
    n *= d;
  }
  return n;
}

}  // namespace

Tensor Tensor::zeros(Format dtype, std::vector<std::int64_t> shape) {
  const std::int64_t n = count(shape);
  auto strides = contiguous_strides(shape);
  return strided(dtype, std::move(shape), std::move(strides), 0, n);
}

Tensor Tensor::strided(Format dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::int64_t storage_offset,
                       std::int64_t storage_elems) {
  const auto bytes = static_cast<std::size_t>(storage_elems) * (spec(dtype).width / 8);
  return view_of(dtype, std::move(shape), std::move(strides), storage_offset,
                 std::make_shared<std::vector<std::uint8_t>>(bytes, 0));
}

Tensor Tensor::view_of(Format dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::int64_t storage_offset,
                       std::shared_ptr<std::vector<std::uint8_t>> storage) {
  if (shape.size() != strides.size()) {
    throw ValueError("tensor: shape has " + std::to_string(shape.size()) + " dimensions but strides " +
                     std::to_string(strides.size()));
  }
  if (storage_offset < 0) throw ValueError("tensor: negative storage offset");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = storage_offset;
  t.storage_ = storage ? std::move(storage) : std::make_shared<std::vector<std::uint8_t>>();
  // Every addressable element must lie inside the storage.
  const std::int64_t n = count(t.shape_);
  if (n > 0) {
    std::int64_t last = storage_offset;
    for (std::size_t i = 0; i < t.shape_.size(); ++i) {
      if (t.strides_[i] < 0) throw ValueError("tensor: negative stride");
      last += (t.shape_[i] - 1) * t.strides_[i];
    }
    const auto elems = static_cast<std::int64_t>(t.storage_->size()) / t.element_size();
    if (last >= elems) {
      throw ValueError("tensor: layout reaches element " + std::to_string(last) +
                       " of a storage of " + std::to_string(elems));
    }
  }
  return t;
}

Tensor Tensor::from_bits(Format dtype, std::vector<std::int64_t> shape,
                         const std::vector<std::uint32_t>& bits) {
  Tensor t = zeros(dtype, std::move(shape));
  if (static_cast<std::int64_t>(bits.size()) != t.numel()) {
    throw ValueError("tensor: " + std::to_string(bits.size()) + " values for " +
                     std::to_string(t.numel()) + " elements");
  }
  for (std::size_t i = 0; i < bits.size(); ++i) t.set_bits_flat(static_cast<std::int64_t>(i), bits[i]);
  return t;
}

Tensor Tensor::scalar_f32(std::uint32_t bits, bool scalar0d) {
  return from_bits(Format::fp32, scalar0d ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1},
                   {bits});
}

std::int64_t Tensor::numel() const { return count(shape_); }

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;  // torch: every empty tensor is contiguous
  std::int64_t expected = 1;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

bool Tensor::is_row_major() const {
  return dim() == 2 && (strides_[1] == 1 || shape_[1] <= 1) &&
         strides_[0] >= std::max<std::int64_t>(1, shape_[1]);
}

bool Tensor::is_col_major() const {
  return dim() == 2 && (strides_[0] == 1 || shape_[0] <= 1) &&
         strides_[1] >= std::max<std::int64_t>(1, shape_[0]);
}

Tensor Tensor::t() const {
  if (dim() != 2) throw ValueError("tensor: t() needs 2 dimensions, got " + std::to_string(dim()));
  Tensor v = *this;
  std::swap(v.shape_[0], v.shape_[1]);
  std::swap(v.strides_[0], v.strides_[1]);
  return v;
}

std::int64_t Tensor::element_offset(std::int64_t flat) const {
  std::int64_t off = offset_;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    const std::int64_t d = shape_[i];
    off += (flat % d) * strides_[i];
    flat /= d;
  }
  return off;
}

namespace {

std::uint32_t load(const std::uint8_t* p, int size) {
  std::uint32_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | p[i];  // little-endian storage
  return v;
}

void store(std::uint8_t* p, int size, std::uint32_t v) {
  for (int i = 0; i < size; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

std::uint32_t Tensor::bits_flat(std::int64_t i) const {
  const int es = element_size();
  return load(storage_->data() + element_offset(i) * es, es);
}

void Tensor::set_bits_flat(std::int64_t i, std::uint32_t bits) {
  const int es = element_size();
  store(storage_->data() + element_offset(i) * es, es, bits & spec(dtype_).code_mask());
}

std::uint32_t Tensor::bits_at(std::int64_t r, std::int64_t c) const {
  const int es = element_size();
  return load(storage_->data() + (offset_ + r * strides_[0] + c * strides_[1]) * es, es);
}

void Tensor::set_bits_at(std::int64_t r, std::int64_t c, std::uint32_t bits) {
  const int es = element_size();
  store(storage_->data() + (offset_ + r * strides_[0] + c * strides_[1]) * es, es,
        bits & spec(dtype_).code_mask());
}

std::vector<std::uint32_t> Tensor::to_bits() const {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(numel()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = bits_flat(static_cast<std::int64_t>(i));
  return out;
}

std::string Tensor::describe() const {
  std::ostringstream os;
  os << spec(dtype_).torch_name << '[';
  for (std::size_t i = 0; i < shape_.size(); ++i) os << (i ? ", " : "") << shape_[i];
  os << "] strides [";
  for (std::size_t i = 0; i < strides_.size(); ++i) os << (i ? ", " : "") << strides_[i];
  os << "] offset " << offset_;
  return os.str();
}

}  // namespace mmaemu
