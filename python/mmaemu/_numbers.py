# SPDX-License-Identifier: BSD-2-Clause
"""Integer arguments read strictly, as the command line reads them: an int (or an object
with __index__, such as numpy.int64) in range, never a bool, a float truncated, a string
parsed or a value wrapped; TypeError or ValueError naming the argument and the value."""

import operator

INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1


def integer(value, name, lo=INT64_MIN, hi=INT64_MAX):
    """`value` as an int in [lo, hi]; TypeError for a non-integer, ValueError out of range."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an integer, got bool {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        text = repr(value)
        if len(text) > 64:
            text = text[:64] + "..."
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__} {text}") \
            from None
    if not lo <= v <= hi:
        raise ValueError(f"{name}: {v} is out of range (from {lo} to {hi})")
    return v
