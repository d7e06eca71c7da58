#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The split-K probe where no CUDA driver is installed: exit 4, one line naming libcuda.
# Usage: test_probe_no_device.sh PROBE. Exit 77 (skip) where a driver is present.
set -u
probe=$1
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  echo "skipped: a CUDA driver (libcuda.so.1) is installed here"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '16 16 16 e4m3 e4m3 bf16 0 0\n' >"$dir/q.txt"
"$probe" --queries "$dir/q.txt" --json "$dir/p.json" 2>"$dir/err"
rc=$?
cat "$dir/err"
[ "$rc" -eq 4 ] || { echo "FAIL: exit $rc, expected 4"; exit 1; }
grep -q 'libcuda.so.1' "$dir/err" || { echo "FAIL: the message does not name libcuda.so.1"; exit 1; }
[ ! -e "$dir/p.json" ] || { echo "FAIL: an answer file was written"; exit 1; }
"$probe" --queries "$dir/q.txt" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: a missing --json is not exit 2"; exit 1; }
echo "PASS"
