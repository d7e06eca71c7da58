// SPDX-License-Identifier: BSD-2-Clause
#pragma once
// A small tensor type that models torch's layouts exactly (shape, strides in elements,
// storage offset, owning or viewing a byte buffer) for the scaled_mm API. Elements are
// read and written as bit patterns; nothing converts them through float formatting.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mmaemu/emulator/format.hpp"

namespace mmaemu {

enum class Device { cpu };

// Size limits of the emulator (docs/api.md). Every size, stride and offset product is computed
// with overflow checks; a tensor or call over a limit is a ValueError before anything is
// allocated.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 40; // one storage
inline constexpr std::int64_t kMaxGemmDim = (std::int64_t{1} << 31) - 1;  // each of M, N, K
inline constexpr int kMaxTensorDims = 64;

// Throws ValueError naming the first size out of range: M, N or K negative or over
// kMaxGemmDim, or M*K, K*N or M*N over kMaxTensorElements.
void check_gemm_size(std::int64_t M, std::int64_t N, std::int64_t K);

class Tensor {
public:
  Tensor() = default;

  // A contiguous (row-major) tensor of zero bits. ValueError for a negative dimension or
  // more than kMaxTensorElements elements.
  static Tensor zeros(Format dtype, std::vector<std::int64_t> shape);
  // A contiguous tensor with a shape and no storage (torch's device "meta"): for validation
  // (explain) of calls of any size without allocating. Reading or writing its elements is a
  // ValueError. ValueError if the element count does not fit in int64.
  static Tensor meta(Format dtype, std::vector<std::int64_t> shape);
  // A view of a fresh zero storage of `storage_elems` elements with the given layout
  // (0 <= storage_elems <= kMaxTensorElements).
  static Tensor strided(Format dtype, std::vector<std::int64_t> shape,
                        std::vector<std::int64_t> strides, std::int64_t storage_offset,
                        std::int64_t storage_elems);
  // A contiguous tensor holding `bits` (row-major order, one pattern per element).
  static Tensor from_bits(Format dtype, std::vector<std::int64_t> shape,
                          const std::vector<std::uint32_t>& bits);
  // A one-element fp32 tensor (shape {} when scalar0d, else {1}).
  static Tensor scalar_f32(std::uint32_t bits, bool scalar0d = false);
  // A view of caller-owned bytes (kept alive by `owner`, which may be null for borrowed memory).
  // ValueError unless sizes, strides and offset are non-negative, at most kMaxTensorDims
  // dimensions, and offset + sum((size - 1) * stride) < storage elements, computed without
  // overflow.
  static Tensor view_of(Format dtype, std::vector<std::int64_t> shape,
                        std::vector<std::int64_t> strides, std::int64_t storage_offset,
                        std::shared_ptr<std::vector<std::uint8_t>> storage);
  // The same over `bytes` bytes at `data` that the tensor does not own (no copy): a NumPy
  // array's or a torch tensor's memory, say. `owner` (may be null) is kept alive by the
  // tensor and its copies; with a null owner the caller keeps the bytes alive while the
  // tensor is used. storage() is null for such a tensor; data() is the way to its bytes.
  static Tensor borrow(Format dtype, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> strides, std::int64_t storage_offset,
                       std::uint8_t* data, std::size_t bytes, std::shared_ptr<const void> owner);

  bool defined() const { return static_cast<bool>(storage_) || borrowed_; }
  bool is_meta() const { return meta_; }
  Format dtype() const { return dtype_; }
  Device device() const { return Device::cpu; }
  int dim() const { return static_cast<int>(shape_.size()); }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  const std::vector<std::int64_t>& strides() const { return strides_; }
  std::int64_t size(int d) const { return shape_.at(static_cast<std::size_t>(d)); }
  std::int64_t stride(int d) const { return strides_.at(static_cast<std::size_t>(d)); }
  std::int64_t storage_offset() const { return offset_; }
  std::int64_t numel() const;
  int element_size() const { return spec(dtype_).width / 8; }
  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool r) { requires_grad_ = r; }

  // torch's is_contiguous() (row-major, size-1 dimensions ignored).
  bool is_contiguous() const;
  // A 2-D tensor whose rows are contiguous (stride(1) == 1, stride(0) >= max(1, size(1))).
  bool is_row_major() const;
  // A 2-D tensor whose columns are contiguous (stride(0) == 1, stride(1) >= max(1, size(0))).
  bool is_col_major() const;

  // The transposed view of a 2-D tensor (no copy).
  Tensor t() const;

  // Element access by logical index (row-major flat index over the shape), as bits. The index
  // is not checked; a meta tensor throws ValueError.
  std::uint32_t bits_flat(std::int64_t i) const;
  void set_bits_flat(std::int64_t i, std::uint32_t bits);
  // 2-D element access.
  std::uint32_t bits_at(std::int64_t r, std::int64_t c) const;
  void set_bits_at(std::int64_t r, std::int64_t c, std::uint32_t bits);

  // All elements in logical row-major order.
  std::vector<std::uint32_t> to_bits() const;

  // "float8_e4m3fn[16, 32] strides [32, 1] offset 0".
  std::string describe() const;

  // The owned storage (null for a borrowed tensor).
  const std::shared_ptr<std::vector<std::uint8_t>>& storage() const { return storage_; }
  // The first byte of the storage (element 0, before the storage offset), owned or borrowed,
  // and its size in bytes.
  const std::uint8_t* data() const { return data_; }
  std::uint8_t* mutable_data() const { return data_; }
  std::size_t storage_bytes() const { return bytes_; }

private:
  // view_of and borrow: the layout checked against `bytes` bytes of storage.
  static Tensor checked_view(Format dtype, std::vector<std::int64_t> shape,
                             std::vector<std::int64_t> strides, std::int64_t storage_offset,
                             std::size_t bytes);
  std::int64_t element_offset(std::int64_t flat) const;
  void require_storage() const;
  Format dtype_ = Format::fp32;
  std::vector<std::int64_t> shape_;
  std::vector<std::int64_t> strides_;
  std::int64_t offset_ = 0;
  std::shared_ptr<std::vector<std::uint8_t>> storage_;
  std::shared_ptr<const void> owner_; // what keeps borrowed bytes alive (may be null)
  std::uint8_t* data_ = nullptr;      // storage_->data() or the borrowed bytes
  std::size_t bytes_ = 0;
  bool borrowed_ = false;
  bool requires_grad_ = false;
  bool meta_ = false;
};

// The row-major strides of a shape; ValueError if they overflow int64.
std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape);

} // namespace mmaemu
