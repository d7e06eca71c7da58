# SPDX-License-Identifier: BSD-2-Clause
"""The torch branch of the conversion layer, with a small stand-in for torch (torch is not
packaged for the machines that run these tests). The stand-in is put in sys.modules only
inside these tests; it models what mmaemu uses of torch: dtypes, element_size, views of
another dtype of the same size, .numpy(), from_numpy, requires_grad, device."""

import sys
import types

import numpy as np
import pytest

import mmaemu


def make_fake_torch():
    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name, np_type):
            self.name, self.np_type = name, np_type

        def __str__(self):
            return "torch." + self.name

        __repr__ = __str__

    names = {"float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8, "uint8": np.uint8,
             "int16": np.int16, "int32": np.int32, "int64": np.int64, "bool": np.bool_,
             "float16": np.float16, "bfloat16": np.uint16, "float32": np.float32,
             "float64": np.float64}
    for n, t in names.items():
        setattr(torch, n, dtype(n, t))
    torch.dtype = dtype

    class device:
        def __init__(self, type_):
            self.type = type_

    class Tensor:
        def __init__(self, array, dt, requires_grad=False):
            self._a, self.dtype, self.requires_grad = array, dt, requires_grad
            self.device = device("cpu")

        shape = property(lambda self: self._a.shape)

        def element_size(self):
            return self._a.itemsize

        def detach(self):
            return Tensor(self._a, self.dtype)

        def numel(self):
            return self._a.size

        def view(self, dt):
            return Tensor(self._a.view(dt.np_type), dt, self.requires_grad)

        def numpy(self):
            if self.requires_grad:
                raise RuntimeError("Can't call numpy() on Tensor that requires grad")
            return self._a

        def to(self, dev):
            return self

        @property
        def T(self):
            return Tensor(self._a.T, self.dtype, self.requires_grad)

    torch.Tensor = Tensor

    def from_numpy(a):
        kind = {np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
                np.dtype(np.int32): "int32", np.dtype(np.float32): "float32"}[a.dtype]
        return Tensor(a, getattr(torch, kind))

    torch.from_numpy = from_numpy
    return torch


@pytest.fixture
def torch(monkeypatch):
    fake = make_fake_torch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def fp8(torch, codes, name="float8_e4m3fn"):
    return torch.Tensor(np.asarray(codes, dtype=np.uint8), getattr(torch, name))


def f32(torch, v):
    return torch.Tensor(np.array([v], dtype=np.float32), torch.float32)


def test_torch_tensors_in_torch_tensor_out(torch):
    a = fp8(torch, np.full((16, 32), 0x38))
    b = fp8(torch, np.full((16, 32), 0x40)).T  # [32, 16] column-major
    r = mmaemu.scaled_mm(a, b, f32(torch, 1.0), f32(torch, 1.0), out_dtype=torch.bfloat16,
                         splitk=1)
    assert isinstance(r, torch.Tensor) and r.dtype is torch.bfloat16
    assert (mmaemu.testing.bits(r).numpy() == 0x4280).all()  # 64.0 in bf16
    r8 = mmaemu.scaled_mm(a, b, f32(torch, 1.0), f32(torch, 1.0), splitk=1)
    assert r8.dtype is torch.float8_e4m3fn  # default: input's dtype
    assert (mmaemu.testing.bits(r8).numpy() == 0x68).all()  # 64 = 0.1101.000


def test_torch_uint8_codes_need_a_format(torch):
    a = torch.Tensor(np.full((16, 32), 0x38, dtype=np.uint8), torch.uint8)
    b = torch.Tensor(np.full((16, 32), 0x38, dtype=np.uint8), torch.uint8).T
    with pytest.raises(ValueError, match="fmt"):
        mmaemu.scaled_mm(a, b, f32(torch, 1.0), f32(torch, 1.0), splitk=1)
    r = mmaemu.scaled_mm(a, b, f32(torch, 1.0), f32(torch, 1.0), out_dtype="float32",
                         splitk=1, fmt="e4m3")
    assert (r.numpy().view(np.uint32) == 0x42000000).all()


def test_torch_requires_grad_is_unsupported(torch):
    a = fp8(torch, np.full((16, 32), 0x38))
    a.requires_grad = True
    b = fp8(torch, np.full((16, 32), 0x38)).T
    with pytest.raises(mmaemu.UnsupportedFeatureError, match="grad"):
        mmaemu.scaled_mm(a, b, f32(torch, 1.0), f32(torch, 1.0), splitk=1)


def test_mixing_torch_and_numpy_is_a_type_error(torch):
    a = fp8(torch, np.full((16, 32), 0x38))
    b = np.full((16, 32), 0x38, dtype=np.uint8).T
    with pytest.raises(TypeError, match="mix"):
        mmaemu.scaled_mm(a, b, f32(torch, 1.0), f32(torch, 1.0), splitk=1, fmt="e4m3")


def test_torch_dtypes_name_formats(torch):
    d = mmaemu.resolve_splitk(16, 16, 32, a_dtype=torch.float8_e4m3fn,
                              b_dtype=torch.float8_e4m3fn, out_dtype=torch.bfloat16,
                              use_fast_accum=False, splitk=1)
    assert d.S == 1
