// SPDX-License-Identifier: BSD-2-Clause
// The Tensor type: torch's layouts (row-major, column-major through t(), padded leading
// dimension, storage offset, 0-d scalars), element bits by logical index, and layouts that
// do not fit their storage.

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "mmaemu/emulator/errors.hpp"
#include "mmaemu/emulator/tensor.hpp"

namespace {

using mmaemu::Format;
using mmaemu::Tensor;
using mmaemu::ValueError;
using Shape = std::vector<std::int64_t>;

std::uint8_t byte_at(const Tensor& t, std::size_t i) {
  return (*t.storage())[i];
}

TEST(TensorLayout, ZerosIsRowMajorContiguousWithZeroBits) {
  const Tensor t = Tensor::zeros(Format::e4m3, {2, 3});
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.strides(), (Shape{3, 1}));
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.element_size(), 1);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_row_major());
  EXPECT_FALSE(t.is_col_major());
  EXPECT_EQ(t.storage()->size(), 6u);
  for (auto b : t.to_bits())
    EXPECT_EQ(b, 0u);
  EXPECT_EQ(t.describe(), "float8_e4m3fn[2, 3] strides [3, 1] offset 0");
}

TEST(TensorLayout, DefaultConstructedTensorIsUndefined) {
  const Tensor t;
  EXPECT_FALSE(t.defined());
}

TEST(TensorLayout, TransposeIsAColumnMajorViewOfTheSameStorage) {
  Tensor w = Tensor::zeros(Format::e5m2, {3, 4}); // row-major [N=3, K=4]
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t c = 0; c < 4; ++c)
      w.set_bits_at(r, c, static_cast<std::uint32_t>(16 * r + c));
  const Tensor t = w.t(); // [K=4, N=3], column-major
  EXPECT_EQ(t.shape(), (Shape{4, 3}));
  EXPECT_EQ(t.strides(), (Shape{1, 4}));
  EXPECT_EQ(t.storage(), w.storage());
  EXPECT_TRUE(t.is_col_major());
  EXPECT_FALSE(t.is_row_major());
  EXPECT_FALSE(t.is_contiguous());
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t c = 0; c < 3; ++c)
      EXPECT_EQ(t.bits_at(r, c), w.bits_at(c, r));
  // Logical (row-major) order of the view: t[0][0], t[0][1], ... = w[0][0], w[1][0], ...
  const std::vector<std::uint32_t> expect = {0x00, 0x10, 0x20, 0x01, 0x11, 0x21,
                                             0x02, 0x12, 0x22, 0x03, 0x13, 0x23};
  EXPECT_EQ(t.to_bits(), expect);
  // Writing through the view writes the shared storage at r + c * 4.
  Tensor tv = t;
  tv.set_bits_at(2, 1, 0xAB);
  EXPECT_EQ(w.bits_at(1, 2), 0xABu);
  EXPECT_EQ(byte_at(w, 1 * 4 + 2), 0xABu);
  // t() twice is the original layout.
  EXPECT_EQ(t.t().strides(), w.strides());
  EXPECT_TRUE(t.t().is_row_major());
}

TEST(TensorLayout, TransposeOfANonMatrixIsAValueError) {
  EXPECT_THROW(Tensor::zeros(Format::fp32, {4}).t(), ValueError);
  EXPECT_THROW(Tensor::zeros(Format::fp32, {2, 2, 2}).t(), ValueError);
}

TEST(TensorLayout, PaddedLeadingDimensionIsRowMajorButNotContiguous) {
  // [2, 3] rows of 3 in a leading dimension of 5: element (r, c) at r * 5 + c.
  Tensor t = Tensor::strided(Format::e4m3, {2, 3}, {5, 1}, 0, 8);
  EXPECT_TRUE(t.is_row_major());
  EXPECT_FALSE(t.is_col_major());
  EXPECT_FALSE(t.is_contiguous());
  for (std::int64_t r = 0; r < 2; ++r)
    for (std::int64_t c = 0; c < 3; ++c)
      t.set_bits_at(r, c, static_cast<std::uint32_t>(0x40 + 8 * r + c));
  const std::vector<std::uint8_t> expect = {0x40, 0x41, 0x42, 0, 0, 0x48, 0x49, 0x4A};
  EXPECT_EQ(*t.storage(), expect);
  // Padded column-major: [3, 2] columns of 3 in a leading dimension of 4.
  const Tensor c = Tensor::strided(Format::e4m3, {3, 2}, {1, 4}, 0, 7);
  EXPECT_TRUE(c.is_col_major());
  EXPECT_FALSE(c.is_row_major());
  EXPECT_FALSE(c.is_contiguous());
}

TEST(TensorLayout, StorageOffsetShiftsEveryElementLittleEndian) {
  // fp16 [2, 2] at element offset 3 of a 7-element storage: (r, c) at element 3 + 2r + c.
  Tensor t = Tensor::strided(Format::fp16, {2, 2}, {2, 1}, 3, 7);
  EXPECT_EQ(t.storage_offset(), 3);
  EXPECT_TRUE(t.is_contiguous());
  t.set_bits_at(0, 0, 0x1234);
  t.set_bits_at(1, 1, 0xBEEF);
  EXPECT_EQ(byte_at(t, 6), 0x34u);
  EXPECT_EQ(byte_at(t, 7), 0x12u);
  EXPECT_EQ(byte_at(t, 12), 0xEFu);
  EXPECT_EQ(byte_at(t, 13), 0xBEu);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(byte_at(t, i), 0u) << i;
  EXPECT_EQ(t.bits_flat(3), 0xBEEFu);
  EXPECT_EQ(t.describe(), "float16[2, 2] strides [2, 1] offset 3");
}

TEST(TensorLayout, ScalarsAreOneElementZeroDimOrOneDim) {
  const Tensor s0 = Tensor::scalar_f32(0x40490FDBu, /*scalar0d=*/true);
  EXPECT_EQ(s0.dim(), 0);
  EXPECT_TRUE(s0.shape().empty());
  EXPECT_EQ(s0.numel(), 1);
  EXPECT_TRUE(s0.is_contiguous());
  EXPECT_EQ(s0.bits_flat(0), 0x40490FDBu);
  EXPECT_EQ(s0.dtype(), Format::fp32);
  const Tensor s1 = Tensor::scalar_f32(0xC0000000u);
  EXPECT_EQ(s1.shape(), (Shape{1}));
  EXPECT_EQ(s1.bits_flat(0), 0xC0000000u);
  // The bytes are little-endian binary32.
  EXPECT_EQ(*s1.storage(), (std::vector<std::uint8_t>{0x00, 0x00, 0x00, 0xC0}));
}

TEST(TensorLayout, BitsRoundTripForEveryDtypeWidth) {
  struct Case {
    Format f;
    int bytes;
    std::vector<std::uint32_t> codes;
    std::uint32_t mask;
  };
  const std::vector<Case> cases = {
      {Format::e4m3, 1, {0x00, 0x01, 0x7E, 0x7F, 0x80, 0xFF}, 0xFFu},
      {Format::e5m2, 1, {0x00, 0x7C, 0x7D, 0xFC, 0xFF}, 0xFFu},
      {Format::fp16, 2, {0x0000, 0x7BFF, 0x7C00, 0x8000, 0xFFFF, 0x1234}, 0xFFFFu},
      {Format::bf16, 2, {0x0000, 0x7F80, 0x7FFF, 0x8001, 0xFFFF, 0x3F80}, 0xFFFFu},
      {Format::fp32,
       4,
       {0x00000000u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0x12345678u},
       0xFFFFFFFFu},
  };
  for (const auto& c : cases) {
    const auto n = static_cast<std::int64_t>(c.codes.size());
    // Column-major [n, 2] with an offset: every access goes through the strides.
    Tensor t = Tensor::strided(c.f, {n, 2}, {1, n + 3}, 2, 2 + (n + 3) + n);
    EXPECT_EQ(t.element_size(), c.bytes);
    for (std::int64_t i = 0; i < n; ++i) {
      t.set_bits_at(i, 1, c.codes[static_cast<std::size_t>(i)]);
      t.set_bits_at(i, 0, ~c.codes[static_cast<std::size_t>(i)] & c.mask);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(t.bits_at(i, 1), c.codes[static_cast<std::size_t>(i)])
          << spec(c.f).name << " " << i;
      EXPECT_EQ(t.bits_at(i, 0), ~c.codes[static_cast<std::size_t>(i)] & c.mask);
      EXPECT_EQ(t.bits_flat(2 * i + 1), c.codes[static_cast<std::size_t>(i)]);
    }
    // from_bits / to_bits round trip.
    const Tensor fb = Tensor::from_bits(c.f, {n}, c.codes);
    EXPECT_EQ(fb.to_bits(), c.codes);
    // Bits above the width are dropped when writing.
    Tensor one = Tensor::zeros(c.f, {1});
    one.set_bits_flat(0, 0xFFFFFFFFu);
    EXPECT_EQ(one.bits_flat(0), c.mask);
  }
  // fp32 storage is little-endian.
  const Tensor w = Tensor::from_bits(Format::fp32, {1}, {0x11223344u});
  EXPECT_EQ(*w.storage(), (std::vector<std::uint8_t>{0x44, 0x33, 0x22, 0x11}));
}

TEST(TensorLayout, FromBitsWithTheWrongCountIsAValueError) {
  EXPECT_THROW(Tensor::from_bits(Format::e4m3, {2, 2}, {1, 2, 3}), ValueError);
}

TEST(TensorLayout, ContiguityIgnoresSizeOneDimensions) {
  // torch: a [1, 4] tensor with any stride(0) is contiguous; so is a [4, 1] with any stride(1).
  EXPECT_TRUE(Tensor::strided(Format::e4m3, {1, 4}, {99, 1}, 0, 4).is_contiguous());
  EXPECT_TRUE(Tensor::strided(Format::e4m3, {4, 1}, {1, 7}, 0, 4).is_contiguous());
  EXPECT_FALSE(Tensor::strided(Format::e4m3, {2, 4}, {5, 1}, 0, 9).is_contiguous());
  // A [1, K] row of a transposed [K, 1] column (strides {1, 1}) is contiguous.
  const Tensor row = Tensor::zeros(Format::e4m3, {4, 1}).t();
  EXPECT_TRUE(row.is_contiguous());
}

TEST(TensorLayout, EmptyTensorsAreContiguousAsInTorch) {
  // torch: is_contiguous() is true for every tensor with no elements
  // (c10 TensorImpl::compute_contiguous returns true when numel == 0).
  const Tensor a = Tensor::zeros(Format::e4m3, {3, 0});
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(a.strides(), (Shape{1, 1})); // torch.empty(3, 0).stride() == (1, 1)
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_TRUE(Tensor::zeros(Format::e4m3, {0, 3}).is_contiguous());
  EXPECT_TRUE(Tensor::zeros(Format::e4m3, {0, 3}).t().is_contiguous());
}

TEST(TensorLayout, ContiguousStridesFollowTorch) {
  EXPECT_EQ(mmaemu::contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(mmaemu::contiguous_strides({2, 0, 3}), (Shape{3, 3, 1})); // torch.empty(2,0,3).stride()
  EXPECT_EQ(mmaemu::contiguous_strides({}), (Shape{}));
}

TEST(TensorLayout, LayoutsThatFitTheStorageExactlyAreAccepted) {
  // Last element at offset + sum (size - 1) * stride = storage - 1.
  EXPECT_NO_THROW(Tensor::strided(Format::e4m3, {2, 3}, {5, 1}, 2, 2 + 5 + 2 + 1));
  EXPECT_NO_THROW(Tensor::strided(Format::fp32, {3, 2}, {1, 4}, 0, 4 + 2 + 1));
  // Zero strides (a broadcast view) are accepted.
  const Tensor b = Tensor::strided(Format::e4m3, {16, 4}, {0, 1}, 0, 4);
  EXPECT_EQ(b.numel(), 64);
  // A tensor with no elements needs no storage.
  EXPECT_NO_THROW(Tensor::view_of(Format::e4m3, {0, 5}, {5, 1}, 0,
                                  std::make_shared<std::vector<std::uint8_t>>()));
}

TEST(TensorLayout, OutOfStorageLayoutsAreValueErrors) {
  // One element too far.
  EXPECT_THROW(Tensor::strided(Format::e4m3, {2, 3}, {5, 1}, 2, 2 + 5 + 2), ValueError);
  EXPECT_THROW(Tensor::strided(Format::fp32, {3, 2}, {1, 4}, 0, 4 + 2), ValueError);
  // The storage counts bytes: 7 bytes are 3 fp16 elements, not 4.
  EXPECT_THROW(
      Tensor::view_of(Format::fp16, {4}, {1}, 0, std::make_shared<std::vector<std::uint8_t>>(7)),
      ValueError);
  EXPECT_NO_THROW(
      Tensor::view_of(Format::fp16, {4}, {1}, 0, std::make_shared<std::vector<std::uint8_t>>(8)));
  // The offset alone can leave the storage.
  EXPECT_THROW(Tensor::strided(Format::e4m3, {1}, {1}, 4, 4), ValueError);
  // Negative strides, offsets and dimensions; strides of the wrong rank.
  EXPECT_THROW(Tensor::strided(Format::e4m3, {2, 2}, {2, -1}, 1, 8), ValueError);
  EXPECT_THROW(Tensor::strided(Format::e4m3, {2}, {1}, -1, 8), ValueError);
  EXPECT_THROW(Tensor::zeros(Format::e4m3, {2, -1}), ValueError);
  EXPECT_THROW(Tensor::strided(Format::e4m3, {2, 2}, {2}, 0, 8), ValueError);
}

// Size arithmetic: every product of sizes, strides and offsets is checked, never wrapped.
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

std::shared_ptr<std::vector<std::uint8_t>> bytes(std::size_t n) {
  return std::make_shared<std::vector<std::uint8_t>>(n);
}

TEST(TensorSizes, AnOffsetNearInt64MaxIsRefusedNotWrappedIntoTheStorage) {
  // offset + (size - 1) * stride wraps to a negative index without checked arithmetic.
  EXPECT_THROW(Tensor::view_of(Format::e4m3, {2}, {1}, kI64Max, bytes(16)), ValueError);
  EXPECT_THROW(Tensor::view_of(Format::e4m3, {1}, {1}, kI64Max, bytes(16)), ValueError);
  EXPECT_THROW(Tensor::view_of(Format::fp32, {2, 2}, {kI64Max / 2 + 1, 1}, 0, bytes(64)),
               ValueError);
  EXPECT_THROW(Tensor::view_of(Format::e4m3, {3, 3}, {kI64Max / 2, kI64Max / 2}, 1, bytes(64)),
               ValueError);
  // The message names the layout and the storage.
  try {
    Tensor::view_of(Format::e4m3, {2}, {1}, kI64Max, bytes(16));
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("storage of 16"), std::string::npos) << e.what();
  }
}

TEST(TensorSizes, ShapesWhoseElementCountOverflowsAreValueErrors) {
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_THROW(Tensor::zeros(Format::e4m3, {big, 4}), ValueError);
  EXPECT_THROW(Tensor::meta(Format::e4m3, {big + 1, 64}), ValueError);
  EXPECT_THROW(Tensor::view_of(Format::e4m3, {big, 4}, {0, 0}, 0, bytes(1)), ValueError);
  EXPECT_THROW(mmaemu::contiguous_strides({2, big, 4}), ValueError);
  // An empty tensor has no elements whatever its other dimensions.
  EXPECT_EQ(Tensor::meta(Format::e4m3, {0, 1 << 30}).numel(), 0);
  // A negative dimension after a zero one is still refused.
  EXPECT_THROW(Tensor::meta(Format::e4m3, {0, -1}), ValueError);
}

TEST(TensorSizes, StoragesOverTheLimitAreRefusedBeforeAllocating) {
  EXPECT_THROW(Tensor::zeros(Format::fp32, {mmaemu::kMaxTensorElements + 1}), ValueError);
  EXPECT_THROW(Tensor::zeros(Format::e4m3, {1 << 21, 1 << 21}), ValueError);
  EXPECT_THROW(Tensor::strided(Format::e4m3, {1}, {1}, 0, -1), ValueError);
  EXPECT_THROW(Tensor::strided(Format::e4m3, {1}, {1}, 0, mmaemu::kMaxTensorElements + 1),
               ValueError);
  EXPECT_THROW(
      Tensor::zeros(Format::e4m3, std::vector<std::int64_t>(mmaemu::kMaxTensorDims + 1, 1)),
      ValueError);
  EXPECT_NO_THROW(
      Tensor::zeros(Format::e4m3, std::vector<std::int64_t>(mmaemu::kMaxTensorDims, 1)));
}

TEST(TensorSizes, NegativeStridesAreRefusedEvenForEmptyTensors) {
  EXPECT_THROW(Tensor::view_of(Format::e4m3, {0, 2}, {1, -1}, 0, bytes(0)), ValueError);
  EXPECT_THROW(Tensor::view_of(Format::e4m3, {2}, {1}, -5, bytes(8)), ValueError);
}

TEST(TensorSizes, MetaTensorsHaveAShapeAndNoElements) {
  const std::int64_t M = mmaemu::kMaxGemmDim;
  const Tensor t = Tensor::meta(Format::e4m3, {M, 1 << 20});
  EXPECT_TRUE(t.defined());
  EXPECT_TRUE(t.is_meta());
  EXPECT_EQ(t.numel(), M << 20);
  EXPECT_TRUE(t.is_row_major());
  EXPECT_TRUE(t.t().is_col_major());
  EXPECT_EQ(t.storage()->size(), 0u);
  EXPECT_THROW(t.bits_flat(0), ValueError);
  EXPECT_THROW(t.bits_at(0, 0), ValueError);
  EXPECT_THROW(t.to_bits(), ValueError);
  Tensor u = t;
  EXPECT_THROW(u.set_bits_at(0, 0, 1), ValueError);
  EXPECT_FALSE(Tensor::zeros(Format::e4m3, {1}).is_meta());
}

TEST(TensorSizes, GemmSizesWithinTheLimitsPassAndOthersNameTheSize) {
  using mmaemu::check_gemm_size;
  const std::int64_t D = mmaemu::kMaxGemmDim;
  EXPECT_NO_THROW(check_gemm_size(0, 0, 0));
  EXPECT_NO_THROW(check_gemm_size(D, 512, 1));
  EXPECT_NO_THROW(check_gemm_size(1 << 20, 1 << 20, 1)); // M*N = 2^40 exactly
  auto message = [](std::int64_t M, std::int64_t N, std::int64_t K) -> std::string {
    try {
      check_gemm_size(M, N, K);
    } catch (const ValueError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(message(D + 1, 1, 1).rfind("M = 2147483648 is over", 0), 0u) << message(D + 1, 1, 1);
  EXPECT_EQ(message(1, (std::int64_t{1} << 62) + 1, 1).rfind("N = ", 0), 0u);
  EXPECT_EQ(message(1, 1, -1).rfind("K = -1 must be >= 0", 0), 0u);
  EXPECT_EQ(message(1 << 21, 1, 1 << 20).rfind("M*K = 2199023255552 elements", 0), 0u);
  EXPECT_EQ(message(1, 1 << 21, 1 << 20).rfind("K*N = ", 0), 0u);
  EXPECT_EQ(message((1 << 20) + 1, 1 << 20, 1).rfind("M*N = ", 0), 0u);
}

} // namespace

// A borrowed tensor reads the caller's bytes where they lie: a change made to them after the
// tensor was made is seen through it (a copy would not see it), its layout is checked against
// the borrowed size, and it owns nothing.
TEST(TensorBorrow, ReadsTheCallersMemoryWithoutACopy) {
  std::vector<std::uint8_t> mem = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17};
  const Tensor t = Tensor::borrow(Format::e4m3, {2, 3}, {4, 1}, 1, mem.data(), mem.size(), nullptr);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.storage(), nullptr);
  EXPECT_EQ(t.data(), mem.data());
  EXPECT_EQ(t.bits_at(1, 2), 0x17u);
  mem[7] = 0x38;
  EXPECT_EQ(t.bits_at(1, 2), 0x38u);
  EXPECT_EQ(t.t().bits_at(0, 1), 0x15u); // views of it borrow too
  EXPECT_THROW(Tensor::borrow(Format::e4m3, {2, 4}, {4, 1}, 1, mem.data(), mem.size(), nullptr),
               ValueError);
  EXPECT_THROW(Tensor::borrow(Format::e4m3, {1}, {1}, 0, nullptr, 1, nullptr), ValueError);
}

// The owner is kept alive by the tensor and its copies.
TEST(TensorBorrow, KeepsItsOwnerAlive) {
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(4, 0x22);
  std::weak_ptr<std::vector<std::uint8_t>> watch = bytes;
  Tensor copy;
  {
    const Tensor t = Tensor::borrow(Format::e4m3, {4}, {1}, 0, bytes->data(), bytes->size(), bytes);
    bytes.reset();
    copy = t;
  }
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(copy.bits_flat(3), 0x22u);
  copy = Tensor();
  EXPECT_TRUE(watch.expired());
}
