#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Fills a split-K table (emulator/data/splitk/<table>.json) from the split-K probe's answers.

    fill_table.py PROBE.json --table emulator/data/splitk/h200.json [--gpu NAME]

The rule is tools/h200/probe/probe_map.cpp's (table_entry_from_probe), tested there: S <= 1 ->
S 1, scheme none; S > 1 with fp32 partials (reduction compute_type, or inplace/output_type into
an fp32 output) -> S, "contiguous"; anything else (a failed query, partials in a 16-bit or FP8
output type, a scale_result query) gets no entry and is listed on stderr. Entries are never
verified: a heuristic answer is not a replayed GEMM (docs/h200.md).
"""
import argparse
import json
import os
import sys


def entry(q, version):
    if not q.get("ok") or q.get("scale_result"):
        return None, "failed query" if not q.get("ok") else "scale_result query"
    s, red, out = int(q["splitk_num"]), q["reduction_scheme"], q["out"]
    ev = ("cublasLtMatmulAlgoGetHeuristic (1 result, workspace %d B), cuBLASLt %s: algo %s, "
          "tile %s, stages %s, split-K %d, reduction %s" % (
              q["workspace"], version, q["algo_id"], q["tile_id"], q["stages_id"], s, red))
    e = {"M": q["M"], "N": q["N"], "K": q["K"], "a": q["a"], "b": q["b"], "out": out,
         "fast": q["fast"], "verified": False, "evidence": ev}
    if s <= 1:
        e.update({"S": 1, "scheme": "none"})
    elif red == "compute_type" or (red in ("inplace", "output_type") and out == "fp32"):
        e.update({"S": s, "scheme": "contiguous"})
    else:
        return None, "split-K %d with reduction %s into %s is not modelled" % (s, red, out)
    return e, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe")
    ap.add_argument("--table", required=True)
    ap.add_argument("--gpu", default="NVIDIA H200")
    args = ap.parse_args()
    probe = json.load(open(args.probe))
    table = json.load(open(args.table))
    entries, skipped = {}, 0
    for q in probe["queries"]:
        e, why = entry(q, probe.get("cublaslt_version", "?"))
        if e is None:
            if why != "scale_result query":
                print("no entry for %s: %s" % (json.dumps(q, sort_keys=True), why),
                      file=sys.stderr)
                skipped += 1
            continue
        entries[(e["M"], e["N"], e["K"], e["a"], e["b"], e["out"], e["fast"])] = e
    table["entries"] = [entries[k] for k in sorted(entries)]
    table["note"] = ("cuBLASLt heuristic answers on %s (tools/h200/splitk_probe, %d entries, %d "
                     "queries without an entry); not replayed: verified false" % (
                         args.gpu, len(entries), skipped))
    tmp = args.table + ".tmp"
    with open(tmp, "w") as f:
        json.dump(table, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.table)
    print("%s: %d entries, %d queries without an entry" % (args.table, len(entries), skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
