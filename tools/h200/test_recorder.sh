#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The recorder's own code path without a GPU: record.py --fake-device writes a tiny grid (the
# reference's outputs via `mmaemu recordings fill`), `mmaemu replay` replays it bit-exact, and a
# damaged copy exits 2 naming the file.
# Usage: test_recorder.sh MMAEMU RECORD_PY WORKDIR. Exit 77 (skip) without h5py/numpy.
set -u
mmaemu=$1 record=$2 work=$3
py=/usr/bin/python3
if ! "$py" -c 'import h5py, numpy' 2>/dev/null; then
  echo "skipped: $py cannot import h5py and numpy (Debian: python3-h5py)"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
"$py" "$record" --out "$work/rec" --grid small --fake-device --mmaemu "$mmaemu" \
  --budget-seconds 120 || fail "record.py --fake-device exited $?"
[ -f "$work/rec/h200_00.h5" ] || fail "no recording written"
[ -f "$work/rec/run.json" ] || fail "no run.json written"
"$mmaemu" replay --verbose "$work/rec/h200_00.h5" >"$work/replay.txt" 2>&1
rc=$?
tail -5 "$work/replay.txt"
[ "$rc" -eq 0 ] || fail "replay exited $rc"
grep -q ' 0 failed' "$work/replay.txt" || fail "replay reports failures"
# Every set of the small grid is there: shapes, decoding and the rejected calls.
for set in h200_tiny h200_k128 h200_rejects; do
  grep -q "^$set " "$work/replay.txt" || fail "set $set missing from the replay"
done
"$mmaemu" recordings show "$work/rec/h200_00.h5" --json - >"$work/show.json" 2>/dev/null ||
  fail "recordings show exited $?"
for key in '"device": "fake"' '"recorder_commit"' '"seed"' '"gpu"'; do
  grep -q "$key" "$work/show.json" || fail "provenance key $key missing"
done
# Per call: the rejected call's error text, the outputs' sha256, the operand streams.
"$py" - "$work/rec/h200_00.h5" <<'PYEOF' || fail "per-call provenance missing"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    rej = f["cases/h200_rejects"]
    calls = {rej[k].attrs["id"]: rej[k] for k in rej}
    e = calls["rejects/e5m2xe5m2"]
    assert "Float8_e5m2" in e.attrs["torch_error:bf16_slow"], dict(e.attrs)
    assert e["out000"].attrs["expect_error"] == "ReferenceRejectsError"
    tiny = f["cases/h200_tiny/000000"]
    assert len(tiny.attrs["sha256:fp32_slow"]) == 64
    assert tiny.attrs["operand_streams"] and tiny.attrs["seed"]
PYEOF
# With a probe's answers (a stub JSON: split-K 2 for the K = 128 calls), the outputs carry the
# split the probe saw, and the replay (and the fill) use it.
"$py" "$record" --out "$work" --grid small --emit-probe-queries "$work/q.txt" >/dev/null ||
  fail "--emit-probe-queries exited $?"
"$py" - "$work/q.txt" "$work/probe.json" <<'PYEOF' || fail "stub probe answers"
import json, sys
qs = []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    M, N, K, a, b, out, fast, sr = line.split()
    qs.append({"M": int(M), "N": int(N), "K": int(K), "a": a, "b": b, "out": out,
               "fast": fast == "1", "scale_result": sr == "1", "ok": True,
               "splitk_num": 2 if int(K) == 128 else 1, "reduction_scheme": "compute_type",
               "tile_id": 1, "stages_id": 1, "algo_id": 1})
json.dump({"format": "mmaemu-splitk-probe/1", "queries": qs}, open(sys.argv[2], "w"))
PYEOF
"$py" "$record" --out "$work/rec2" --grid small --fake-device --mmaemu "$mmaemu" \
  --probe "$work/probe.json" >/dev/null || fail "record.py --probe exited $?"
"$mmaemu" replay "$work/rec2/h200_00.h5" >"$work/replay2.txt" 2>&1 || fail "replay with splits"
"$py" - "$work/rec2/h200_00.h5" <<'PYEOF' || fail "the probe's split is not recorded"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    g = f["cases/h200_k128"]
    import json
    for c in g:
        want = "2,contiguous" if json.loads(g[c].attrs["call"])["K"] == 128 else "1"
        seen = {g[c][o].attrs["splitk"] for o in g[c] if o.startswith("out")}
        assert seen == {want}, (c, seen)
    assert any(k.startswith("cublaslt:") for k in g["000000"].attrs), dict(g["000000"].attrs)
PYEOF
# Outputs kept only as sha256 + samples (digests.json, here every output over 256 elements) are
# replayed by --check-digests: operands regenerated from the seed, sha256 of the reference's
# output; a tampered digest fails.
"$py" "$record" --out "$work/rec3" --grid small --fake-device --mmaemu "$mmaemu" \
  --keep-elements 256 >/dev/null || fail "record.py --keep-elements exited $?"
[ -s "$work/rec3/digests.json" ] || fail "no digests.json"
"$py" "$record" --out "$work/rec3" --check-digests "$work/rec3/digests.json" \
  --mmaemu "$mmaemu" >"$work/digests.txt" || fail "--check-digests exited $?"
grep -q ' 0 failed' "$work/digests.txt" || fail "digest check reports failures"
"$py" - "$work/rec3/digests.json" "$work/tampered.json" <<'PYEOF' || fail "tampering"
import json, sys
d = json.load(open(sys.argv[1]))
e = next(x for x in d["outputs"] if "sha256" in x)
e["sha256"] = ("0" if e["sha256"][0] != "0" else "1") + e["sha256"][1:]
json.dump(d, open(sys.argv[2], "w"))
PYEOF
"$py" "$record" --out "$work/rec3" --check-digests "$work/tampered.json" --mmaemu "$mmaemu" \
  >"$work/tampered.txt" && fail "a tampered digest passed"
grep -q ' 1 failed' "$work/tampered.txt" || fail "the tampered digest is not the one failure"
# The device path (run_torch, provenance, digests of large outputs) against a stand-in torch
# (test_mock_torch: zeros, torch's rejections): the glue runs and writes readable files.
here=$(dirname "$record")
PYTHONPATH="$here/test_mock_torch" "$py" "$record" --out "$work/rec4" --grid small \
  --keep-elements 256 >"$work/mock.txt" 2>&1 || { cat "$work/mock.txt"; fail "mock torch run"; }
"$mmaemu" replay "$work/rec4/h200_00.h5" >"$work/replay4.txt" 2>&1
[ $? -eq 1 ] || fail "the mock's zero outputs should replay as FAIL (exit 1), not error"
grep -q '^h200_rejects ' "$work/replay4.txt" || fail "mock run: no rejects set"
"$py" - "$work/rec4/h200_00.h5" "$work/rec4/digests.json" <<'PYEOF' || fail "mock provenance"
import json, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["gpu"] == "Mock H200" and f.attrs["sm_count"] == "132", dict(f.attrs)
    assert f.attrs["device"] == "cuda" and f.attrs["torch"] == "0.0-mock"
    rej = f["cases/h200_rejects"]
    texts = [rej[c].attrs[k] for c in rej for k in rej[c].attrs if k.startswith("torch_error:")]
    assert any(t.startswith("RuntimeError: Multiplication of two Float8_e5m2") for t in texts), texts
d = json.load(open(sys.argv[2]))
e = next(x for x in d["outputs"] if "sha256" in x)
assert len(e["sha256"]) == 64 and e["rows"] and e["cols"], e.keys()
PYEOF
# A fake recording is never written where hardware recordings live.
"$py" "$record" --out "$work/recordings/data/h200" --grid small --fake-device \
  --mmaemu "$mmaemu" >/dev/null 2>&1 && fail "fake device wrote under recordings/data/h200"
# Damaged: truncated to half.
size=$(wc -c <"$work/rec/h200_00.h5")
head -c $((size / 2)) "$work/rec/h200_00.h5" >"$work/damaged.h5"
"$mmaemu" replay "$work/damaged.h5" >"$work/damaged.out" 2>"$work/damaged.err"
rc=$?
cat "$work/damaged.err"
[ "$rc" -eq 2 ] || fail "a damaged recording exited $rc, expected 2"
grep -q 'damaged.h5' "$work/damaged.err" || fail "the error does not name the file"
"$mmaemu" recordings fill "$work/damaged.h5" --json "$work/fill.json" 2>"$work/fill.err"
rc=$?
[ "$rc" -eq 2 ] || fail "recordings fill of a damaged recording exited $rc, expected 2"
grep -q 'damaged.h5' "$work/fill.err" || fail "recordings fill's error does not name the file"
[ ! -e "$work/fill.json" ] || fail "recordings fill wrote an answer for a damaged file"
echo "PASS"
