# SPDX-License-Identifier: BSD-2-Clause
"""The committed hardware recordings (recordings/data/public/*.h5), replayed through the Python
API bit for bit: expected bits are the GPU's, read by the C++ recording reader."""

import numpy as np
import pytest

import mmaemu
from mmaemu import _core
from mmaemu._errors import unwrap

FILES = ["Ada_E4M3", "Ada_E5M2", "H100_E4M3", "H100_E5M2"]


def batches(source_dir, name):
    path = source_dir / "recordings" / "data" / "public" / f"{name}.h5"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return unwrap(_core.read_recording_mma(str(path)))


@pytest.mark.parametrize("name", FILES)
def test_model_dot_replays_the_recording(source_dir, name):
    for b in batches(source_dir, name):
        assert b["a"].shape == (len(b["ids"]), b["K"]) and len(b["ids"]) > 0
        c = b["c"].view(np.float32)
        got = mmaemu.model.dot(b["a"], b["b"], c, preset=b["preset"],
                               fmt=(b["fmt_a"], b["fmt_b"]))
        got_bits = mmaemu.testing.bits(got).view(np.uint32)
        bad = np.nonzero(got_bits != b["expect"])[0]
        assert bad.size == 0, (f"{bad.size} of {len(b['ids'])} cases differ, first "
                               f"{b['ids'][bad[0]]}: {got_bits[bad[0]]:#010x} vs "
                               f"{b['expect'][bad[0]]:#010x}")


HMMA_FILES = ["V100_fp16", "A100_fp16", "A100_bf16", "A100_tf32", "Ada_fp16", "Ada_bf16",
              "Ada_tf32", "H100_fp16", "H100_bf16", "H100_tf32"]


@pytest.mark.parametrize("name", HMMA_FILES)
def test_model_dot_replays_the_16bit_and_tf32_recordings(source_dir, name):
    seen = set()
    for b in batches(source_dir, name):
        seen.add(b["acc"])
        assert b["a"].shape == (len(b["ids"]), b["K"]) and len(b["ids"]) > 0
        if b["fmt_a"] == "tf32":
            a, bb = b["a"].view(np.float32), b["b"].view(np.float32)  # tf32 values
        else:
            a, bb = b["a"], b["b"]  # uint16 codes
        c = b["c"].view(np.float32)
        if b["acc"] == "fp16":
            c = c.astype(np.float16)  # exact: the recording holds fp16 values
        got = mmaemu.model.dot(a, bb, c, preset=b["preset"], fmt=b["fmt_a"], acc=b["acc"])
        if b["acc"] == "fp16":
            assert got.dtype == np.float16
            got = got.astype(np.float32)  # exact widening, compared as binary32 bits
        got_bits = np.ascontiguousarray(got).view(np.uint32)
        bad = np.nonzero(got_bits != b["expect"])[0]
        assert bad.size == 0, (f"{bad.size} of {len(b['ids'])} cases differ, first "
                               f"{b['ids'][bad[0]]}: {got_bits[bad[0]]:#010x} vs "
                               f"{b['expect'][bad[0]]:#010x}")
    assert seen == ({"fp32", "fp16"} if name.endswith("fp16") else {"fp32"})


@pytest.mark.parametrize("name", ["H100_E4M3", "H100_E5M2"])
def test_accumulate_replays_the_zero_accumulator_recordings(source_dir, name):
    # wgmma zeroed the accumulator: each case is a 1 x 1 GEMM of one row of a and b with fast
    # accumulation (one chain from +0). The diagonal of a block of cases is the block's cases.
    for b in batches(source_dir, name):
        assert b["c_policy"] == "zero"
        n = len(b["ids"])
        step = 100
        for s in range(0, n, step):
            a, bb = b["a"][s:s + step], b["b"][s:s + step]
            acc = mmaemu.accumulate(a, bb, use_fast_accum=True, profile="hopper", splitk=1,
                                    fmt=(b["fmt_a"], b["fmt_b"]))
            diag = np.diagonal(mmaemu.testing.bits(acc)).view(np.uint32)
            assert np.array_equal(diag, b["expect"][s:s + step]), f"cases from {b['ids'][s]}"


def test_h5py_reading_agrees_with_the_reader(source_dir):
    h5py = pytest.importorskip("h5py", reason="h5py is not installed: the cross-check of the "
                                              "reader is skipped")
    path = source_dir / "recordings" / "data" / "public" / "Ada_E4M3.h5"
    b = batches(source_dir, "Ada_E4M3")[0]
    with h5py.File(path, "r") as f:
        g = f["cases"]["Ada_E4M3"]
        assert np.array_equal(g["a"][()], b["a"]) and np.array_equal(g["expect"][()], b["expect"])
