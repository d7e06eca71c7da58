// SPDX-License-Identifier: BSD-2-Clause
// The argument checks of torch._scaled_mm 2.7.1 (aten/src/ATen/native/cuda/Blas.cpp) and of
// the profile's cuBLASLt, in their order (docs/scaled-mm-facts.md), as a table.

#include <sstream>

#include "mmaemu/emulator/scaled_mm.hpp"

namespace mmaemu {

namespace {

std::string shape_text(const Tensor& t) {
  std::ostringstream os;
  for (int i = 0; i < t.dim(); ++i)
    os << (i ? "x" : "") << t.size(i);
  return os.str();
}

std::string dtype_name(Format f) {
  return std::string("torch.") + spec(f).torch_name;
}

void capability(const ScaledMmCall&, const Profile& p) {
  if (p.capability != "8.9" && std::stod(p.capability) < 9.0) {
    throw ReferenceRejectsError("torch._scaled_mm is only supported on CUDA devices with compute "
                                "capability >= 9.0 or 8.9; profile '" +
                                p.name + "' has " + p.capability);
  }
}

void matrices(const ScaledMmCall& c, const Profile&) {
  if (c.input.dim() != 2)
    throw ReferenceRejectsError("mat1 must be a matrix, got input " + c.input.describe());
  if (c.mat2.dim() != 2)
    throw ReferenceRejectsError("mat2 must be a matrix, got mat2 " + c.mat2.describe());
  if (c.input.size(1) != c.mat2.size(0)) {
    throw ReferenceRejectsError("mat1 and mat2 shapes cannot be multiplied (" +
                                shape_text(c.input) + " and " + shape_text(c.mat2) + ")");
  }
}

void scales(const ScaledMmCall& c, const Profile&) {
  if (c.scale_a.dtype() != Format::fp32 || c.scale_b.dtype() != Format::fp32) {
    throw ReferenceRejectsError(
        "Both scale_a and scale_b must be float (fp32) tensors; got scale_a " +
        dtype_name(c.scale_a.dtype()) + " and scale_b " + dtype_name(c.scale_b.dtype()));
  }
  if (c.scale_a.numel() == 1 && c.scale_b.numel() == 1)
    return; // tensor-wise
  const std::int64_t M = c.input.size(0), N = c.mat2.size(1);
  const bool rowwise = c.scale_a.dim() == 2 && c.scale_b.dim() == 2 && c.scale_a.size(0) == M &&
                       c.scale_a.size(1) == 1 && c.scale_b.size(0) == 1 && c.scale_b.size(1) == N &&
                       c.scale_a.is_contiguous() && c.scale_b.is_contiguous();
  if (rowwise) {
    throw UnsupportedFeatureError("row-wise scales (scale_a " + shape_text(c.scale_a) +
                                  ", scale_b " + shape_text(c.scale_b) +
                                  ") are not modelled: mmaemu v0.1 models tensor-wise scales");
  }
  throw ReferenceRejectsError("Invalid scaling configuration: for tensor-wise scaling scale_a and "
                              "scale_b have one element each, for row-wise scale_a is (" +
                              std::to_string(M) + ", 1) and scale_b (1, " + std::to_string(N) +
                              "); got scale_a " + shape_text(c.scale_a) + " and scale_b " +
                              shape_text(c.scale_b));
}

void scale_result(const ScaledMmCall& c, const Profile&) {
  if (!c.scale_result)
    return;
  if (c.scale_result->numel() != 1 || c.scale_result->dtype() != Format::fp32) {
    throw ReferenceRejectsError("scale_result must be a float scalar, got " +
                                c.scale_result->describe());
  }
}

void bias_size(const ScaledMmCall& c, const Profile&) {
  if (!c.bias)
    return;
  if (c.bias->numel() != c.mat2.size(1)) {
    throw ReferenceRejectsError("Bias must be size " + std::to_string(c.mat2.size(1)) +
                                " but got " + std::to_string(c.bias->numel()));
  }
}

void divisible16(const ScaledMmCall& c, const Profile&) {
  if (c.input.size(1) % 16 != 0) {
    throw ReferenceRejectsError("Expected trailing dimension of mat1 to be divisible by 16 but got "
                                "mat1 shape: (" +
                                shape_text(c.input) + ")");
  }
  if (c.mat2.size(0) % 16 != 0 || c.mat2.size(1) % 16 != 0) {
    throw ReferenceRejectsError("mat2 shape (" + shape_text(c.mat2) + ") must be divisible by 16");
  }
}

void out_dtype_matches(const ScaledMmCall& c, const Profile&) {
  if (c.out && c.out_dtype && c.out->defined() && c.out->dtype() != *c.out_dtype) {
    throw ReferenceRejectsError("out_dtype must match output matrix type: out_dtype " +
                                dtype_name(*c.out_dtype) + ", out " + dtype_name(c.out->dtype()));
  }
}

void fp8_inputs(const ScaledMmCall& c, const Profile&) {
  if (!is_fp8(c.input.dtype())) {
    throw ReferenceRejectsError("Expected mat1 to be Float8 matrix got " +
                                dtype_name(c.input.dtype()));
  }
  if (!is_fp8(c.mat2.dtype())) {
    throw ReferenceRejectsError("Expected mat2 to be Float8 matrix got " +
                                dtype_name(c.mat2.dtype()));
  }
}

void not_e5m2_pair(const ScaledMmCall& c, const Profile&) {
  if (c.input.dtype() == Format::e5m2 && c.mat2.dtype() == Format::e5m2) {
    throw ReferenceRejectsError("Multiplication of two Float8_e5m2 matrices is not supported");
  }
}

void bias_dtype(const ScaledMmCall& c, const Profile&) {
  if (!c.bias)
    return;
  const Format out = result_dtype(c);
  if (out == Format::fp32)
    throw ReferenceRejectsError("Bias is not supported when out_dtype is set to Float32");
  const Format b = c.bias->dtype();
  if (b != Format::bf16 && b != Format::fp16) {
    throw ReferenceRejectsError("Bias must be either Half or BFloat16, but got " + dtype_name(b));
  }
  if (out == Format::bf16 && b != Format::bf16) {
    throw ReferenceRejectsError("Bias must be BFloat16 to compute BFloat16 output, but got " +
                                dtype_name(b));
  }
  if (out == Format::fp16 && b != Format::fp16) {
    throw ReferenceRejectsError("Bias must be Float16 to compute Half output, but got " +
                                dtype_name(b));
  }
}

void bias_unsupported(const ScaledMmCall& c, const Profile&) {
  if (c.bias) {
    throw UnsupportedFeatureError("bias (" + c.bias->describe() +
                                  ") is not modelled: mmaemu v0.1 requires bias=None");
  }
}

void grad_mode(const ScaledMmCall& c, const Profile&) {
  if (c.input.requires_grad() || c.mat2.requires_grad()) {
    throw UnsupportedFeatureError("inputs that require grad are not supported: _scaled_mm has no "
                                  "autograd formula (input requires_grad " +
                                  std::string(c.input.requires_grad() ? "True" : "False") +
                                  ", mat2 requires_grad " +
                                  std::string(c.mat2.requires_grad() ? "True" : "False") + ")");
  }
}

// torch's prepare_matrix_for_cublas: whether cuBLAS sees the matrix transposed (row-major).
bool cublas_sees_row_major(const Tensor& t) {
  const auto s0 = t.stride(0), s1 = t.stride(1), n0 = t.size(0), n1 = t.size(1);
  const bool row_contig = t.is_contiguous();
  const bool col_contig = (s0 == 1 || n0 <= 1) && (s1 == n0 || n1 <= 1);
  if (row_contig || col_contig)
    return row_contig; // dense: transposed iff contiguous
  if (s0 == 1 && s1 >= std::max<std::int64_t>(1, n0))
    return false;
  if (s1 == 1 && s0 >= std::max<std::int64_t>(1, n1))
    return true;
  return true; // any other layout is copied to a contiguous (row-major) tensor
}

// torch returns before the layout check and the cuBLASLt call when M, K or N is 0.
bool empty_call(const ScaledMmCall& c) {
  return c.input.size(0) == 0 || c.input.size(1) == 0 || c.mat2.size(1) == 0;
}

void layouts(const ScaledMmCall& c, const Profile&) {
  if (empty_call(c))
    return;
  if (!cublas_sees_row_major(c.input) || cublas_sees_row_major(c.mat2)) {
    throw ReferenceRejectsError("Only multiplication of row-major and column-major matrices is "
                                "supported by cuBLASLt (mat1 " +
                                c.input.describe() + ", mat2 " + c.mat2.describe() + ")");
  }
}

void out_dtype_supported(const ScaledMmCall& c, const Profile&) {
  // Every mmaemu Format but tf32 (an instruction operand format only) is a torch dtype.
  if (result_dtype(c) == Format::tf32)
    throw ValueError("out_dtype tf32 is not a torch dtype");
}

void profile_rejects(const ScaledMmCall& c, const Profile& p) {
  if (empty_call(c))
    return; // cuBLASLt is not called
  if (auto msg = p.rejects_call(c.input.dtype(), c.mat2.dtype(), result_dtype(c))) {
    throw ReferenceRejectsError(*msg + " (profile '" + p.name + "')");
  }
}

} // namespace

Format result_dtype(const ScaledMmCall& c) {
  if (c.out_dtype)
    return *c.out_dtype;
  if (c.out && c.out->defined())
    return c.out->dtype(); // the out= variant writes out's dtype
  return c.input.dtype();  // torch: out_dtype defaults to mat1's dtype
}

const std::vector<ScaledMmRule>& scaled_mm_rules() {
  static const std::vector<ScaledMmRule> rules = {
      {"capability", "device capability >= 9.0 or exactly 8.9", capability},
      {"matrices", "mat1 and mat2 are 2-D and mat1.size(1) == mat2.size(0)", matrices},
      {"scales", "fp32 scales; tensor-wise (one element each); row-wise unsupported", scales},
      {"scale_result", "scale_result absent or one fp32 element", scale_result},
      {"bias_size", "bias numel == N", bias_size},
      {"divisible16", "K and N divisible by 16", divisible16},
      {"out_dtype_matches", "out_dtype equals out's dtype when both are given", out_dtype_matches},
      {"fp8_inputs", "mat1 and mat2 are float8_e4m3fn or float8_e5m2", fp8_inputs},
      {"not_e5m2_pair", "e5m2 x e5m2 is rejected", not_e5m2_pair},
      {"bias_dtype", "bias: not with fp32 out; bf16/fp16 matching the output", bias_dtype},
      {"layouts", "mat1 row-major and mat2 column-major as cuBLASLt sees them", layouts},
      {"out_dtype_supported", "the output dtype is one of torch's", out_dtype_supported},
      {"profile_rejects", "the profile's cuBLASLt rejects (e4m3 x e4m3 -> e5m2)", profile_rejects},
      {"bias_unsupported", "bias is not modelled (UnsupportedFeatureError)", bias_unsupported},
      {"grad_mode", "inputs requiring grad are not supported (UnsupportedFeatureError)", grad_mode},
  };
  return rules;
}

void validate_scaled_mm(const ScaledMmCall& call, const Profile& profile) {
  if (!call.input.defined() || !call.mat2.defined() || !call.scale_a.defined() ||
      !call.scale_b.defined()) {
    throw ValueError("scaled_mm: input, mat2, scale_a and scale_b are required");
  }
  for (const auto& rule : scaled_mm_rules())
    rule.check(call, profile);
  // The emulator's own limit, after torch's rules (which leave a 2-D mat1 and mat2).
  check_gemm_size(call.input.size(0), call.mat2.size(1), call.input.size(1));
}

} // namespace mmaemu
