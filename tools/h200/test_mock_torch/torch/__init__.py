# SPDX-License-Identifier: BSD-2-Clause
"""A stand-in for torch, only for tools/h200/test_recorder.sh: the few calls record.py's device
path makes (tensors over numpy, _scaled_mm returning zeros of the right dtype and shape, and
torch's rejections of e5m2 x e5m2 and of a bias with an fp32 output). It checks the recorder's
glue (views, layouts, scales, the writer, digests, provenance), never numerics."""
import numpy as np

__version__ = "0.0-mock"


class dtype:
    def __init__(self, name, np_dtype):
        self.name, self.np = name, np.dtype(np_dtype)

    def __repr__(self):
        return "torch." + self.name


uint8 = dtype("uint8", np.uint8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
float32 = dtype("float32", np.float32)
float16 = dtype("float16", np.uint16)
bfloat16 = dtype("bfloat16", np.uint16)
float8_e4m3fn = dtype("float8_e4m3fn", np.uint8)
float8_e5m2 = dtype("float8_e5m2", np.uint8)


class device:
    def __init__(self, name):
        self.name = name


class Tensor:
    def __init__(self, arr, dt):
        self.a, self.dtype = arr, dt

    @property
    def shape(self):
        return self.a.shape

    def to(self, dev):
        assert isinstance(dev, device) or dev == "cuda"
        return self

    def view(self, dt):
        assert dt.np.itemsize == self.dtype.np.itemsize, (dt, self.dtype)
        return Tensor(self.a.view(dt.np), dt)

    def reshape(self, *shape):
        return Tensor(self.a.reshape(*shape), self.dtype)

    def t(self):
        return Tensor(self.a.T, self.dtype)

    def contiguous(self):
        return Tensor(np.ascontiguousarray(self.a), self.dtype)

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def from_numpy(a):
    return Tensor(a, {np.dtype(np.uint8): uint8, np.dtype(np.float32): float32}[a.dtype])


def zeros(n, dtype=float32, device=None):
    return Tensor(np.zeros(n, dtype=dtype.np), dtype)


def _scaled_mm(a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False):
    assert a.a.flags["C_CONTIGUOUS"] and b.a.T.flags["C_CONTIGUOUS"], "layouts"
    assert scale_a.a.shape == () and scale_a.dtype is float32 and scale_b.dtype is float32
    assert scale_result is None or scale_result.a.shape == ()
    if a.dtype is float8_e5m2 and b.dtype is float8_e5m2:
        raise RuntimeError("Multiplication of two Float8_e5m2 matrices is not supported")
    out = out_dtype or a.dtype
    if bias is not None and out is float32:
        raise RuntimeError("Bias is not supported when out_dtype is set to Float32")
    if bias is not None:
        raise RuntimeError("Bias must be the output's type (mock)")
    return Tensor(np.zeros((a.shape[0], b.shape[1]), dtype=out.np), out)


class _Props:
    multi_processor_count = 132
    major, minor = 9, 0


class cuda:
    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def get_device_name(i=0):
        return "Mock H200"

    @staticmethod
    def get_device_properties(i=0):
        return _Props()


class version:
    cuda = "13.0-mock"
