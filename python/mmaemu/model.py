# SPDX-License-Identifier: BSD-2-Clause
"""The instruction model: model.dot, one tensor-core chain per row (block-fma.md)."""

import numpy as np

from . import _core
from . import _tensors as _t
from ._api import _preset_arg
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


_WIDE = ("fp16", "bf16", "tf32")


def _fmt_name(fmt):
    """The short name of a format argument; tf32 is known here too (it has no dtype)."""
    if isinstance(fmt, str) and fmt.lower() in ("tf32", "tensorfloat32"):
        return "tf32"
    return _t.format_name(fmt, "fmt")


def _wide_codes(x, fmt, what):
    """fp16, bf16 or tf32 codes (uint32, C order) and the format name of: a torch float16 /
    bfloat16 tensor or NumPy float16 array; uint16 codes with fmt fp16 or bf16; float64 values
    with fmt; or float32 values with fmt="tf32" (which must be tf32 values)."""
    name = _fmt_name(fmt) if fmt is not None else None
    is_t = _t.is_torch_tensor(x)
    dtype = str(x.dtype)[6:] if is_t else (x.dtype.name if isinstance(x, np.ndarray) else None)
    if dtype == "float64" or (dtype == "float32" and name == "tf32"):
        if name is None:
            raise ValueError(f"{what}: float values need fmt= (e.g. 'fp16', 'bf16', 'tf32')")
        values = x.detach().cpu().numpy() if is_t else x
        flat = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
        codes = unwrap(_core.codes_of(flat, name), stacklevel=4)
        return codes.reshape(values.shape), name
    if name == "tf32":
        raise ValueError(f"{what}: tf32 operands are float32 or float64 values (torch has no "
                         "tf32 dtype)")
    got, arr, _ = _t.spec(x, what, fmt)
    if got not in ("fp16", "bf16"):
        raise ValueError(f"{what}: {got} is not an fp16 or bf16 tensor")
    return np.ascontiguousarray(arr).astype(np.uint32), got


def _is_wide(x, fmt):
    """Whether an operand is meant as fp16, bf16 or tf32 (else FP8)."""
    if fmt is not None:
        return _fmt_name(fmt) in _WIDE
    if _t.is_torch_tensor(x):
        return str(x.dtype)[6:] in ("float16", "bfloat16")
    return isinstance(x, np.ndarray) and x.dtype.name == "float16"


def dot(a, b, c=None, *, preset="ada", fmt=None, acc="fp32"):
    """d = c + a_0 b_0 + ... per row, in blocks of the preset's size, with the preset's
    alignment and truncation. a and b have the same shape [..., K]; c is None (+0) or of
    shape a.shape[:-1] in the accumulator format. Returns the accumulator format (fp32, or
    fp16 with acc="fp16" for a preset with an fp16 accumulator) of shape a.shape[:-1] (torch
    or NumPy, as a).

    FP8 operands (e4m3, e5m2) take the FP8 presets (ada, hopper, b200_mma_sync); fp16, bf16
    and tf32 operands take the 16-bit and tf32 presets (volta_fp16, ampere_bf16, ada_tf32,
    hopper_fp16, ...): torch float16 / bfloat16 tensors, NumPy float16 arrays, uint16 codes
    with fmt, float64 values with fmt, or for tf32 float32 / float64 values with fmt="tf32"."""
    for value, what in ((a, "a"), (b, "b")):
        if value is None:
            raise TypeError(f"{what}: expected a torch tensor or a NumPy array, got None")
    fa, fb = (fmt if isinstance(fmt, (tuple, list)) else (fmt, fmt))
    kind, device = _t.kind_of(a, b, c)
    wide = _is_wide(a, fa) or _is_wide(b, fb)
    if wide:
        ca, na = _wide_codes(a, fa, "a")
        cb, nb = _wide_codes(b, fb, "b")
    else:
        ca, na = _codes(a, fa, "a")
        cb, nb = _codes(b, fb, "b")
    if ca.shape != cb.shape or ca.ndim < 1:
        raise ValueError(f"a and b: the same shape [..., K] is needed (no broadcasting), got "
                         f"{tuple(ca.shape)} and {tuple(cb.shape)}")
    lead = ca.shape[:-1]
    K = ca.shape[-1]
    acc = _t.format_name(acc, "acc")
    if acc not in ("fp32", "fp16") or (acc == "fp16" and not wide):
        raise ValueError(f"acc: {acc!r} is not 'fp32'" + (" or 'fp16'" if wide else ""))
    cc = None
    if c is not None:
        cn, carr, _ = _t.spec(c, "c")
        if cn != acc or tuple(carr.shape) != tuple(lead):
            raise ValueError(f"c: {acc} of shape {tuple(lead)} is needed, got {cn} of shape "
                             f"{tuple(carr.shape)}")
        cc = np.ascontiguousarray(carr).reshape(-1)
    p = _preset_arg(preset)
    rows = int(np.prod(lead, dtype=np.int64)) if lead else 1
    if wide:
        c32 = None if cc is None else cc.astype(np.uint32)
        out = unwrap(_core.dot_codes(ca.reshape(rows, K), cb.reshape(rows, K), c32, p, na, nb,
                                     acc))
        if acc == "fp16":
            out = out.astype(np.uint16)
        return _t.result(out.reshape(lead), acc, kind, device)
    out = unwrap(_core.dot(ca.reshape(rows, K), cb.reshape(rows, K), cc, p, na, nb))
    return _t.result(out.reshape(lead), "fp32", kind, device)
