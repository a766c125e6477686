#!/usr/bin/env python3
"""Interleaved end-to-end timing, as bench/interleave.sh, without GNU time.

In each round every file is read by each gpuleak binary in turn
(`analyze --format json --top 0 FILE`) and by CPython's pickle.load, so that
a machine's drift hits all alike. Per run: wall seconds, user+sys CPU seconds
and maximum RSS (from wait4), and the largest RssAnon sampled every 5 ms from
/proc (what the process allocated, without the binary's mapped pages). Prints
a line per run, then medians and ranges per file and program.

Usage: bench/interleave.py ROUNDS FILE... -- BIN...
  e.g. taskset -c 0,1 bench/interleave.py 5 big_real.pickle.gz -- ./old ./new
A .gz file is unpacked by each program (gpuleak reads gzip; pickle.load
through the gzip module). --no-python leaves pickle.load out.
--drop-caches drops the page cache before each run (root only: `sync`, then
3 to /proc/sys/vm/drop_caches), so that the binary's mapped pages are read
anew each time: RSS from them otherwise depends on how the binary reached
the cache (the kernel maps a whole large folio, or a 64 KiB window, around
each page touched), and the cold figure is the reproducible one. Wall time
then includes reading the binary and the file from disk.
--no-sample waits for each run without sampling RssAnon (reported as 0):
the sampling polls every 5 ms, too coarse a wall clock for small files.
"""
import os
import statistics
import subprocess
import sys
import time

PY = ('import gzip, pickle, sys; f = open(sys.argv[1], "rb"); gz = f.read(2) == b"\\x1f\\x8b"; '
      'f.seek(0); pickle.load(gzip.GzipFile(fileobj=f) if gz else f)')


def run(argv, sample=True):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    anon = 0
    if not sample:
        pid, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            sys.exit(f"{argv}: exit status {status}")
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, 0.0
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{argv}: exit status {status}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, anon / 1024


def main():
    args = sys.argv[1:]
    python = "--no-python" not in args
    drop = "--drop-caches" in args
    sample = "--no-sample" not in args
    args = [a for a in args if a not in ("--no-python", "--drop-caches", "--no-sample")]
    rounds = int(args[0])
    sep = args.index("--")
    files, bins = args[1:sep], args[sep + 1:]
    progs = bins + (["python"] if python else [])
    res = {}
    for r in range(1, rounds + 1):
        for f in files:
            for b in progs:
                argv = [sys.executable, "-c", PY, f] if b == "python" else [b, "analyze", "--format", "json", "--top", "0", f]
                if drop:
                    os.sync()
                    with open("/proc/sys/vm/drop_caches", "w") as dc:
                        dc.write("3\n")
                m = run(argv, sample)
                res.setdefault((os.path.basename(f), b), []).append(m)
                print(r, os.path.basename(f), b, " ".join(f"{x:.3f}" for x in m), flush=True)
    print("file program: wall s; user+sys s; max RSS MB; max RssAnon MB (median [range])")
    for (f, b), ms in res.items():
        cols = []
        for i in range(4):
            xs = [m[i] for m in ms]
            cols.append(f"{statistics.median(xs):.3g} [{min(xs):.3g}-{max(xs):.3g}]")
        print(f"{f} {b}: " + "; ".join(cols))


if __name__ == "__main__":
    main()
