#!/usr/bin/env python3
"""Summarize `go test -bench` output of several rounds: for each benchmark
and metric, the median and the range (min-max) over the rounds.

Usage: summarize.py bench.txt
Only the Python standard library is used.
"""
import re, statistics, sys
from collections import defaultdict

runs = defaultdict(lambda: defaultdict(list))
order = []
for line in open(sys.argv[1]):
    if not line.startswith("Benchmark"):
        continue
    f = line.split()
    name = re.sub(r"-\d+$", "", f[0])
    if name not in runs:
        order.append(name)
    # fields after the iteration count come in pairs: value unit
    for v, unit in zip(f[2::2], f[3::2]):
        runs[name][unit].append(float(v))

def fmt(x):
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.3e}"

units = ["MB/s", "cpu-s/op", "peak-MiB", "ns/op", "allocs/op", "B/op"]
for name in order:
    parts = []
    for u in units:
        vs = runs[name].get(u)
        if vs:
            parts.append(f"{u} {fmt(statistics.median(vs))} [{fmt(min(vs))}-{fmt(max(vs))}]")
    print(f"{name} ({len(runs[name]['ns/op'])} rounds): " + "; ".join(parts))
