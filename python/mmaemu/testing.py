# SPDX-License-Identifier: BSD-2-Clause
"""Testing helpers: bit views and the one bit comparator (the C++ core's compare_bits)."""

import numpy as np

from . import _core
from . import _tensors as _t
from ._errors import unwrap


def bits(t):
    """The integer view of t with the same element size (uint8, int16, int32 or int64),
    without a copy."""
    return _t.int_view(t)


def _host(x):
    """(dtype name, NumPy array on the CPU) of a tensor or array."""
    if _t.is_torch_tensor(x):
        y = x.detach()
        if y.device.type != "cpu":
            y = y.cpu()
        return str(y.dtype)[6:], np.asarray(bits(y).numpy())
    a = np.asarray(x)
    return a.dtype.name, a


def assert_bitwise_equal(actual, expected, *, nan="bits", msg=""):
    """Asserts equal dtype, shape and bits (on the CPU). nan="mask" accepts any NaN payload
    where both are NaN. On failure, the AssertionError counts the mismatches by class (zero
    sign, NaN payload, value) and lists the first ten."""
    if nan not in ("bits", "mask"):
        raise ValueError(f"nan: {nan!r} is not 'bits' or 'mask'")
    prefix = f"{msg}: " if msg else ""
    da, xa = _host(actual)
    de, xe = _host(expected)
    if da != de:
        raise AssertionError(f"{prefix}dtype differs: actual {da}, expected {de}")
    if tuple(xa.shape) != tuple(xe.shape):
        raise AssertionError(f"{prefix}shape differs: actual {tuple(xa.shape)}, expected "
                             f"{tuple(xe.shape)}")
    ia = np.ascontiguousarray(bits(xa)).reshape(-1)
    ie = np.ascontiguousarray(bits(xe)).reshape(-1)
    try:
        fmt = _t.format_name(da)
    except ValueError:
        fmt = None
    if fmt is None:
        # Not a float format of mmaemu's (integers, float64): plain integer comparison.
        diff = np.nonzero(ia != ie)[0]
        counts = {"value": int(diff.size)}
        first = [(int(i), int(ie[i]), int(ia[i]), "value") for i in diff[:10]]
    else:
        counts, first = unwrap(_core.compare_bits(ie, ia, fmt, nan))
    total = sum(counts.values())
    if total == 0:
        return
    lines = [f"{prefix}{total} of {ia.size} elements differ ("
             + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")"]
    shape = tuple(xa.shape)
    for i, e, a, cls in first:
        where = np.unravel_index(i, shape) if shape else ()
        if fmt is not None:
            e_text = _core.decompose_bits(e, fmt)
            a_text = _core.decompose_bits(a, fmt)
        else:
            e_text, a_text = hex(e & (2 ** (8 * ia.itemsize) - 1)), \
                hex(a & (2 ** (8 * ia.itemsize) - 1))
        lines.append(f"  [{', '.join(str(int(k)) for k in where)}] {cls}: expected {e_text}, "
                     f"actual {a_text}")
    raise AssertionError("\n".join(lines))
