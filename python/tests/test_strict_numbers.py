# SPDX-License-Identifier: BSD-2-Clause
"""Integer arguments of the Python API are read strictly, as the command line reads them:
a string, a float, a bool or an out-of-range value is a TypeError or ValueError naming the
argument, never parsed, truncated or wrapped (the core takes int64)."""

import warnings

import numpy as np
import pytest

import mmaemu


def resolve(M=16, N=16, K=256, splitk=(2, "serial")):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mmaemu.resolve_splitk(M, N, K, a_dtype="e4m3", b_dtype="e4m3",
                                     out_dtype="bfloat16", use_fast_accum=True, profile="ada",
                                     splitk=splitk, dry=True)


CASES = [
    # (keyword arguments, exception, text the message names)
    ({"M": ""}, TypeError, "M: expected an integer, got str ''"),
    ({"M": "16"}, TypeError, "M: expected an integer, got str '16'"),
    ({"N": 16.0}, TypeError, "N: expected an integer, got float 16.0"),
    ({"K": True}, TypeError, "K: expected an integer, got bool True"),
    ({"M": None}, TypeError, "M: expected an integer, got NoneType None"),
    ({"M": 10 ** 23}, ValueError, "M: 100000000000000000000000 is out of range"),
    ({"K": -1}, ValueError, "K: -1 is out of range"),
    ({"splitk": (2 ** 40, "serial")}, ValueError, "splitk S: 1099511627776 is out of range"),
    ({"splitk": 0}, ValueError, "splitk: 0 is out of range"),
]


@pytest.mark.parametrize("kwargs,exc,text", CASES)
def test_bad_integer_arguments_raise_naming_the_argument(kwargs, exc, text):
    with pytest.raises(exc) as e:
        resolve(**kwargs)
    assert text in str(e.value)


def test_numpy_integers_are_integers():
    d = resolve(M=np.int64(16), N=np.int32(16), K=np.uint16(256))
    assert (d.S, d.scheme) == (2, "serial")


@pytest.mark.parametrize("device,exc", [(-1, ValueError), (2 ** 40, ValueError),
                                        (1.0, ValueError), ("cuda:", ValueError),
                                        ("cuda: 1", ValueError), ("cuda:99999999999", ValueError)])
def test_bad_device_ordinals_raise_naming_the_device(device, exc):
    with pytest.raises(exc) as e:
        mmaemu.backends_status(device)
    assert "device" in str(e.value)
