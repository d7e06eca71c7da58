#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Records torch._scaled_mm calls on a GPU as mmaemu-recording/1 files (docs/h200.md).

Runs on the device with its own python3, torch and h5py (no project library there): defines the
grid of issue #12 as data, calls the real torch._scaled_mm on seeded operands, and writes
recordings of kind gemm_call in the exact layout of docs/recordings.md and
recordings/src/recording_write.cpp, with the provenance of the run.

    record.py --out DIR [--grid full|small] [--seed S] [--budget-seconds T]
              [--probe PROBE.json] [--fake-device --mmaemu PATH/TO/mmaemu]

--fake-device computes the outputs with mmaemu's CPU reference (`mmaemu recordings fill`)
instead of torch, so that the grid, the operands, the writer and the provenance of this script
are exercised where there is no GPU (the files it writes say device = fake; they are test data,
never hardware truth, and must not be committed under recordings/data/h200/).

Outputs too large to keep whole (more than --keep-elements elements, e.g. the Evo 2 1B
projections) are not written into the recordings: their operands are regenerated from the seed
by the generator below (splitmix64, easy to reproduce in C++), and digests.json holds the
sha256 of the full output bytes plus some rows and columns (docs/h200.md: not yet replayed).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FORMAT = "mmaemu-recording/1"
MAX_FILES = 8
MAX_FILE_BYTES = 16 << 20
FILE_TARGET_BYTES = 14 << 20  # uncompressed payload per file: below MAX_FILE_BYTES whatever
#                               the compression does

# dtype names of docs/recordings.md (mmaemu Format names) and torch's
TORCH_DTYPE = {
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
}
WIDTH = {"e4m3": 8, "e5m2": 8, "fp16": 16, "bf16": 16, "fp32": 32}

# Scales as binary32 bits: 1, powers of two, others.
SCALE_ONE = 0x3F800000
SCALES_POW2 = [0x3D800000, 0x41000000]  # 2^-4, 8
SCALES_OTHER = [0x3E99999A, 0x3FD9999A]  # 0.3, 1.7 (rounded to binary32)
SCALE_RESULTS = [0x3F000000, 0x40400000]  # 0.5, 3

# ---------------------------------------------------------------------------------------------
# Operands: a counter-based generator, so that any tool can regenerate them from the seed.

MASK64 = (1 << 64) - 1


def splitmix64(x):
    """splitmix64 of a uint64 array (numpy, wrapping arithmetic)."""
    z = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(MASK64)
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & np.uint64(MASK64)
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & np.uint64(MASK64)
    return z ^ (z >> np.uint64(31))


def finite_codes(fmt):
    """The finite codes of an FP8 format (no NaN, no infinity)."""
    c = np.arange(256, dtype=np.uint32)
    if fmt == "e4m3":
        ok = (c & 0x7F) != 0x7F
    else:
        ok = (c & 0x7C) != 0x7C
    return c[ok].astype(np.uint8)


# Codes the grid mixes in: subnormals, the largest finite values, -0 (e4m3: +-448).
SPECIAL_CODES = {
    "e4m3": [0x01, 0x02, 0x07, 0x81, 0x87, 0x7E, 0xFE, 0x80, 0x08, 0x88],
    "e5m2": [0x01, 0x03, 0x81, 0x83, 0x7B, 0xFB, 0x80, 0x04, 0x84],
}


def operand_codes(fmt, n, seed, stream, pattern):
    """n FP8 codes of `fmt`: code i from splitmix64(seed * 2^32 + stream * 2^40 + i).

    pattern "random": uniform over the finite codes; "special": one in four is a special code
    (subnormal, +-max, -0); "small": codes of magnitude at most 2 (sums that stay exact)."""
    idx = np.arange(n, dtype=np.uint64)
    base = (np.uint64(seed & 0xFFFFFFFF) << np.uint64(32)) ^ (np.uint64(stream) << np.uint64(40))
    r = splitmix64(idx ^ base)
    table = finite_codes(fmt)
    if pattern == "small":
        lim = 0x40 if fmt == "e4m3" else 0x40  # exponent field below 2 in both formats
        table = np.array([c for c in table if (c & 0x7F) <= lim], dtype=np.uint8)
    out = table[(r % np.uint64(len(table))).astype(np.int64)]
    if pattern == "special":
        sp = np.array(SPECIAL_CODES[fmt], dtype=np.uint8)
        pick = ((r >> np.uint64(32)) & np.uint64(3)) == 0
        out = np.where(pick, sp[((r >> np.uint64(40)) % np.uint64(len(sp))).astype(np.int64)], out)
    return out.astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# The grid, as data.

OUT_DTYPES = ["fp32", "bf16", "fp16", "e4m3"]
PAIRS = [("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")]

# (set, M, N, K, pattern): shapes from 16^3 through the K where split-K is likely, the Evo 2 1B
# projections and their transposes, decoding (M in {1, 16}).
SHAPES_FULL = [
    ("tiny", 16, 16, 16, "special"),
    ("tiny", 16, 16, 16, "random"),
    ("k128", 64, 64, 128, "special"),
    ("k128", 1, 32, 128, "random"),
    ("k256", 128, 128, 256, "random"),
    ("k256", 16, 64, 256, "special"),
    ("k4096", 64, 64, 4096, "random"),
    ("k4096", 16, 128, 4096, "special"),
    ("k4096", 1, 256, 4096, "random"),
    ("k16384", 32, 32, 16384, "random"),
    ("k16384", 128, 128, 16384, "small"),
    ("k16384", 1, 64, 16384, "special"),
    ("evo2_decode", 1, 5760, 1920, "random"),
    ("evo2_decode", 16, 5760, 1920, "random"),
    ("evo2_decode", 16, 1920, 5760, "random"),
    ("evo2", 2048, 5760, 1920, "random"),
    ("evo2", 5760, 2048, 1920, "random"),
    ("evo2", 2048, 1920, 5760, "random"),
]
SHAPES_SMALL = [
    ("tiny", 16, 16, 16, "special"),
    ("k128", 1, 32, 128, "random"),
    ("k128", 16, 32, 64, "random"),
]


# Large operands are stored once per call, so the sets of large K and the Evo 2 shapes get fewer
# scale variants (and the Evo 2 shapes one dtype pair): the files stay within 8 x 16 MiB.
FEW_SCALES = {"k4096", "k16384", "evo2_decode", "evo2"}
ONE_PAIR = {"evo2_decode", "evo2"}


def scale_sets(grid, tag=""):
    """(scale_a, scale_b, scale_results) triples each shape is called with."""
    if grid == "small":
        return [(SCALE_ONE, SCALE_ONE, [None]), (SCALES_POW2[0], SCALES_OTHER[1], [None, 0x40400000])]
    if tag == "k4096":
        return [(SCALE_ONE, SCALE_ONE, [None, SCALE_RESULTS[0]]),
                (SCALES_OTHER[0], SCALES_OTHER[1], [None])]
    if tag in FEW_SCALES:
        return [(SCALE_ONE, SCALE_ONE, [None])]
    return [
        (SCALE_ONE, SCALE_ONE, [None, SCALE_RESULTS[0]]),
        (SCALES_POW2[0], SCALES_POW2[1], [None]),
        (SCALES_OTHER[0], SCALES_OTHER[1], [None, SCALE_RESULTS[1]]),
    ]


def scalar_f32(bits):
    return {"dtype": "fp32", "shape": [], "bits": ["0x%08x" % bits]}


class Call:
    """One gemm_call: operands (storages), the description, the outputs to record."""

    def __init__(self, cid, M, N, K, fa, fb, pattern, seed, stream, sa, sb, sr, bias=None):
        self.id, self.M, self.N, self.K = cid, M, N, K
        self.fa, self.fb, self.pattern, self.seed, self.stream = fa, fb, pattern, seed, stream
        self.sa, self.sb, self.sr, self.bias = sa, sb, sr, bias
        self.outputs = []  # dicts: name, out_dtype (None: default), fast, splitk
        self.results = {}  # output name -> {"bits": np.uint32 array, "shape"} or {"error", ...}
        self.attrs = {}

    def storages(self):
        a = operand_codes(self.fa, self.M * self.K, self.seed, self.stream, self.pattern)
        b = operand_codes(self.fb, self.N * self.K, self.seed, self.stream + 1, self.pattern)
        return a, b  # a: [M][K] row-major; b: [N][K] row-major (mat2 = b.t(), column-major)

    def description(self):
        d = {
            "M": self.M, "N": self.N, "K": self.K,
            "input": {"dtype": self.fa, "shape": [self.M, self.K], "strides": [self.K, 1],
                      "offset": 0},
            "mat2": {"dtype": self.fb, "shape": [self.K, self.N], "strides": [1, self.K],
                     "offset": 0},
            "scale_a": scalar_f32(self.sa),
            "scale_b": scalar_f32(self.sb),
            "profile": "h200",
        }
        if self.sr is not None:
            d["scale_result"] = scalar_f32(self.sr)
        if self.bias is not None:
            d["bias"] = {"dtype": self.bias, "shape": [self.N]}
        return d

    def out_elements(self):
        return self.M * self.N


def build_grid(grid, seed, rejects=True):
    calls = []
    stream = 0
    shapes = SHAPES_SMALL if grid == "small" else SHAPES_FULL
    for (tag, M, N, K, pattern) in shapes:
        for (fa, fb) in (PAIRS[:1] if tag in ONE_PAIR else PAIRS):
            for (sa, sb, srs) in scale_sets(grid, tag):
                for sr in srs:
                    stream += 2
                    cid = "%s/%dx%dx%d_%s_%sx%s_sa%08x_sb%08x_sr%s" % (
                        tag, M, N, K, pattern, fa, fb, sa, sb, "none" if sr is None else "%08x" % sr)
                    c = Call(cid, M, N, K, fa, fb, pattern, seed, stream, sa, sb, sr)
                    dts = OUT_DTYPES if sr is None else ["e4m3", "bf16"]
                    for dt in dts:
                        for fast in (False, True):
                            c.outputs.append({"name": "%s_%s" % (dt, "fast" if fast else "slow"),
                                              "out_dtype": dt, "fast": fast, "splitk": "1"})
                    if sr is None and (fa, fb) != ("e4m3", "e4m3"):
                        c.outputs.append({"name": "e5m2_slow", "out_dtype": "e5m2", "fast": False,
                                          "splitk": "1"})
                    if sr is None and (sa, sb) == (SCALE_ONE, SCALE_ONE):
                        c.outputs.append({"name": "default_slow", "out_dtype": None,
                                          "fast": False, "splitk": "1"})
                    calls.append(c)
            if grid == "small":
                break  # one pair per shape in the small grid; the rejects cover the others
    if rejects:
        # The calls torch rejects: e5m2 x e5m2, e4m3 x e4m3 -> e5m2, the bias rules.
        rej = []
        stream += 2
        c = Call("rejects/e5m2xe5m2", 16, 16, 32, "e5m2", "e5m2", "random", seed, stream,
                 SCALE_ONE, SCALE_ONE, None)
        c.outputs = [{"name": "bf16_slow", "out_dtype": "bf16", "fast": False, "splitk": "1"}]
        rej.append(c)
        stream += 2
        c = Call("rejects/e4m3xe4m3_to_e5m2", 16, 16, 32, "e4m3", "e4m3", "random", seed,
                 stream, SCALE_ONE, SCALE_ONE, None)
        c.outputs = [{"name": "e5m2_slow", "out_dtype": "e5m2", "fast": False, "splitk": "1"},
                     {"name": "e5m2_fast", "out_dtype": "e5m2", "fast": True, "splitk": "1"}]
        rej.append(c)
        for bias, dts in (("bf16", ["fp32", "fp16"]), ("fp16", ["fp32", "bf16"])):
            stream += 2
            c = Call("rejects/bias_%s" % bias, 16, 16, 32, "e4m3", "e4m3", "random", seed, stream,
                     SCALE_ONE, SCALE_ONE, None, bias=bias)
            c.outputs = [{"name": "%s_slow" % dt, "out_dtype": dt, "fast": False, "splitk": "1"}
                         for dt in dts]
            rej.append(c)
        for c in rej:
            c.attrs["expect_rejected"] = "ReferenceRejectsError"
        calls.extend(rej)
    return calls


# ---------------------------------------------------------------------------------------------
# Backends: torch on the GPU, or mmaemu's reference (the fake device).

def to_bits(t, dt):
    """A torch tensor's element bits as uint32 (low bits for 8/16-bit dtypes)."""
    import torch
    w = WIDTH[dt]
    view = {8: torch.uint8, 16: torch.int16, 32: torch.int32}[w]
    raw = t.contiguous().cpu().view(view).numpy()
    mask = (1 << w) - 1
    return (raw.astype(np.int64) & mask).astype(np.uint32).reshape(-1), raw.tobytes()


def dtype_of(torch, name):
    return getattr(torch, TORCH_DTYPE[name])


def sampled(bits, shape):
    """Some rows and columns of a large output (first, second, middle, last)."""
    M, N = shape
    b = bits.reshape(M, N)
    rows = sorted({0, min(1, M - 1), M // 2, M - 1})
    cols = sorted({0, min(1, N - 1), N // 2, N - 1})
    return ({str(r): ["0x%x" % v for v in b[r]] for r in rows},
            {str(k): ["0x%x" % v for v in b[:, k]] for k in cols})


def run_torch(calls, deadline, log, keep_elements=None):
    import torch
    dev = torch.device("cuda")
    done = []
    for c in calls:
        if time.monotonic() > deadline:
            log("budget: stopped before %s" % c.id)
            break
        a_np, b_np = c.storages()
        a = torch.from_numpy(a_np).to(dev).view(dtype_of(torch, c.fa)).reshape(c.M, c.K)
        b = torch.from_numpy(b_np).to(dev).view(dtype_of(torch, c.fb)).reshape(c.N, c.K)
        mat2 = b.t()

        def scalar(bits):
            f = np.array([bits], dtype=np.uint32).view(np.float32)
            return torch.from_numpy(f.copy()).reshape(()).to(dev)

        sa, sb = scalar(c.sa), scalar(c.sb)
        sr = scalar(c.sr) if c.sr is not None else None
        bias = (torch.zeros(c.N, dtype=dtype_of(torch, c.bias), device=dev)
                if c.bias is not None else None)
        for o in c.outputs:
            kw = dict(scale_a=sa, scale_b=sb, bias=bias, scale_result=sr,
                      use_fast_accum=o["fast"])
            if o["out_dtype"] is not None:
                kw["out_dtype"] = dtype_of(torch, o["out_dtype"])
            try:
                r = torch._scaled_mm(a, mat2, **kw)
                torch.cuda.synchronize()
                odt = o["out_dtype"] or c.fa
                bits, raw = to_bits(r, odt)
                res = {"bits": bits, "shape": list(r.shape),
                       "sha256": hashlib.sha256(raw).hexdigest()}
                if keep_elements is not None and bits.size > keep_elements:
                    # Only the digest and samples stay in memory (an Evo 2 output is 47 MB).
                    res["rows"], res["cols"] = sampled(bits, res["shape"])
                    del res["bits"]
                c.results[o["name"]] = res
            except Exception as e:  # torch raises RuntimeError (and others): record them
                c.results[o["name"]] = {"error": c.attrs.get("expect_rejected",
                                                             "ReferenceRejectsError"),
                                        "torch_class": type(e).__name__,
                                        "torch_text": str(e)[:4000]}
        done.append(c)
    return done


def run_fake(calls, deadline, mmaemu, log):
    """The outputs of mmaemu's reference: the calls are written as a request recording by this
    script's own writer, `mmaemu recordings fill` computes them, and the answers come back as
    JSON (bits, or the error class)."""
    todo = []
    for c in calls:
        if time.monotonic() > deadline:
            log("budget: stopped before %s" % c.id)
            break
        for o in c.outputs:  # empty placeholders, replaced by fill's answers
            c.results[o["name"]] = {"bits": np.zeros(0, dtype=np.uint32), "shape": [c.M, c.N]}
        todo.append(c)
    with tempfile.TemporaryDirectory() as tmp:
        req = os.path.join(tmp, "request.h5")
        write_file(req, "request", todo, {"device": "fake", "pending": "true"})
        ans = os.path.join(tmp, "answer.json")
        subprocess.run([mmaemu, "recordings", "fill", req, "--json", ans], check=True)
        with open(ans) as f:
            answers = json.load(f)
    for c in todo:
        for o in c.outputs:
            a = answers["%s/%s" % (c.id, o["name"])]
            if "error" in a:
                c.results[o["name"]] = {"error": a["error"], "torch_class": "none (fake device)",
                                        "torch_text": a.get("message", "")}
            else:
                bits = np.array([int(x, 16) for x in a["bits"]], dtype=np.uint32)
                odt = o["out_dtype"] or c.fa
                raw = bits.astype({8: "<u1", 16: "<u2", 32: "<u4"}[WIDTH[odt]]).tobytes()
                c.results[o["name"]] = {"bits": bits, "shape": a["shape"],
                                        "sha256": hashlib.sha256(raw).hexdigest()}
    return todo


# ---------------------------------------------------------------------------------------------
# The writer: the layout of recordings/src/recording_write.cpp (write_gemm_call), with h5py.

def write_array(h5py, g, name, data):
    data = np.ascontiguousarray(data)
    if data.size == 0:
        g.create_dataset(name, shape=data.shape, dtype=data.dtype)
        return
    rows = max(1, min(data.shape[0], 4096, (1 << 20) // max(1, data.dtype.itemsize)))
    g.create_dataset(name, data=data, chunks=(rows,), shuffle=True, compression="gzip",
                     compression_opts=6)


def set_attrs(obj, attrs):
    for k, v in sorted(attrs.items()):
        obj.attrs[k] = str(v)


def write_file(path, set_prefix, calls, root_attrs):
    """One recording: a batch (kind gemm_call) per set tag; written to a temporary name beside
    `path`, then renamed."""
    import h5py
    tmp = path + ".tmp%d" % os.getpid()
    try:
        with h5py.File(tmp, "w") as f:
            attrs = dict(root_attrs)
            attrs["format"] = FORMAT
            attrs.setdefault("created_by", "tools/h200/record.py")
            set_attrs(f, attrs)
            cases = f.create_group("cases")
            batches = {}
            for c in calls:
                batches.setdefault(c.id.split("/")[0], []).append(c)
            for tag, bcalls in sorted(batches.items()):
                g = cases.create_group("%s_%s" % (set_prefix, tag))
                set_attrs(g, {"kind": "gemm_call", "count": len(bcalls), "profile": "h200"})
                for i, c in enumerate(bcalls):
                    cg = g.create_group("%06d" % i)
                    a_np, b_np = c.storages()
                    ca = dict(c.attrs)
                    ca.update({"id": c.id, "call": json.dumps(c.description(), sort_keys=True),
                               "outputs": len(c.outputs), "seed": c.seed,
                               "operand_streams": "%d,%d" % (c.stream, c.stream + 1),
                               "pattern": c.pattern})
                    for o in c.outputs:
                        res = c.results[o["name"]]
                        if "sha256" in res:
                            ca["sha256:" + o["name"]] = res["sha256"]
                        if "torch_class" in res:
                            ca["torch_error:" + o["name"]] = "%s: %s" % (res["torch_class"],
                                                                          res["torch_text"])
                    set_attrs(cg, ca)
                    write_array(h5py, cg, "input_storage", a_np)
                    write_array(h5py, cg, "mat2_storage", b_np)
                    for k, o in enumerate(c.outputs):
                        og = cg.create_group("out%03d" % k)
                        res = c.results[o["name"]]
                        oa = {"name": o["name"], "out_dtype": o["out_dtype"] or "default",
                              "fast": "true" if o["fast"] else "false", "splitk": o["splitk"]}
                        if "error" in res:
                            oa["shape"] = ""
                            oa["expect_error"] = res["error"]
                            set_attrs(og, oa)
                        else:
                            oa["shape"] = ",".join(str(x) for x in res["shape"])
                            set_attrs(og, oa)
                            write_array(h5py, og, "expect", res["bits"].astype("<u4"))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def payload_bytes(c):
    n = c.M * c.K + c.N * c.K
    return n + 4 * c.out_elements() * len(c.outputs) + 4096


# ---------------------------------------------------------------------------------------------
# Provenance.

def git_commit():
    if os.environ.get("MMAEMU_COMMIT"):
        return os.environ["MMAEMU_COMMIT"]
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:
        return "unknown"


def cublaslt_version():
    import ctypes
    for name in ("libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12"):
        try:
            lib = ctypes.CDLL(name)
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            return "%d (%s)" % (lib.cublasLtGetVersion(), name)
        except Exception:
            continue
    return "unknown"


def provenance(args, fake):
    p = {"source": "tools/h200/record.py: torch._scaled_mm on the device",
         "licence": "BSD-2-Clause", "recorder_commit": git_commit(), "seed": args.seed,
         "grid": args.grid, "python": sys.version.split()[0]}
    if fake:
        p.update({"device": "fake", "gpu": "none (fake device: mmaemu reference outputs)",
                  "source": "tools/h200/record.py --fake-device: mmaemu's reference, not hardware"})
        return p
    import torch
    props = torch.cuda.get_device_properties(0)
    p.update({"device": "cuda", "gpu": torch.cuda.get_device_name(0),
              "sm_count": props.multi_processor_count,
              "capability": "%d.%d" % (props.major, props.minor),
              "torch": torch.__version__, "cuda": str(torch.version.cuda),
              "cublaslt": cublaslt_version(),
              "workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG", "default")})
    try:
        p["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                                      "--format=csv,noheader"], capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[0]
    except Exception:
        p["driver"] = "unknown"
    return p


# ---------------------------------------------------------------------------------------------

def apply_probe(calls, probe_path):
    """Per output, the split-K the probe saw cuBLASLt choose (tools/h200/splitk_probe): S = 1
    replays as "1"; S > 1 as "S,contiguous" (the profile's scheme; a modelling decision that
    these recordings are to confirm or refute)."""
    with open(probe_path) as f:
        probe = json.load(f)
    by_key = {}
    for q in probe.get("queries", []):
        by_key[(q["M"], q["N"], q["K"], q["a"], q["b"], q["out"], q["fast"])] = q
    for c in calls:
        for o in c.outputs:
            q = by_key.get((c.M, c.N, c.K, c.fa, c.fb, o["out_dtype"] or c.fa, o["fast"]))
            if q and q.get("ok"):
                s = int(q["splitk_num"])
                o["splitk"] = "1" if s <= 1 else "%d,contiguous" % s
                c.attrs["cublaslt:" + o["name"]] = "splitk=%d reduction=%s tile=%s stages=%s" % (
                    s, q["reduction_scheme"], q["tile_id"], q["stages_id"])


def check_digests(path, mmaemu, log):
    """Replays digests.json: the operands regenerated from the seed, the outputs recomputed by
    mmaemu's reference (`mmaemu recordings fill --digest-over 0`), their sha256 compared with
    the recorded one. Returns (passed, failed)."""
    with open(path) as f:
        dig = json.load(f)
    calls = {}
    for e in dig["outputs"]:
        cid, oname = e["id"].rsplit("/", 1)
        d = e["call"]
        if cid not in calls:
            sr = d.get("scale_result")
            c = Call(cid, d["M"], d["N"], d["K"], d["input"]["dtype"], d["mat2"]["dtype"],
                     e["pattern"], e["seed"], e["streams"][0], int(d["scale_a"]["bits"][0], 16),
                     int(d["scale_b"]["bits"][0], 16),
                     int(sr["bits"][0], 16) if sr else None,
                     bias=d["bias"]["dtype"] if d.get("bias") else None)
            calls[cid] = c
        c = calls[cid]
        c.outputs.append({"name": oname, "out_dtype": e["out_dtype"], "fast": e["fast"],
                          "splitk": e["splitk"], "entry": e})
        c.results[oname] = {"bits": np.zeros(0, dtype=np.uint32), "shape": [c.M, c.N]}
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        req = os.path.join(tmp, "request.h5")
        write_file(req, "digests", list(calls.values()), {"device": "fake", "pending": "true"})
        ans = os.path.join(tmp, "answer.json")
        subprocess.run([mmaemu, "recordings", "fill", req, "--json", ans, "--digest-over", "0"],
                       check=True)
        with open(ans) as f:
            answers = json.load(f)
    for c in calls.values():
        for o in c.outputs:
            e, a = o["entry"], answers["%s/%s" % (c.id, o["name"])]
            if "error" in e or "error" in a:
                ok = e.get("error") == a.get("error")
                what = "error %s, reference %s" % (e.get("error"), a.get("error"))
            else:
                ok = a["sha256"] == e["sha256"] and list(a["shape"]) == list(e["shape"])
                what = "sha256 %s, reference %s" % (e["sha256"][:16], a["sha256"][:16])
            log("%s %s: %s" % ("PASS" if ok else "FAIL", e["id"], what))
            passed += ok
            failed += not ok
    log("%d passed, %d failed" % (passed, failed))
    return passed, failed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the recordings and run.json")
    ap.add_argument("--grid", choices=["full", "small"], default="full")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--budget-seconds", type=float, default=420.0,
                    help="stop starting calls after this many seconds (one device run < 8 min)")
    ap.add_argument("--keep-elements", type=int, default=1 << 20,
                    help="outputs with more elements go to digests.json (sha256 + samples)")
    ap.add_argument("--max-total-mib", type=float, default=18.0,
                    help="payload of all files together (T1's data budget is 20 MiB): calls "
                         "beyond it, in grid order, go to digests.json")
    ap.add_argument("--probe", help="the split-K probe's JSON: record its S per output")
    ap.add_argument("--fake-device", action="store_true",
                    help="compute outputs with mmaemu's reference (no GPU, no torch)")
    ap.add_argument("--mmaemu", default="build/harness/mmaemu", help="for --fake-device")
    ap.add_argument("--emit-probe-queries", metavar="FILE",
                    help="write the grid's calls as the split-K probe's query lines and exit")
    ap.add_argument("--check-digests", metavar="DIGESTS_JSON",
                    help="replay a digests.json through mmaemu's reference (--mmaemu) and exit")
    ap.add_argument("--prefix", default="h200", help="file and set name prefix")
    args = ap.parse_args(argv)

    if args.fake_device and "recordings/data/h200" in os.path.abspath(args.out).replace(os.sep, "/"):
        ap.error("--fake-device writes test data, never under recordings/data/h200 (hardware only)")
    t0 = time.monotonic()
    deadline = t0 + args.budget_seconds
    os.makedirs(args.out, exist_ok=True)
    log_lines = []

    def log(msg):
        log_lines.append(msg)
        print("record: " + msg, flush=True)

    if args.check_digests:
        _, failed = check_digests(args.check_digests, args.mmaemu, log)
        return 1 if failed else 0
    calls = build_grid(args.grid, args.seed)
    if args.emit_probe_queries:
        lines = set()
        for c in calls:
            if "expect_rejected" in c.attrs:
                continue  # torch rejects these before cuBLASLt is asked
            for o in c.outputs:
                lines.add("%d %d %d %s %s %s %d %d" % (c.M, c.N, c.K, c.fa, c.fb,
                                                     o["out_dtype"] or c.fa, int(o["fast"]),
                                                     int(c.sr is not None)))
        with open(args.emit_probe_queries, "w") as f:
            f.write("# M N K a b out fast scale_result (tools/h200/record.py, grid %s)\n" % args.grid)
            f.write("".join(l + "\n" for l in sorted(lines)))
        print("record: %d probe queries written to %s" % (len(lines), args.emit_probe_queries))
        return 0
    if args.probe:
        apply_probe(calls, args.probe)
    big = [c for c in calls if c.out_elements() > args.keep_elements]
    kept = [c for c in calls if c.out_elements() <= args.keep_elements]
    if args.fake_device:
        fake = run_fake(kept + big, deadline, args.mmaemu, log)
        done = [c for c in fake if c.out_elements() <= args.keep_elements]
        big_done = [c for c in fake if c.out_elements() > args.keep_elements]
    else:
        done = run_torch(kept, deadline, log)
        big_done = run_torch(big, deadline, log, keep_elements=args.keep_elements)

    prov = provenance(args, args.fake_device)
    # Files: calls in grid order, a new file when the payload would pass FILE_TARGET_BYTES.
    files, cur, cur_bytes = [], [], 0
    total, overflow = 0, []
    for c in done:
        b = payload_bytes(c)
        if total + b > args.max_total_mib * (1 << 20):
            overflow.append(c)  # beyond the data budget: digest and samples only
            continue
        total += b
        if cur and cur_bytes + b > FILE_TARGET_BYTES:
            files.append(cur)
            cur, cur_bytes = [], 0
        cur.append(c)
        cur_bytes += b
    if cur:
        files.append(cur)
    if len(files) > MAX_FILES:
        log("more than %d files: %d calls left out" % (
            MAX_FILES, sum(len(f) for f in files[MAX_FILES:])))
        files = files[:MAX_FILES]
    written = []
    for i, fc in enumerate(files):
        path = os.path.join(args.out, "%s_%02d.h5" % (args.prefix, i))
        write_file(path, args.prefix, fc, dict(prov, file_index="%d/%d" % (i, len(files))))
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            log("%s is %d bytes, over the limit of %d" % (path, size, MAX_FILE_BYTES))
            os.unlink(path)
            continue
        written.append({"file": os.path.basename(path), "bytes": size, "calls": len(fc)})

    if overflow:
        log("%d calls over --max-total-mib %.1f go to digests.json" % (len(overflow),
                                                                       args.max_total_mib))
    digests = []
    for c in big_done + overflow:
        for o in c.outputs:
            res = c.results[o["name"]]
            if "bits" in res and "rows" not in res:
                res["rows"], res["cols"] = sampled(res["bits"], res["shape"])
            d = {"id": "%s/%s" % (c.id, o["name"]), "call": c.description(), "seed": c.seed,
                 "streams": [c.stream, c.stream + 1], "pattern": c.pattern,
                 "out_dtype": o["out_dtype"], "fast": o["fast"], "splitk": o["splitk"]}
            if "error" in res:
                d.update({"error": res["error"], "torch_class": res["torch_class"],
                          "torch_text": res["torch_text"]})
            else:
                d.update({"shape": res["shape"], "sha256": res["sha256"],
                          "rows": res["rows"], "cols": res["cols"]})
            digests.append(d)
    if digests:
        with open(os.path.join(args.out, "digests.json"), "w") as f:
            json.dump({"format": "mmaemu-h200-digests/0 (not yet replayed)",
                       "provenance": prov, "outputs": digests}, f)

    run = {"provenance": prov, "files": written, "digested_calls": len(big_done) + len(overflow), "calls": len(done) + len(big_done),
           "grid_calls": len(calls), "seconds": round(time.monotonic() - t0, 3),
           "log": log_lines}
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump(run, f, indent=1, sort_keys=True)
    log("%d calls recorded into %d files in %.1f s" % (len(done) + len(big_done), len(written),
                                                        time.monotonic() - t0))
    return 0 if len(done) + len(big_done) == len(calls) else 3


if __name__ == "__main__":
    sys.exit(main())
