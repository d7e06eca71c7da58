// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/emulator/tensor.hpp"

#include <algorithm>
#include <sstream>

#include "mmaemu/emulator/errors.hpp"

namespace mmaemu {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// tf32 is an operand format of tensor-core instructions (model::dot_codes), not a torch
// dtype: no tensor holds it (its 19-bit codes have no element size of their own).
void check_dtype(Format dtype) {
  if (dtype == Format::tf32) {
    throw ValueError("tensor: dtype tf32 is not a tensor dtype (torch has none); tf32 codes are "
                     "instruction operands (model::dot_codes)");
  }
}

void check_rank(const std::vector<std::int64_t>& shape) {
  if (shape.size() > static_cast<std::size_t>(kMaxTensorDims)) {
    throw ValueError("tensor: " + std::to_string(shape.size()) + " dimensions, more than " +
                     std::to_string(kMaxTensorDims));
  }
}

// The element count; ValueError for a negative dimension or a count beyond int64.
std::int64_t count(const std::vector<std::int64_t>& shape) {
  for (auto d : shape) {
    if (d < 0)
      throw ValueError("tensor: negative dimension " + std::to_string(d));
  }
  for (auto d : shape) {
    if (d == 0)
      return 0; // an empty tensor, whatever the other dimensions are
  }
  std::int64_t n = 1;
  bool overflow = false;
  for (auto d : shape)
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  if (overflow) {
    throw ValueError("tensor: shape " + shape_text(shape) + " has more than 2^63-1 elements");
  }
  return n;
}

void check_gemm_dim(std::int64_t v, const char* name) {
  if (v < 0)
    throw ValueError(std::string(name) + " = " + std::to_string(v) + " must be >= 0");
  if (v > kMaxGemmDim) {
    throw ValueError(std::string(name) + " = " + std::to_string(v) +
                     " is over the emulator's limit of " + std::to_string(kMaxGemmDim) +
                     " (2^31-1)");
  }
}

void check_gemm_product(std::int64_t a, std::int64_t b, const char* name) {
  const std::int64_t p = a * b; // both <= 2^31-1: no overflow
  if (p > kMaxTensorElements) {
    throw ValueError(std::string(name) + " = " + std::to_string(p) +
                     " elements is over the emulator's limit of " +
                     std::to_string(kMaxTensorElements) + " (2^40)");
  }
}

} // namespace

void check_gemm_size(std::int64_t M, std::int64_t N, std::int64_t K) {
  check_gemm_dim(M, "M");
  check_gemm_dim(N, "N");
  check_gemm_dim(K, "K");
  check_gemm_product(M, K, "M*K");
  check_gemm_product(K, N, "K*N");
  check_gemm_product(M, N, "M*N");
}

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    if (i > 0 && __builtin_mul_overflow(acc, std::max<std::int64_t>(shape[i], 1), &acc)) {
      throw ValueError("tensor: the strides of shape " + shape_text(shape) +
                       " do not fit in int64");
    }
  }
  return s;
}

Tensor Tensor::zeros(Format dtype, std::vector<std::int64_t> shape) {
  check_rank(shape);
  const std::int64_t n = count(shape);
  auto strides = contiguous_strides(shape);
  return strided(dtype, std::move(shape), std::move(strides), 0, n);
}

Tensor Tensor::meta(Format dtype, std::vector<std::int64_t> shape) {
  check_dtype(dtype);
  check_rank(shape);
  count(shape);
  Tensor t;
  t.dtype_ = dtype;
  t.strides_ = contiguous_strides(shape);
  t.shape_ = std::move(shape);
  t.storage_ = std::make_shared<std::vector<std::uint8_t>>();
  t.data_ = t.storage_->data();
  t.meta_ = true;
  return t;
}

Tensor Tensor::strided(Format dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::int64_t storage_offset,
                       std::int64_t storage_elems) {
  if (storage_elems < 0 || storage_elems > kMaxTensorElements) {
    throw ValueError("tensor: a storage of " + std::to_string(storage_elems) +
                     " elements is outside 0.." + std::to_string(kMaxTensorElements) +
                     " (the emulator's limit, 2^40)");
  }
  check_dtype(dtype);
  check_rank(shape);
  const auto bytes = static_cast<std::size_t>(storage_elems) * (spec(dtype).width / 8);
  return view_of(dtype, std::move(shape), std::move(strides), storage_offset,
                 std::make_shared<std::vector<std::uint8_t>>(bytes, 0));
}

Tensor Tensor::view_of(Format dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::int64_t storage_offset,
                       std::shared_ptr<std::vector<std::uint8_t>> storage) {
  if (!storage)
    storage = std::make_shared<std::vector<std::uint8_t>>();
  Tensor t =
      checked_view(dtype, std::move(shape), std::move(strides), storage_offset, storage->size());
  t.data_ = storage->data();
  t.bytes_ = storage->size();
  t.storage_ = std::move(storage);
  return t;
}

Tensor Tensor::borrow(Format dtype, std::vector<std::int64_t> shape,
                      std::vector<std::int64_t> strides, std::int64_t storage_offset,
                      std::uint8_t* data, std::size_t bytes, std::shared_ptr<const void> owner) {
  if (data == nullptr && bytes != 0)
    throw ValueError("tensor: borrowed storage of " + std::to_string(bytes) + " bytes at null");
  Tensor t = checked_view(dtype, std::move(shape), std::move(strides), storage_offset, bytes);
  t.data_ = data;
  t.bytes_ = bytes;
  t.owner_ = std::move(owner);
  t.borrowed_ = true;
  return t;
}

Tensor Tensor::checked_view(Format dtype, std::vector<std::int64_t> shape,
                            std::vector<std::int64_t> strides, std::int64_t storage_offset,
                            std::size_t bytes) {
  check_dtype(dtype);
  check_rank(shape);
  if (shape.size() != strides.size()) {
    throw ValueError("tensor: shape has " + std::to_string(shape.size()) +
                     " dimensions but strides " + std::to_string(strides.size()));
  }
  if (storage_offset < 0) {
    throw ValueError("tensor: negative storage offset " + std::to_string(storage_offset));
  }
  for (auto s : strides) {
    if (s < 0)
      throw ValueError("tensor: negative stride " + std::to_string(s));
  }
  const std::int64_t n = count(shape);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = storage_offset;
  // Every addressable element must lie inside the storage: the last one is at
  // offset + sum((size - 1) * stride), computed without overflow.
  if (n > 0) {
    const auto elems =
        static_cast<std::int64_t>(bytes / static_cast<std::size_t>(t.element_size()));
    std::int64_t last = storage_offset;
    bool overflow = false;
    for (std::size_t i = 0; i < t.shape_.size() && !overflow; ++i) {
      std::int64_t step = 0;
      overflow = __builtin_mul_overflow(t.shape_[i] - 1, t.strides_[i], &step) ||
                 __builtin_add_overflow(last, step, &last);
    }
    if (overflow) {
      throw ValueError("tensor: layout " + shape_text(t.shape_) + " strides " +
                       shape_text(t.strides_) + " offset " + std::to_string(storage_offset) +
                       " reaches beyond element 2^63-1, outside a storage of " +
                       std::to_string(elems));
    }
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
  for (std::size_t i = 0; i < bits.size(); ++i)
    t.set_bits_flat(static_cast<std::int64_t>(i), bits[i]);
  return t;
}

Tensor Tensor::scalar_f32(std::uint32_t bits, bool scalar0d) {
  return from_bits(Format::fp32,
                   scalar0d ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1}, {bits});
}

std::int64_t Tensor::numel() const {
  return count(shape_);
}

bool Tensor::is_contiguous() const {
  if (numel() == 0)
    return true; // torch: every empty tensor is contiguous
  std::int64_t expected = 1;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1)
      continue;
    if (strides_[i] != expected)
      return false;
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
  if (dim() != 2)
    throw ValueError("tensor: t() needs 2 dimensions, got " + std::to_string(dim()));
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
  for (int i = size - 1; i >= 0; --i)
    v = (v << 8) | p[i]; // little-endian storage
  return v;
}

void store(std::uint8_t* p, int size, std::uint32_t v) {
  for (int i = 0; i < size; ++i)
    p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

} // namespace

void Tensor::require_storage() const {
  if (meta_) {
    throw ValueError("tensor: " + describe() + " is a meta tensor (a shape without storage)");
  }
}

std::uint32_t Tensor::bits_flat(std::int64_t i) const {
  require_storage();
  const int es = element_size();
  return load(data_ + element_offset(i) * es, es);
}

void Tensor::set_bits_flat(std::int64_t i, std::uint32_t bits) {
  require_storage();
  const int es = element_size();
  store(data_ + element_offset(i) * es, es, bits & spec(dtype_).code_mask());
}

std::uint32_t Tensor::bits_at(std::int64_t r, std::int64_t c) const {
  require_storage();
  const int es = element_size();
  return load(data_ + (offset_ + r * strides_[0] + c * strides_[1]) * es, es);
}

void Tensor::set_bits_at(std::int64_t r, std::int64_t c, std::uint32_t bits) {
  require_storage();
  const int es = element_size();
  store(data_ + (offset_ + r * strides_[0] + c * strides_[1]) * es, es,
        bits & spec(dtype_).code_mask());
}

std::vector<std::uint32_t> Tensor::to_bits() const {
  require_storage();
  std::vector<std::uint32_t> out(static_cast<std::size_t>(numel()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = bits_flat(static_cast<std::int64_t>(i));
  return out;
}

std::string Tensor::describe() const {
  std::ostringstream os;
  os << spec(dtype_).torch_name << '[';
  for (std::size_t i = 0; i < shape_.size(); ++i)
    os << (i ? ", " : "") << shape_[i];
  os << "] strides [";
  for (std::size_t i = 0; i < strides_.size(); ++i)
    os << (i ? ", " : "") << strides_[i];
  os << "] offset " << offset_;
  return os.str();
}

} // namespace mmaemu
