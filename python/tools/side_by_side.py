#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Side by side on a GPU: torch._scaled_mm against mmaemu.scaled_mm, bit for bit.

usage: PYTHONPATH=build/python python3 python/tools/side_by_side.py OUT_DIR [--profile NAME]
       [--seed N]

Needs torch with CUDA and a device matching the profile (Profile.matches_device). Writes
OUT_DIR/side_by_side.json: one row per call (shape, dtypes, fast, mismatches by class) and the
totals. Exit status: 0 all equal, 1 a mismatch, 4 nothing could be compared (no torch, no
device, or a device that does not match the profile).
"""

import argparse
import json
import pathlib
import sys

SHAPES = [(16, 16, 32), (64, 128, 256), (128, 64, 1024), (256, 256, 4096), (1, 16, 128)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report = {"schema": "mmaemu-side-by-side/1", "seed": args.seed, "rows": []}

    def finish(code, why=""):
        report["exit_code"], report["reason"] = code, why
        (out / "side_by_side.json").write_text(json.dumps(report, indent=2) + "\n")
        print(why or f"{report.get('passed', 0)} passed, {report.get('failed', 0)} failed")
        return code

    try:
        import torch
    except ImportError:
        return finish(4, "torch is not importable")
    import mmaemu

    if not torch.cuda.is_available():
        return finish(4, "no CUDA device")
    profile = mmaemu.get_profile(args.profile)
    report["profile"] = profile.name
    report["device"] = torch.cuda.get_device_name(0)
    report["torch"] = torch.__version__
    report["matches_device"] = profile.matches_device(0)
    g = torch.Generator().manual_seed(args.seed)
    passed = failed = 0
    for M, N, K in SHAPES:
        for fast in (False, True):
            for out_dtype in (torch.bfloat16, torch.float32, torch.float16):
                a = (torch.randn(M, K, generator=g) * 2).to(torch.float8_e4m3fn)
                w = (torch.randn(N, K, generator=g) * 2).to(torch.float8_e4m3fn)
                sa = torch.tensor(0.5)
                sb = torch.tensor(1.25)
                row = {"M": M, "N": N, "K": K, "fast": fast, "out": str(out_dtype)}
                try:
                    hw = torch._scaled_mm(a.cuda(), w.cuda().t(), sa.cuda(), sb.cuda(),
                                          out_dtype=out_dtype, use_fast_accum=fast).cpu()
                    em = mmaemu.scaled_mm(a, w.t(), sa, sb, out_dtype=out_dtype,
                                          use_fast_accum=fast, profile=profile, splitk=1)
                    mmaemu.testing.assert_bitwise_equal(em, hw)
                    row["outcome"] = "PASS"
                    passed += 1
                except AssertionError as e:
                    row["outcome"], row["detail"] = "FAIL", str(e)[:4000]
                    failed += 1
                except Exception as e:  # noqa: BLE001
                    row["outcome"], row["detail"] = "ERROR", f"{type(e).__name__}: {e}"
                    failed += 1
                report["rows"].append(row)
    report["passed"], report["failed"] = passed, failed
    return finish(1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
