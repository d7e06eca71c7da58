#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# gpu-validate.sh OUTDIR: runs on the GPU machine, from the bundle that `make gpu-bundle` wrote
# (no network, no apt; nvcc, CMake, ninja and python3 are there, this project's Debian libraries
# are not). Records the machine (nvidia-smi -q, uname -a, the bundle's commit), checks that the
# bundled mmaemu starts (else records why and builds what it can from src.tar.gz), then runs
# each step under its own time limit with its own log in OUTDIR, going on after failures:
#   info --json, fatbin check, cuobjdump listing of the fatbins, selftest --json,
#   splitk-live (the split-K live query: what this GPU's cuBLASLt answers for a few shapes),
#   tier run T3, bench kernels --json
# and appends one line per step to OUTDIR/summary.txt as soon as the step ends, so a later
# step that hangs or is killed loses nothing written before it. The whole run stays within
# GPU_VALIDATE_BUDGET_S seconds (default 450): each step's limit is cut to what is left.
# Exit status: 0 when every step passed, 1 when one did not, 2 for a bad argument.
set -u

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: gpu-validate.sh OUTDIR" >&2
  exit 2
fi
bundle=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1" || { echo "gpu-validate.sh: OUTDIR: cannot create '$1'" >&2; exit 2; }
out=$(cd "$1" && pwd)
budget=${GPU_VALIDATE_BUDGET_S:-450}
t0=$(date +%s)
deadline=$((t0 + budget))
summary=$out/summary.txt
scratch=$(mktemp -d /tmp/mmaemu-gpu-validate.XXXXXX)
failures=0

note() {
  echo "$*" >>"$summary"
  echo "gpu-validate: $*" >&2
}

left() { echo $((deadline - $(date +%s))); }

verdict_of() {
  case "$1" in
    0) echo "ok" ;;
    1) echo "FAIL (exit 1)" ;;
    4) echo "UNAVAILABLE (exit 4)" ;;
    124 | 137) echo "TIMEOUT" ;;
    *) echo "ERROR (exit $1)" ;;
  esac
}

# run_step NAME MAX_SECONDS COMMAND...: runs COMMAND in the bundle's root with stdin closed,
# stdout and stderr in OUTDIR/NAME.log, under min(MAX_SECONDS, time left - 5 s).
run_step() {
  local name=$1 max=$2
  shift 2
  local l t s rc d
  l=$(left)
  if [ "$l" -lt 15 ]; then
    note "$(printf '%-16s %-22s %5s  %s' "$name" "SKIPPED (budget)" "-" "the ${budget} s budget is spent")"
    failures=$((failures + 1))
    return 0
  fi
  t=$max
  [ "$t" -gt $((l - 5)) ] && t=$((l - 5))
  s=$(date +%s)
  (cd "$bundle" && timeout -k 10 "$t" "$@") >"$out/$name.log" 2>&1 </dev/null
  rc=$?
  d=$(($(date +%s) - s))
  [ "$rc" -eq 0 ] || failures=$((failures + 1))
  note "$(printf '%-16s %-22s %4ss  %s' "$name" "$(verdict_of "$rc")" "$d" "$name.log (limit ${t} s)")"
  sync "$out/$name.log" 2>/dev/null || true
  return 0
}

if [ -f "$summary" ]; then
  echo "" >>"$summary"
fi
note "== gpu-validate $(date -u +%Y-%m-%dT%H:%M:%SZ), bundle $bundle, budget ${budget} s"

# The machine and the bundle.
timeout 30 nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
note "gpu: $(timeout 20 nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
  --format=csv,noheader 2>&1 | head -1)"
uname -a >"$out/uname.txt" 2>&1
note "uname: $(cat "$out/uname.txt")"
note "libc: $(ldd --version 2>&1 | head -1)"
note "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release.*' || echo 'not found')"
if [ -f "$bundle/BUNDLE.txt" ]; then
  cp "$bundle/BUNDLE.txt" "$out/bundle.txt"
  note "bundle $(grep '^commit:' "$bundle/BUNDLE.txt")"
else
  note "bundle: no BUNDLE.txt (commit unknown)"
fi

export MMAEMU_FATBIN_DIR=$bundle/kernels/bin
export MMAEMU_CACHE_DIR=$scratch/cache
mkdir -p "$MMAEMU_CACHE_DIR" && chmod 700 "$MMAEMU_CACHE_DIR"

# Does the bundled binary start?
mmaemu=$bundle/bin/mmaemu
build_dir=""
if timeout 30 "$mmaemu" --version >"$out/version.txt" 2>&1; then
  note "mmaemu: $(head -1 "$out/version.txt") (bundled binary)"
else
  rc=$?
  {
    echo "bundled bin/mmaemu --version failed with exit $rc:"
    cat "$out/version.txt"
    echo "--- ldd bin/mmaemu"
    ldd "$mmaemu" 2>&1
    echo "--- this machine: $(ldd --version 2>&1 | head -1)"
    grep '^needs:' "$bundle/BUNDLE.txt" 2>/dev/null
  } >"$out/bundled-binary-failure.txt"
  note "mmaemu: the bundled binary does not start (exit $rc): see bundled-binary-failure.txt"
  mmaemu=""
  # Fallback: build from the source tarball what this machine can build.
  src=$scratch/src
  mkdir -p "$src"
  if tar xzf "$bundle/src.tar.gz" -C "$src" 2>"$out/fallback-build.log"; then
    l=$(left)
    if timeout $((l / 3)) cmake -S "$src/mmaemu" -B "$src/build" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DMMAEMU_OPENBLAS=OFF -DMMAEMU_BENCH=OFF \
      >>"$out/fallback-build.log" 2>&1 &&
      timeout $((l / 3)) cmake --build "$src/build" --target mmaemu \
        >>"$out/fallback-build.log" 2>&1; then
      mmaemu=$src/build/harness/mmaemu
      build_dir=$src/build
      note "mmaemu: built from src.tar.gz (fallback-build.log)"
    else
      note "mmaemu: the fallback build failed too (fallback-build.log; this machine lacks the" \
        "project's libraries: HDF5, nlohmann-json, CLI11, OpenSSL, GTest)"
    fi
  else
    note "mmaemu: src.tar.gz could not be unpacked (fallback-build.log)"
  fi
  if [ -z "$mmaemu" ]; then
    # What can still be checked: the kernel sources compile for this GPU with its own nvcc.
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
    run_step nvcc-kernels 120 bash -c 'for f in kernels/cuda/*.cu; do
        echo "== $f"
        nvcc -cubin -O3 --fmad=false -Xptxas -v -arch="sm_$1" -o "$0/$(basename "$f").cubin" "$f" ||
          exit 1
      done' "$scratch" "${cc:-90}"
  fi
fi

if [ -n "$mmaemu" ]; then
  run_step info 30 "$mmaemu" info --json "$out/info.json"
  run_step fatbin-check 20 "$mmaemu" fatbin check --dir kernels/bin --sources kernels/cuda
  if command -v cuobjdump >/dev/null; then
    # The device machine's cuobjdump against the listing committed with the fatbins (which
    # may come from the built-in container parser where the fatbins were built).
    run_step cuobjdump 20 bash -c 'for f in kernels/bin/*.fatbin; do
        echo "== $(basename "$f")"; (cd kernels/bin && cuobjdump --list-elf --list-ptx "$(basename "$f")") || exit 1
      done >"$0/cuobjdump-device.txt"
      diff <(grep -E "^(==|ELF|PTX)" kernels/bin/cuobjdump.txt) \
           <(grep -E "^(==|ELF|PTX)" "$0/cuobjdump-device.txt")' "$out"
  else
    note "$(printf '%-16s %-22s' cuobjdump 'SKIPPED (no cuobjdump)')"
  fi
  run_step selftest 90 "$mmaemu" selftest --json "$out/selftest.json"
  # The split-K live query (docs/backends.md, "Split-K live query"): splitk=auto on the h200
  # profile asks this GPU's cuBLASLt (torch's, when python3 with torch can name it) for the
  # Evo 2 shapes and a small one, unsplit and fast. Each answer, mapped to a decision or
  # declined, is kept in splitk-live/ and the log; the step fails only when the query did not
  # reach the heuristic (no device matching the profile, no cuBLASLt, another version).
  lt=$(timeout 60 python3 -c 'import torch, re
x = torch.ones(64, 64, device="cuda")
(x @ x).sum().item()
for l in open("/proc/self/maps"):
    m = re.search(r"(/\S*libcublasLt\.so[.0-9]*)$", l.strip())
    if m: print(m.group(1)); break' 2>/dev/null)
  note "splitk-live: cuBLASLt of torch: ${lt:-not found (the ladder picks one)}"
  run_step splitk-live 60 env MMAEMU_CUBLASLT_PATH="$lt" bash -c 'mkdir -p "$1/splitk-live"
    asked=0 other=0
    for shape in "64 64 64" "2048 5760 1920" "16 5760 1920" "5760 2048 1920" "2048 1920 5760" \
      "1 1920 5760"; do
      for fast in "" "--fast"; do
        name="$(echo "$shape" | tr " " x)${fast:+-fast}"
        "$0" explain $shape $fast --out bf16 --profile h200 --backend reference \
          --json "$1/splitk-live/$name.json" >"$1/splitk-live/$name.txt" 2>&1
        echo "== $shape ${fast:-(FAST_ACCUM 0)}: exit $?"
        grep -E "^(split|validation) " "$1/splitk-live/$name.txt"
        if grep -qE "source=live-query|live-query: cuBLASLt .* answered" "$1/splitk-live/$name.txt"
        then asked=$((asked + 1)); else other=$((other + 1)); fi
      done
    done
    echo "splitk-live: $asked answered by the heuristic, $other not asked"
    [ "$other" -eq 0 ]' "$mmaemu" "$out"
  if [ -n "$build_dir" ]; then
    run_step tier-T3 240 "$mmaemu" tier run T3 --log-dir "$out/logs" --build-dir "$build_dir"
  else
    run_step tier-T3 240 "$mmaemu" tier run T3 --log-dir "$out/logs"
  fi
  run_step bench-kernels 100 "$mmaemu" bench kernels --json "$out/bench-kernels.json"
else
  note "no working mmaemu: info, selftest, tier T3 and bench kernels did not run"
  failures=$((failures + 1))
fi

rm -rf "$scratch"
note "== done in $(($(date +%s) - t0)) s: $failures step(s) not ok"
[ "$failures" -eq 0 ]
