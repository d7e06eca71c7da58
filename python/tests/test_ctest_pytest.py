# SPDX-License-Identifier: BSD-2-Clause
"""python/tools/ctest_pytest.py: every pytest test is its own ctest test, and a skipped one is
a ctest skip with its reason (never a pass); a failure, an error and an XPASS fail; the suite's
test is listed first and never leaves a stale result behind."""

import json
import pathlib
import subprocess
import sys

TOOL = pathlib.Path(__file__).resolve().parents[1] / "tools" / "ctest_pytest.py"

SUITE = '''
import pytest
def test_pass(): pass
def test_fail(): assert 1 == 2
def test_skip(): pytest.skip("no device here")
@pytest.mark.xfail(reason="a known disagreement")
def test_xfail(): assert False
@pytest.mark.xfail(reason="it should fail")
def test_xpass(): pass
@pytest.fixture
def broken(): raise RuntimeError("setup broke")
def test_setup_error(broken): pass
'''


def tool(*args, cwd):
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=cwd, capture_output=True,
                          text=True)


def test_each_pytest_test_reaches_ctest_with_its_own_outcome(tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_x.py").write_text(SUITE)
    out, results = str(tmp_path / "list.cmake"), str(tmp_path / "results.json")
    assert tool("collect", out, results, sys.executable, "A=1", "--", "suite",
                cwd=tmp_path).returncode == 0
    listing = (tmp_path / "list.cmake").read_text()
    adds = [line for line in listing.splitlines() if line.startswith("add_test(")]
    assert adds[0].startswith("add_test([=[python_pytest]=]"), "the suite's test comes first"
    assert len(adds) == 1 + 6
    assert "SKIP_REGULAR_EXPRESSION [=[^SKIPPED: ]=]" in listing
    assert "FIXTURES_SETUP [=[python_results]=]" in listing

    (tmp_path / "results.json").write_text("stale")
    run = tool("run", out, results, "--", "suite", cwd=tmp_path)
    assert run.returncode == 0, run.stdout  # the suite ran; each test says how it went
    got = json.loads((tmp_path / "results.json").read_text())["tests"]
    assert len(got) == 6

    want = {"pass": (0, "PASSED"), "fail": (1, "FAILED"), "skip": (0, "SKIPPED: no device here"),
            "xfail": (0, "XFAIL (expected to fail): a known disagreement"),
            "xpass": (1, "XPASS: expected to fail (it should fail) but passed"),
            "setup_error": (1, "FAILED")}
    for name, (code, first_line) in want.items():
        r = tool("result", results, f"suite/test_x.py::test_{name}", cwd=tmp_path)
        assert r.returncode == code, (name, r.stdout)
        assert r.stdout.splitlines()[0] == first_line, (name, r.stdout)
    gone = tool("result", results, "suite/test_x.py::test_gone", cwd=tmp_path)
    assert gone.returncode == 1


def test_a_test_the_list_does_not_register_fails_the_suite(tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_x.py").write_text("def test_a(): pass\n")
    out, results = str(tmp_path / "list.cmake"), str(tmp_path / "results.json")
    assert tool("collect", out, results, sys.executable, "--", "suite",
                cwd=tmp_path).returncode == 0
    (tmp_path / "suite" / "test_x.py").write_text("def test_a(): pass\ndef test_b(): pass\n")
    run = tool("run", out, results, "--", "suite", cwd=tmp_path)
    assert run.returncode == 1
    assert "suite/test_x.py::test_b" in run.stdout and "rebuild" in run.stdout
