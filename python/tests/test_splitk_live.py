# SPDX-License-Identifier: BSD-2-Clause
"""The Python module installs the split-K live query (docs/backends.md, "Split-K live query"):
importing opens no cuBLASLt, a process without a visible device never maps one, and on the fake
driver (an "NVIDIA H200") with the fake libcublasLt of kernels/tests, splitk="auto" takes its
decision from cuBLASLt's answer where the live map covers it. Each case runs in a subprocess:
the libraries it loads stay loaded. The fakes live in the build tree next to the module."""

import os
import pathlib
import subprocess
import sys

import pytest

import mmaemu

BUILD = pathlib.Path(mmaemu.__file__).resolve().parents[2]
FAKE_CUDA = BUILD / "kernels" / "tests" / "libmmaemu_fake_cuda.so"
FAKE_CUBLASLT = BUILD / "kernels" / "tests" / "libmmaemu_fake_cublaslt.so"

needs_fakes = pytest.mark.skipif(not (FAKE_CUDA.is_file() and FAKE_CUBLASLT.is_file()),
                                 reason="the fake libcuda / libcublasLt are not built here")

RESOLVE = """
import mmaemu
try:
    d = mmaemu.resolve_splitk(2048, 5760, 1920, a_dtype="e4m3", b_dtype="e4m3",
                              out_dtype="bf16", use_fast_accum=False, profile="h200",
                              strict=True, dry=True)
    print("decided", d.source, d.S, d.scheme, d.verified)
    print("note", d.note)
except mmaemu.SplitKUnknownError as e:
    print("unknown", e)
maps = open("/proc/self/maps").read()
print("mapped", "libcublasLt" in maps or "fake_cublaslt" in maps)
"""


def run_py(code, env_extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MMAEMU_") or k == "MMAEMU_SOURCE_DIR"}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)


def h200(answer):
    return {"MMAEMU_LIBCUDA_PATH": str(FAKE_CUDA), "MMAEMU_FAKE_CUDA_NAME": "NVIDIA H200",
            "MMAEMU_CUBLASLT_PATH": str(FAKE_CUBLASLT), "MMAEMU_FAKE_CUBLASLT_ANSWER": answer}


def test_import_maps_no_cublaslt():
    r = run_py("import mmaemu\nmaps = open('/proc/self/maps').read()\n"
               "assert 'libcublasLt' not in maps and 'libcuda' not in maps, 'mapped at import'\n"
               "print('clean')\n", {})
    assert r.returncode == 0 and "clean" in r.stdout, r.stderr


@needs_fakes
def test_without_a_visible_device_no_cublaslt_is_mapped():
    env = h200("66,21,36,1,0")
    env["MMAEMU_FAKE_CUDA_DEVICES"] = "0"
    r = run_py(RESOLVE, env)
    assert r.returncode == 0, r.stderr
    assert "live-query: no CUDA device is visible" in r.stdout, r.stdout
    assert "mapped False" in r.stdout, r.stdout


@needs_fakes
def test_a_mapped_answer_decides_auto():
    r = run_py(RESOLVE, h200("66,21,36,2,2"))
    assert r.returncode == 0, r.stderr
    assert "decided live-query 2 contiguous False" in r.stdout, r.stdout
    assert "bitequiv-h100-cublaslt-13.1.1" in r.stdout, r.stdout


@needs_fakes
def test_an_unmapped_answer_is_named():
    r = run_py(RESOLVE, h200("67,21,36,1,0"))
    assert r.returncode == 0, r.stderr
    assert "unknown" in r.stdout and "ALGO_ID 67" in r.stdout, r.stdout
