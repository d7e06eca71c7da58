# SPDX-License-Identifier: BSD-2-Clause
"""Importing has no side effects (no torch, no CUDA driver), the package works where torch
cannot be imported, and python -m mmaemu has the command line's options and exit statuses."""

import os
import subprocess
import sys

import pytest

BLOCK_TORCH = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
        return None
sys.meta_path.insert(0, _Block())
"""


def run_py(code, *args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *args, "-c", code] if code is not None
                          else [sys.executable, *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_import_imports_neither_torch_nor_the_driver():
    code = ("import sys, mmaemu\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n"
            "maps = open('/proc/self/maps').read()\n"
            "assert 'libcuda' not in maps, 'CUDA driver loaded'\n"
            "print('clean')\n")
    r = run_py(code, env_extra={"MMAEMU_DISABLE_CUDA": ""})
    assert r.returncode == 0 and "clean" in r.stdout, r.stderr


def test_numpy_only_environment():
    code = BLOCK_TORCH + (
        "import numpy as np, mmaemu\n"
        "a = np.full((16, 32), 0x38, np.uint8)\n"
        "r = mmaemu.scaled_mm(a, a.T, np.float32(1), np.float32(1), out_dtype='float32',"
        " splitk=1, fmt='e4m3')\n"
        "assert (r.view(np.uint32) == 0x42000000).all()\n"
        "print('numpy-only ok')\n")
    r = run_py(code)
    assert r.returncode == 0 and "numpy-only ok" in r.stdout, r.stderr


def test_warnings_as_errors_from_the_command_line():
    r = run_py("import mmaemu; mmaemu.get_preset('blackwell')", "-W", "error")
    assert r.returncode == 1 and "ExperimentalPresetWarning" in r.stderr


def cli(*args):
    return run_py(None, "-m", "mmaemu", *args, env_extra={"MMAEMU_DISABLE_CUDA": "1"})


def test_cli_info():
    r = cli("info")
    assert r.returncode == 0 and r.stdout.startswith("mmaemu ") and "profiles:" in r.stdout


def test_cli_info_json(tmp_path):
    out = tmp_path / "info.json"
    r = cli("info", "--json", str(out))
    assert r.returncode == 0 and out.exists()
    assert cli("info", "--device", "-1").returncode == 2


def test_cli_selftest_without_a_device_is_unavailable():
    r = cli("selftest")
    assert r.returncode == 4 and "0 passed, 0 failed" in r.stdout


def test_cli_explain_exit_statuses():
    ok = cli("explain", "16", "16", "32", "--splitk", "1")
    assert ok.returncode == 0 and "validation  ok" in ok.stdout
    raises = cli("explain", "16", "16", "32", "--splitk", "2,serial")
    assert raises.returncode == 1 and "ValueError" in raises.stdout
    auto = cli("explain", "16", "16", "32")
    assert auto.returncode == 1 and "SplitKUnknownError" in auto.stdout
    assert cli("explain", "16", "16").returncode == 2
    assert cli("explain", "16", "16", "32", "--bogus").returncode == 2
    assert cli("explain", "16", "16", "32", "--device", "cuda:0").returncode == 4


@pytest.mark.parametrize("args", [[], ["bench"], ["--nope"]])
def test_cli_usage_errors(args):
    assert cli(*args).returncode == 2
