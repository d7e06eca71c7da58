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
"$mmaemu" recordings show --json "$work/rec/h200_00.h5" >"$work/show.json" ||
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
echo "PASS"
