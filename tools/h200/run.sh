#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Issue #12 on an H200, in one device call of under 8 minutes (docs/h200.md):
#
#   MMAEMU_COMMIT=<git commit of this tree> sh tools/h200/run.sh        # $OUT set by the tool
#
# What it builds: only the split-K probe (tools/h200/probe/splitk_probe.cpp + probe_main.cpp and
# the heuristic query it shares with the live query, kernels/src/cublaslt_api.cpp), with nvcc
# (or c++), no CUDA header and no CMake project: the device has none of
# this project's Debian libraries (HDF5 C++, Boost, CLI11, ...), and neither the probe nor the
# recorder needs them. The recorder is Python (the device's python3 with torch, h5py, numpy).
#
# What it writes under $OUT: env.txt (nvidia-smi, versions), probe_queries.txt, probe.json (the
# split-K the heuristic picks per call, from the cuBLASLt torch itself loads), recordings/
# (h200_NN.h5, mmaemu-recording/1 kind gemm_call, at most 8 files of at most 16 MiB; digests.json
# for the outputs too large to keep; run.json), run.log. Exit 0 when every step ran.
set -u
OUT=${OUT:?set OUT to the folder for the results}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
start=$(date +%s)
log="$OUT/run.log"
: >"$log"
say() { echo "run.sh [$(($(date +%s) - start)) s]: $*" | tee -a "$log"; }
status=0

# 1. The machine.
{
  nvidia-smi || true
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv || true
  command -v nvcc && nvcc --version
  python3 -c 'import torch, h5py, numpy; print("torch", torch.__version__, "cuda", torch.version.cuda, "h5py", h5py.__version__, "numpy", numpy.__version__); print(torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).multi_processor_count, "SMs")'
} >"$OUT/env.txt" 2>&1
say "env: $(grep -m1 'SMs' "$OUT/env.txt" || echo 'torch does not see a GPU')"

# 2. The probe: built here from source (about 20 s).
if command -v nvcc >/dev/null 2>&1; then
  CXX_CMD="nvcc -std=c++20 -O2"
else
  CXX_CMD="${CXX:-c++} -std=c++20 -O2"
fi
if $CXX_CMD -Ikernels/include tools/h200/probe/splitk_probe.cpp tools/h200/probe/probe_main.cpp \
  kernels/src/cublaslt_api.cpp -o "$OUT/splitk_probe" -ldl >>"$log" 2>&1; then
  say "probe built ($CXX_CMD)"
else
  say "probe build FAILED (see above)"
  status=1
fi

# 3. The probe asks the cuBLASLt that torch loads (the wheel's, else the toolkit's).
LIB=$(python3 -c 'import torch, re
x = torch.ones(64, 64, device="cuda")
(x @ x).sum().item()
try:
    f8 = x.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    torch._scaled_mm(f8, f8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
except Exception:
    pass
torch.cuda.synchronize()
for l in open("/proc/self/maps"):
    m = re.search(r"(/\S*libcublasLt\.so[.0-9]*)$", l.strip())
    if m: print(m.group(1)); break' 2>>"$log")
say "cuBLASLt of torch: ${LIB:-not found, the probe picks one}"
python3 tools/h200/record.py --out "$OUT" --emit-probe-queries "$OUT/probe_queries.txt" >>"$log" 2>&1
if [ -x "$OUT/splitk_probe" ]; then
  if [ -n "$LIB" ]; then set -- --lib "$LIB"; else set --; fi
  timeout 120 "$OUT/splitk_probe" --queries "$OUT/probe_queries.txt" --json "$OUT/probe.json" \
    --workspace 33554432 "$@" >>"$log" 2>&1
  rc=$?
  say "probe exit $rc"
  [ "$rc" -eq 0 ] || status=1
fi

# 4. The recorder: at most 5.5 minutes of calls, whatever is left of the 8.
PROBE_ARG=""
[ -s "$OUT/probe.json" ] && PROBE_ARG="--probe $OUT/probe.json"
left=$((450 - ($(date +%s) - start)))
[ "$left" -lt 90 ] && left=90 # the probe overran: the recorder still gets a short run
budget=$((left - 60))
[ "$budget" -gt 330 ] && budget=330
say "recorder: budget ${budget} s"
# shellcheck disable=SC2086
timeout "$left" python3 tools/h200/record.py --out "$OUT/recordings" --grid full \
  --budget-seconds "$budget" $PROBE_ARG >>"$log" 2>&1
rc=$?
say "recorder exit $rc"
[ "$rc" -eq 0 ] || status=1
ls -la "$OUT" "$OUT/recordings" >>"$log" 2>&1
say "done, exit $status"
exit $status
