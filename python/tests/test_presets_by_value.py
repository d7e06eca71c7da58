# SPDX-License-Identifier: BSD-2-Clause
"""Presets and Profiles are used by value, arguments of the wrong type are TypeErrors, and
objects that only look like tensors are refused. Expected bits are derived by hand (FP8 and
binary32 encodings written out in the comments)."""

import dataclasses
import sys
import types

import numpy as np
import pytest

import mmaemu

E4M3_ONE = 0x38  # 0.0111.000 = 2^0
E4M3_2M6 = 0x08  # 0.0001.000 = 2^(1-7) = 2^-6
ONE = np.float32(1.0)


def one_plus_2m6():
    """One row of K = 16: a = [1, 2^-6, 0...], b = [1, 1, 0...]; exactly 1 + 2^-6."""
    a = np.zeros((1, 16), dtype=np.uint8)
    b = np.zeros((1, 16), dtype=np.uint8)
    a[0, 0], a[0, 1] = E4M3_ONE, E4M3_2M6
    b[0, 0], b[0, 1] = E4M3_ONE, E4M3_ONE
    return a, b


def bits(x):
    return int(mmaemu.testing.bits(x).reshape(-1)[0])


# Eight ways to alter a shipped preset while keeping its name (and maturity).
PRESET_CHANGES = [
    {"nfma": -1},
    {"nfma": 8},
    {"frac": 3},
    {"frac_out": 10},
    {"rounding": "nearest_even"},
    {"min_exp": -100},
    {"late_c": True},
    {"slow_chunk": 2},
]


@pytest.mark.parametrize("change", PRESET_CHANGES, ids=lambda c: ",".join(map(str, c.items())))
def test_an_altered_shipped_preset_is_refused_never_replaced(change):
    ada = mmaemu.get_preset("ada")
    with pytest.raises(ValueError, match="differs from the shipped preset 'ada'") as e:
        dataclasses.replace(ada, **change)
    field = next(iter(change))
    assert field in str(e.value) and "maturity='custom'" in str(e.value)


def test_a_shipped_preset_unaltered_or_its_metadata_changed():
    ada = mmaemu.get_preset("ada")
    assert dataclasses.replace(ada) == ada  # unaltered: still the shipped one
    for change in ({"evidence": "mine"}, {"validated_scope": "all"}):
        with pytest.raises(ValueError, match="differs from the shipped preset"):
            dataclasses.replace(ada, **change)
    with pytest.raises(ValueError, match="no shipped preset has that name"):
        dataclasses.replace(ada, name="not_shipped")


def test_an_altered_preset_made_custom_is_used_as_it_is():
    a, b = one_plus_2m6()
    ada = mmaemu.get_preset("ada")
    # ada keeps the 2^-6 product (13 fraction bits after alignment): 1 + 2^-6 = 0x3F820000.
    assert bits(mmaemu.model.dot(a, b, fmt="e4m3", preset=ada)) == 0x3F820000
    # The same with 3 fraction bits: 2^-6 is cut when aligned to 2^0: exactly 1.0 = 0x3F800000,
    # under the shipped name and under a new one alike.
    for name in ("ada", "mine"):
        mine = dataclasses.replace(ada, frac=3, maturity="custom", name=name)
        assert bits(mmaemu.model.dot(a, b, fmt="e4m3", preset=mine)) == 0x3F800000, name
    # Its own checks run: nfma = -1 is refused when the custom preset is made.
    with pytest.raises(ValueError, match="nfma"):
        dataclasses.replace(ada, nfma=-1, maturity="custom")


def test_a_hand_built_preset_with_a_new_name_works():
    a, b = one_plus_2m6()
    p = mmaemu.Preset(name="my_new_preset", nfma=16, frac=13, frac_out=13)
    assert p.maturity == "custom"
    assert bits(mmaemu.model.dot(a, b, fmt="e4m3", preset=p)) == 0x3F820000
    assert mmaemu.get_preset(p) is p


# Eight ways to alter a shipped profile while keeping its name.
PROFILE_CHANGES = [
    lambda p: {"sm_count": p.sm_count + 1},
    lambda p: {"sm_count": -1},
    lambda p: {"preset": "ada"},
    lambda p: {"gpu_name": p.gpu_name + " X"},
    lambda p: {"cublaslt_version": "0.0.0"},
    lambda p: {"workspace_bytes": 0},
    lambda p: {"splitk_table_id": p.splitk_table_id + "-other"},
    lambda p: {"rejects": ()},
]


@pytest.mark.parametrize("k", range(len(PROFILE_CHANGES)))
def test_an_altered_shipped_profile_is_refused_never_replaced(k):
    shipped = mmaemu.get_profile("hopper")
    mine = dataclasses.replace(shipped, **PROFILE_CHANGES[k](shipped))
    assert mine != shipped
    a = np.full((16, 32), E4M3_ONE, dtype=np.uint8)
    with pytest.raises(mmaemu.UnsupportedFeatureError, match="hand-built"):
        mmaemu.scaled_mm(a, a.T, ONE, ONE, profile=mine, splitk=1, fmt="e4m3")
    with pytest.raises(mmaemu.UnsupportedFeatureError, match="hand-built"):
        mmaemu.accumulate(a, a, use_fast_accum=True, profile=mine, splitk=1, fmt="e4m3")
    assert mmaemu.explain(a, a.T, ONE, ONE, profile=mine, fmt="e4m3").validation[0] == \
        "UnsupportedFeatureError"


def test_wrong_argument_types_raise_type_error_naming_the_argument():
    a = np.full((16, 32), E4M3_ONE, dtype=np.uint8)
    calls = {
        "scale_a": lambda: mmaemu.scaled_mm(a, a.T, None, ONE, fmt="e4m3"),
        "scale_b": lambda: mmaemu.scaled_mm(a, a.T, ONE, None, fmt="e4m3"),
        "input": lambda: mmaemu.scaled_mm(None, a.T, ONE, ONE, fmt="e4m3"),
        "mat2": lambda: mmaemu.scaled_mm(a, "x", ONE, ONE, fmt="e4m3"),
        "use_fast_accum": lambda: mmaemu.scaled_mm(a, a.T, ONE, ONE, use_fast_accum="yes",
                                                   fmt="e4m3"),
        "profile": lambda: mmaemu.scaled_mm(a, a.T, ONE, ONE, profile=5, fmt="e4m3"),
        "backend": lambda: mmaemu.scaled_mm(a, a.T, ONE, ONE, backend=None, fmt="e4m3"),
        "preset": lambda: mmaemu.model.dot(a, a, fmt="e4m3", preset=5),
        "Preset.nfma": lambda: mmaemu.Preset(name="x", nfma="16"),
        "Preset.name": lambda: mmaemu.Preset(name=None),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError) as e:
            call()
        assert type(e.value) is TypeError, what
        assert str(e.value).startswith(what + ":"), (what, str(e.value))
    # The core's own check, past the package: a missing tensor is a TypeError there too.
    status, value, _ = mmaemu._core.scaled_mm(
        mmaemu._tensors.spec(a, "input", "e4m3"), mmaemu._tensors.spec(a.T, "mat2", "e4m3"),
        None, mmaemu._tensors.spec(ONE, "scale_b"), None, None, None, False, None, "", "1",
        "auto", False)
    assert status == "error" and value[0] == "TypeError" and value[1].startswith("scale_a:")


@pytest.fixture
def fake_torch(monkeypatch):
    """A module named torch whose Tensor is object: everything is an instance of it."""
    fake = types.ModuleType("torch")
    fake.Tensor = object
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def test_a_fake_torch_whose_tensor_is_object_does_not_make_everything_a_tensor(fake_torch):
    a = np.full((16, 32), E4M3_ONE, dtype=np.uint8)
    # NumPy arrays are still NumPy arrays: 32 products 1 * 1 = 32.0 = 0x42000000.
    r = mmaemu.scaled_mm(a, a.T, ONE, ONE, out_dtype="float32", splitk=1, fmt="e4m3")
    assert (mmaemu.testing.bits(r) == 0x42000000).all()
    # Anything else is a TypeError naming the argument, not an AttributeError.
    with pytest.raises(TypeError, match="^input:"):
        mmaemu.scaled_mm(object(), a.T, ONE, ONE, fmt="e4m3")


def test_an_object_that_only_looks_like_a_tensor_is_a_type_error(monkeypatch):
    fake = types.ModuleType("torch")

    class Tensor:  # a class of its own, but with nothing a tensor has
        pass

    fake.Tensor = Tensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    a = np.full((16, 32), E4M3_ONE, dtype=np.uint8)
    with pytest.raises(TypeError, match="^input: .*not a torch tensor"):
        mmaemu.scaled_mm(Tensor(), a.T, ONE, ONE, fmt="e4m3")

    class Partial(Tensor):  # has a dtype, but breaks on use
        dtype = "torch.float8_e4m3fn"
        requires_grad = False
        device = None
        shape = (16, 32)

        def element_size(self):
            return 1

        def detach(self):
            raise AttributeError("no detach")

        def view(self, *_):
            return self

    fake.dtype = type("dtype", (), {})
    with pytest.raises(TypeError, match="^mat2: .*only looks like a torch tensor"):
        mmaemu.scaled_mm(a, Partial(), ONE, ONE, fmt="e4m3")
