# SPDX-License-Identifier: BSD-2-Clause
"""The instruction model: model.dot, one tensor-core chain per row (block-fma.md)."""

import numpy as np

from . import _core
from . import _tensors as _t
from ._api import Preset
from ._errors import unwrap


def _codes(x, fmt, what):
    """FP8 codes (uint8, C order) and the format of an FP8 tensor, uint8 codes with fmt, or
    float64 values that are FP8 values with fmt."""
    if _t.is_torch_tensor(x) and str(x.dtype) == "torch.float64" or \
            isinstance(x, np.ndarray) and x.dtype == np.float64:
        if fmt is None:
            raise ValueError(f"{what}: float64 values need fmt= ('e4m3', 'e5m2' or a pair)")
        name = _t.format_name(fmt, "fmt")
        values = x.detach().cpu().numpy() if _t.is_torch_tensor(x) else x
        flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
        codes = unwrap(_core.fp8_codes_of(flat, name), stacklevel=4)
        return codes.reshape(values.shape), name
    name, arr, _ = _t.spec(x, what, fmt)
    if name not in ("e4m3", "e5m2"):
        raise ValueError(f"{what}: {name} is not an FP8 format")
    return np.ascontiguousarray(arr), name


def dot(a, b, c=None, *, preset="ada", fmt=None):
    """d = c + a_0 b_0 + ... per row, in blocks of the preset's size, with the preset's
    alignment and truncation. a and b have the same shape [..., K]; c is None (+0) or fp32 of
    shape a.shape[:-1]. Returns fp32 of shape a.shape[:-1] (torch or NumPy, as a)."""
    fa, fb = (fmt if isinstance(fmt, (tuple, list)) else (fmt, fmt))
    kind, device = _t.kind_of(a, b, c)
    ca, na = _codes(a, fa, "a")
    cb, nb = _codes(b, fb, "b")
    if ca.shape != cb.shape or ca.ndim < 1:
        raise ValueError(f"a and b: the same shape [..., K] is needed (no broadcasting), got "
                         f"{tuple(ca.shape)} and {tuple(cb.shape)}")
    lead = ca.shape[:-1]
    K = ca.shape[-1]
    cc = None
    if c is not None:
        cn, carr, _ = _t.spec(c, "c")
        if cn != "fp32" or tuple(carr.shape) != tuple(lead):
            raise ValueError(f"c: fp32 of shape {tuple(lead)} is needed, got {cn} of shape "
                             f"{tuple(carr.shape)}")
        cc = np.ascontiguousarray(carr).reshape(-1)
    if isinstance(preset, Preset):
        p = preset.name if preset.maturity != "custom" else preset._fields()
    else:
        p = str(preset)
    rows = int(np.prod(lead, dtype=np.int64)) if lead else 1
    out = unwrap(_core.dot(ca.reshape(rows, K), cb.reshape(rows, K), cc, p, na, nb))
    return _t.result(out.reshape(lead), "fp32", kind, device)
